"""Leaving a LabNet kills what was left running in its hosts' network namespaces, also a process
entered into a host from outside (mnexec -a, as MPI's launcher starts its remote proxies), which
is no child of the lab's and used to outlive an interrupted run. Root: Mininet."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from lanes.emu.net import LabNet, netns_inode
from lanes.emu.topo import build
from p4rt_util import bench_module

vethns = bench_module("vethns")

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(not vethns.is_root(), reason="needs root for network namespaces"),
]


def test_a_process_entered_into_a_host_is_killed_when_the_network_stops(tmp_path: Path) -> None:
    topo = build("star", 10)
    stray = None
    try:
        with LabNet(topo, backend="linux-htb", out_dir=tmp_path) as net:
            host = net.host(next(iter(topo.hosts)))
            stray = subprocess.Popen(["mnexec", "-a", str(host.pid), "sleep", "600"], start_new_session=True)
            # mnexec enters the namespace after it starts: wait until it is in (a busy machine is slow)
            deadline = time.monotonic() + 30
            while netns_inode(stray.pid) != netns_inode(host.pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert netns_inode(stray.pid) == netns_inode(host.pid), "mnexec never entered the host"
            outside = subprocess.Popen(["sleep", "600"], start_new_session=True)  # the root namespace's
        assert stray.wait(timeout=30) == -9
        assert outside.poll() is None  # only the hosts' namespaces are emptied
    finally:
        for p in (stray, locals().get("outside")):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()

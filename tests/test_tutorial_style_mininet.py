"""A P4-tutorial-style run, start to end, under bmv2's and p4c's names: the program is compiled
with `p4c-bm2-ss` as the tutorials' Makefile does, a Mininet switch node starts
`simple_switch_grpc` with the arguments the tutorials' P4RuntimeSwitch passes (`--pcap DIR`,
`--nanolog ipc://...`, `--device-id`, `--no-p4`, `--log-console`, `--thrift-port`, and
`--grpc-server-addr` after `--`) and its output in logs/s1.log, links shaped by Mininet's `bw`,
the pipeline and entries pushed by p4runtime-shell, then h1 pings h2.

Checked: the pings cross, pcaps are named by interface as bmv2 names them, and the switch paces
its ports at the links' `bw` it found in the kernel (said in the log). Mininet's nodes, links
and the switch process are stopped and removed after, also on failure."""

from __future__ import annotations

import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from netns import LANES, REPO, is_root

pytestmark = [pytest.mark.root, pytest.mark.skipif(not is_root(), reason="needs root for Mininet")]

BIN = Path(sys.executable).parent
SHELL_PY = REPO / ".venv-p4rt-shell" / "bin" / "python"
SHELL_CLIENT = REPO / "tests" / "p4rt_clients" / "shell_client.py"
THRIFT, GRPC = "9097", "127.0.0.1:50097"
BW_MBPS = 10


def pcap_records(path: Path) -> int:
    data = path.read_bytes()
    n, at = 0, 24  # global header
    while at + 16 <= len(data):
        (incl,) = struct.unpack_from("<I", data, at + 8)
        at += 16 + incl
        n += 1
    return n


def wait_ready(log: Path, deadline_s: float = 60) -> None:
    end = time.monotonic() + deadline_s
    while True:
        r = subprocess.run([LANES, "ctl", "--thrift-port", THRIFT, "-c", "p4runtime_stats"],
                           capture_output=True, text=True, check=False)  # fmt: skip
        if r.returncode == 0:
            return
        assert time.monotonic() < end, log.read_text() if log.exists() else "no switch log"
        time.sleep(0.3)


def test_tutorial_style_run(tmp_path: Path) -> None:
    from mininet.link import TCLink
    from mininet.net import Mininet
    from mininet.node import Switch
    from mininet.topo import Topo

    if not SHELL_PY.exists():
        pytest.fail("p4runtime-shell venv missing: run `make setup`")
    build, pcaps, logs = tmp_path / "build", tmp_path / "pcaps", tmp_path / "logs"
    for d in (build, pcaps, logs):
        d.mkdir()
    p4info, bmv2_json = build / "p4rt_test.p4.p4info.txt", build / "p4rt_test.json"
    r = subprocess.run([str(BIN / "p4c-bm2-ss"), "--p4v", "16", "--p4runtime-files", str(p4info), "-o",
                        str(bmv2_json), str(REPO / "p4" / "p4rt_test.p4")],
                       capture_output=True, text=True, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr

    class TutorialSwitch(Switch):
        """simple_switch_grpc started as the tutorials' P4RuntimeSwitch starts it."""

        proc: subprocess.Popen | None = None

        def start(self, controllers: list) -> None:
            ports = [a for i, intf in self.intfs.items() if i > 0 for a in ("-i", f"{i}@{intf.name}")]
            cmd = [str(BIN / "simple_switch_grpc"), *ports, "--pcap", str(pcaps), "--nanolog",
                   f"ipc://{tmp_path}/bm-0-log.ipc", "--device-id", "0", "--no-p4", "--log-console",
                   "--thrift-port", THRIFT, "--", "--grpc-server-addr", GRPC]  # fmt: skip
            with open(logs / f"{self.name}.log", "w") as out:
                self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)

        def stop(self, deleteIntfs: bool = True) -> None:  # noqa: N803 (Mininet's name)
            if self.proc is not None and self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(30)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            super().stop(deleteIntfs)

    class TwoHosts(Topo):
        def build(self) -> None:
            s1 = self.addSwitch("s97", dpid="97")
            for i in (1, 2):
                h = self.addHost(f"t97h{i}", ip=f"10.0.97.{i}/24", mac=f"00:00:00:00:97:0{i}")
                self.addLink(h, s1, cls=TCLink, bw=BW_MBPS)

    net = Mininet(topo=TwoHosts(), switch=TutorialSwitch, controller=None, link=TCLink, autoSetMacs=False)
    try:
        net.start()
        h1, h2 = net.get("t97h1"), net.get("t97h2")
        sw = net.get("s97")
        log = logs / "s97.log"
        wait_ready(log)
        for a, b in ((h1, h2), (h2, h1)):
            a.setARP(b.IP(), b.MAC())
        shell = subprocess.run([str(SHELL_PY), str(SHELL_CLIENT), GRPC, str(p4info), str(bmv2_json), "setup",
                                h1.MAC(), h2.MAC()], capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
        assert shell.returncode == 0, shell.stdout + shell.stderr
        ping = h1.cmd(f"ping -c 3 -i 0.2 -W 2 {h2.IP()}")
        assert " 3 received" in ping, ping + log.read_text()
        assert sw.proc is not None and sw.proc.poll() is None, log.read_text()
    finally:
        net.stop()
    text = log.read_text()
    for port in (1, 2):
        assert f"port {port} (s97-eth{port}) at {BW_MBPS} Mb/s, the kernel's rate limit" in text, text
    # bmv2 names pcap files by interface; 3 echo requests in on port 1 and out on port 2, replies back
    for name in ("s97-eth1_in", "s97-eth2_out", "s97-eth2_in", "s97-eth1_out"):
        assert pcap_records(pcaps / f"{name}.pcap") >= 3, sorted(p.name for p in pcaps.iterdir())

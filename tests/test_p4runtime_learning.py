"""A learning switch controlled by finsy (unmodified, from PyPI) over P4Runtime, with real frames
between three network namespaces: finsy makes multicast group 1 and configures the learn_t
digest; a frame to an unknown destination floods to the other two hosts (not back to its
sender); its unknown source reaches finsy as a digest, which installs the entries that then
forward the reply to one host only; a known source is not digested again."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from netns import LANES, REPO, Star, is_root

pytestmark = [pytest.mark.root, pytest.mark.skipif(not is_root(), reason="needs root for network namespaces")]

CLIENTS = REPO / "tests" / "p4rt_clients"
ADDR = "127.0.0.1:9559"
FRAMES = [sys.executable, str(CLIENTS / "frames.py")]
ETYPE = 0x88B5


@pytest.fixture
def star(tmp_path: Path) -> Iterator[Star]:
    with Star(3) as s:
        s.start(
            s.sw,
            LANES, "switch", "-i", "1@s1-eth1", "-i", "2@s1-eth2", "-i", "3@s1-eth3", "--no-p4",
            "--thrift-port", "9090", "--", "--grpc-server-addr", ADDR,
            log=tmp_path / "switch.log",
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while s.ns(s.sw, LANES, "ctl", "-c", "p4runtime_stats", check=False).returncode != 0:
            assert time.monotonic() < deadline, (tmp_path / "switch.log").read_text()
            time.sleep(0.2)
        yield s


def receivers(star: Star, count: int, timeout: float) -> dict[int, subprocess.Popen]:
    out = {}
    for h in (1, 2, 3):
        ns = star.hosts[h - 1]
        cmd = ["ip", "netns", "exec", ns, *FRAMES, "recv", "eth0", hex(ETYPE), str(count), str(timeout)]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        star.procs.append(p)
        assert p.stdout is not None and p.stdout.readline().strip() == "listening"
        out[h] = p
    return out


def got(rx: dict[int, subprocess.Popen]) -> dict[int, int]:
    return {h: len(p.communicate(timeout=30)[0].split()) for h, p in rx.items()}


def send(star: Star, src: int, dst: int, count: int = 1) -> None:
    star.host(src, *FRAMES, "send", "eth0", star.mac(dst), star.mac(src), hex(ETYPE), str(count))


def test_finsy_learning_switch_floods_learns_and_forwards(star: Star, tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(CLIENTS / "l2_learn.py"), str(tmp_path)], check=True)
    fin = subprocess.Popen(
        [
            "ip", "netns", "exec", star.sw, sys.executable, str(CLIENTS / "finsy_learn.py"),
            ADDR, str(tmp_path / "l2_learn.p4info.txtpb"), str(tmp_path / "l2_learn.json"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    star.procs.append(fin)
    assert fin.stdout is not None
    ready = json.loads(fin.stdout.readline() or "{}")
    assert ready == {"ready": True, "groups": [[1, 2, 3]], "digests": [1]}, (
        fin.stderr.read() if fin.stderr else ""
    )
    # h1 -> h2, unknown: flooded to h2 and h3, not back to h1
    rx = receivers(star, 1, timeout=2)
    send(star, 1, 2)
    assert got(rx) == {1: 0, 2: 1, 3: 1}
    learned = json.loads(fin.stdout.readline())
    assert learned == {"learned": star.mac(1).replace(":", ""), "port": 1}
    time.sleep(0.5)  # finsy's entries written
    # h2 -> h1: h1 is known now, only h1 gets it; h2's source is learned in turn
    rx = receivers(star, 1, timeout=2)
    send(star, 2, 1)
    assert got(rx) == {1: 1, 2: 0, 3: 0}
    assert json.loads(fin.stdout.readline()) == {"learned": star.mac(2).replace(":", ""), "port": 2}
    time.sleep(0.5)
    # h1 -> h2 again: forwarded to h2 alone, and h1 (known) is not digested again
    rx = receivers(star, 3, timeout=2)
    send(star, 1, 2, count=3)
    assert got(rx) == {1: 0, 2: 3, 3: 0}
    stats = json.loads(star.ns(star.sw, LANES, "ctl", "-c", "p4runtime_stats").stdout)
    assert stats["digests_sent"] == 2, stats

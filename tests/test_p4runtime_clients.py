"""Real P4Runtime clients from PyPI, unmodified, against `lanes switch` with real frames between
network namespaces: p4runtime-shell (in its own venv, .venv-p4rt-shell) pushes p4rt_test,
writes l2_fwd and acl entries, reads entries and counters; overlapping acl entries show that the
higher priority wins; finsy wins arbitration, pushes the pipeline and does a PacketIn/PacketOut
round trip through the CPU port."""

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

SHELL_PY = REPO / ".venv-p4rt-shell" / "bin" / "python"
CLIENTS = REPO / "tests" / "p4rt_clients"
P4INFO = str(REPO / "p4" / "p4rt_test.p4info.txtpb")
JSON = str(REPO / "p4" / "p4rt_test.json")
ADDR = "127.0.0.1:9559"
FRAMES = [sys.executable, str(CLIENTS / "frames.py")]


@pytest.fixture
def star(tmp_path: Path) -> Iterator[Star]:
    with Star(2) as s:
        s.start(
            s.sw,
            LANES, "switch", "-i", "1@s1-eth1", "-i", "2@s1-eth2", "--no-p4", "--thrift-port", "9090",
            "--", "--grpc-server-addr", ADDR, "--cpu-port", "255",
            log=tmp_path / "switch.log",
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while s.ns(s.sw, LANES, "ctl", "-c", "p4runtime_stats", check=False).returncode != 0:
            assert time.monotonic() < deadline, (tmp_path / "switch.log").read_text()
            time.sleep(0.2)
        yield s


def shell(star: Star, step: str, *args: str) -> dict:
    if not SHELL_PY.exists():
        pytest.fail("p4runtime-shell venv missing: run `make setup`")
    r = star.ns(
        star.sw, str(SHELL_PY), str(CLIENTS / "shell_client.py"), ADDR, P4INFO, JSON, step, *args, check=False
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def send(star: Star, host: int, dst: str, etype: int, count: int) -> None:
    star.host(host, *FRAMES, "send", "eth0", dst, star.mac(host), hex(etype), str(count))


def receiver(star: Star, host: int, etype: int, count: int, timeout: float = 5) -> subprocess.Popen:
    p = subprocess.Popen(
        [
            "ip",
            "netns",
            "exec",
            star.hosts[host - 1],
            *FRAMES,
            "recv",
            "eth0",
            hex(etype),
            str(count),
            str(timeout),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    star.procs.append(p)
    assert p.stdout is not None and p.stdout.readline().strip() == "listening"
    return p


def received(p: subprocess.Popen) -> list[str]:
    out, _ = p.communicate(timeout=30)
    return out.split()


def test_p4runtime_shell_entries_counters_and_priorities(star: Star) -> None:
    h1, h2 = star.mac(1), star.mac(2)
    setup = shell(star, "setup", h1, h2)
    assert setup["l2_fwd"] == ["0101", "0102"]  # canonical (leading zeros dropped) read back
    assert setup["acl_priorities"] == [10, 20]
    # l2_fwd forwards h1 -> h2
    rx = receiver(star, 2, 0x1234, 5)
    send(star, 1, h2, 0x1234, 5)
    assert len(received(rx)) == 5
    # 0x88b7 matches both acl entries: priority 20 (drop) beats priority 10 (port 2)
    rx = receiver(star, 2, 0x88B7, 3, timeout=2)
    send(star, 1, h2, 0x88B7, 3)
    assert received(rx) == []
    # the direct counters say which entry matched: all 3 frames hit the priority-20 entry
    assert shell(star, "stats")["acl"] == {"10": [0, 0], "20": [3, 180]}
    assert shell(star, "delete-drop")["acl_priorities"] == [10]
    rx = receiver(star, 2, 0x88B7, 3)
    send(star, 1, h2, 0x88B7, 3)
    assert len(received(rx)) == 3
    stats = shell(star, "stats")
    # every frame h1 sent entered port 1: 5 + 3 + 3 frames of 60 bytes
    assert stats["port1"] == [11, 11 * 60]
    assert stats["acl"] == {"10": [3, 180]}  # only the entry that matched after the delete counts
    errors = shell(star, "errors", h2)
    assert errors == {"duplicate": [6], "missing": [5]}  # ALREADY_EXISTS, NOT_FOUND


def test_finsy_arbitration_pipeline_and_packet_in_out(star: Star) -> None:
    fin = subprocess.Popen(
        [
            "ip",
            "netns",
            "exec",
            star.sw,
            sys.executable,
            str(CLIENTS / "finsy_client.py"),
            ADDR,
            P4INFO,
            JSON,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    star.procs.append(fin)
    assert fin.stdout is not None
    ready = json.loads(fin.stdout.readline() or "{}")
    assert ready == {"ready": True, "acl": 1}, fin.stderr.read() if fin.stderr else ""
    rx = receiver(star, 2, 0x88B6, 1)
    send(star, 1, star.mac(2), 0x88B5, 1)  # acl: 0x88b5 -> CPU port -> PacketIn
    pin = json.loads(fin.stdout.readline())
    frame = bytes.fromhex(pin["packet_in"])
    assert pin["ingress_port"] == 1
    assert frame[:14] == bytes.fromhex(star.mac(2).replace(":", "") + star.mac(1).replace(":", "") + "88b5")
    out = received(rx)  # finsy's PacketOut (ethertype rewritten to 0x88b6) left on port 2
    assert len(out) == 1 and bytes.fromhex(out[0])[14:] == frame[14:]
    # one frame entered on port 1 (h1), one on the CPU port (the PacketOut); the acl entry hit once
    assert json.loads(fin.stdout.readline()) == {
        "done": True,
        "port_counter": {"1": 1, "255": 1},
        "acl_counter": [1],
    }
    assert fin.wait(timeout=20) == 0
    stats = json.loads(star.ns(star.sw, LANES, "ctl", "-c", "p4runtime_stats").stdout)
    assert stats["packet_ins"] == 1 and stats["packet_outs"] == 1 and stats["updates_accepted"] == 1

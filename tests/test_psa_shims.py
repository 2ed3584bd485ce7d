"""PSA through bmv2's command names, as p4c's test driver runs PSA programs (`-p`):
`p4c-bm2-psa` compiles, `psa_switch --use-files` forwards (crates/p4c/tests/data/psa_paths.p4:
etherType 1 unicast to the port in dstAddr, 2 dropped, 5 resubmitted then sent to port 3, 6 sent to
PSA_PORT_RECIRCULATE then, from that port, to port 4; egress writes the packet path, 1 for
unicast, into srcAddr's last byte). Frame in, exact frame out; bad input is one line."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from pcap_records import HEADER, pcap_bytes, read_frames

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parent.parent
PSA_PATHS = REPO / "crates" / "p4c" / "tests" / "data" / "psa_paths.p4"
L3 = REPO / "p4" / "l3_basic.p4"


def frame(dst: int, ether_type: int, path: int = 0) -> bytes:
    return dst.to_bytes(6, "big") + bytes([0x0A, 0, 0, 0, 0, path]) + ether_type.to_bytes(2, "big") + b"\xca\xfe"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_line_error(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


def test_p4c_bm2_psa_writes_psa_switchs_parsers_and_refuses_v1model(tmp_path: Path) -> None:
    out = tmp_path / "psa.json"
    r = subprocess.run([str(BIN / "p4c-bm2-psa"), "-o", str(out), str(PSA_PATHS)], capture_output=True,
                       text=True, timeout=120, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert [p["name"] for p in doc["parsers"]] == ["ingress_parser", "egress_parser"]
    assert [d["name"] for d in doc["deparsers"]] == ["ingress_deparser", "egress_deparser"]
    assert [p["name"] for p in doc["pipelines"]] == ["ingress", "egress"]
    r = subprocess.run([str(BIN / "p4c-bm2-psa"), "-o", str(tmp_path / "l3.json"), str(L3)],
                       capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert one_line_error(r).endswith("l3_basic.p4 is a v1model program")


def test_psa_switch_forwards_drops_resubmits_and_recirculates(tmp_path: Path) -> None:
    prog = tmp_path / "psa.json"
    r = subprocess.run([str(BIN / "p4c-bm2-psa"), "-o", str(prog), str(PSA_PATHS)], capture_output=True,
                       text=True, timeout=120, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr
    unicast, dropped, resubmit, recirculate = frame(2, 1), frame(2, 2), frame(9, 5), frame(9, 6)
    frames = [(1.0, unicast), (1.1, dropped), (1.2, resubmit), (1.3, recirculate)]
    (tmp_path / "p1_in.pcap").write_bytes(pcap_bytes(frames))
    for n in (2, 3, 4):
        (tmp_path / f"p{n}_in.pcap").write_bytes(HEADER)
    cmd = [str(BIN / "psa_switch"), "--use-files", "0", "--thrift-port", str(free_port()),
           "-i 1@p1", "-i 2@p2", "-i 3@p3", "-i 4@p4", str(prog)]  # fmt: skip
    sw = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    outs = {n: tmp_path / f"p{n}_out.pcap" for n in (1, 2, 3, 4)}
    deadline = time.monotonic() + 60
    try:
        while sum(len(read_frames(p)) for p in outs.values()) < 3:
            assert sw.poll() is None, sw.stdout.read() if sw.stdout else ""
            assert time.monotonic() < deadline, "gave up waiting for three frames out"
            time.sleep(0.05)
    finally:
        sw.send_signal(signal.SIGTERM)
        log, _ = sw.communicate(timeout=30)
    assert read_frames(outs[2]) == [frame(2, 1, path=1)], log
    assert read_frames(outs[3]) == [frame(9, 5, path=1)], log
    # the recirculated pass came in on PSA_PORT_RECIRCULATE, which ingress wrote into dstAddr
    assert read_frames(outs[4]) == [frame(0xFFFFFFFA, 6, path=1)], log
    assert read_frames(outs[1]) == []

"""`--tm-model bmv2`: the switch runs the model of bmv2's TM (egress queues, unpaced scheduler,
output buffer). Frames go through it unchanged and in order; settings it cannot take are refused
in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pcap_records import HEADER, pcap_bytes, read_frames
from test_switch_use_files import ENTRIES, frame, free_port, run_switch_expecting_error, start, stop, wait_for

BIN = Path(sys.executable).parent
P4RT_TEST = Path(__file__).resolve().parent.parent / "p4" / "p4rt_test.json"


def frames_through(tmp_path: Path, *extra: str) -> list[bytes]:
    (tmp_path / "entries.txt").write_text("\n".join(ENTRIES) + "\n")
    frames = [frame(2, fill) for fill in range(0x10, 0x18)] + [frame(1, 0x99)]
    (tmp_path / "s1-eth1_in.pcap").write_bytes(pcap_bytes([(1.0 + i / 100, f) for i, f in enumerate(frames)]))
    (tmp_path / "s1-eth2_in.pcap").write_bytes(HEADER)
    sw = start(tmp_path, free_port(), "--commands", "entries.txt", *extra)
    out2 = tmp_path / "s1-eth2_out.pcap"
    try:
        wait_for("eight frames out of port 2", lambda: len(read_frames(out2)) >= 8, sw)
    finally:
        log = stop(sw)
    assert read_frames(tmp_path / "s1-eth1_out.pcap") == [frames[-1]], log
    return read_frames(out2)


def test_frames_cross_the_bmv2_model_unchanged_and_in_order(tmp_path: Path) -> None:
    (tmp_path / "paced").mkdir()
    (tmp_path / "bmv2").mkdir()
    paced = frames_through(tmp_path / "paced")
    modelled = frames_through(tmp_path / "bmv2", "--tm-model", "bmv2", "--scheduler", "rlsp-drr")
    assert modelled == paced == [frame(2, fill) for fill in range(0x10, 0x18)]


def test_bad_model_settings_are_one_line() -> None:
    prog = str(P4RT_TEST)
    assert "--tm-model" in run_switch_expecting_error("--tm-model", "bmv3", prog)
    cmd = [str(BIN / "lanes"), "switch", "--no-grpc", "--use-files", "0", "-i", "1@x",
           "--tm-model", "bmv2", "--drop", "random", prog]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    lines = r.stderr.strip().splitlines()
    assert r.returncode != 0 and len(lines) == 1, r.stderr
    assert "bmv2 model: a full queue drops the arrival (drop tail) only" in lines[0]

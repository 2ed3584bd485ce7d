"""bench/sweep_runs.py: each run of a sweep, flow by flow and phase by phase, from its summary.json;
a missing sweep directory is one line and exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "sweep_runs.py"


def summary(mbps: float, valid: bool, mpi: dict | None = None) -> dict:
    flow = {"class": "high", "phases": {"prioritized": {"throughput_mbps": mbps, "share_pct": 50.0, "loss_pct": 1.5,
                                                        "owd_ms": 7.6, "seconds": 88, "window_s": [92.0, 180.0]}}}  # fmt: skip
    s = {"flows": {"h1->h4": flow}, "validity": {"valid": valid, "warnings": []}}
    return s | ({"mpi": mpi} if mpi else {})


def sweep(root: Path, cells: dict[str, list[dict]]) -> Path:
    for cell, runs in cells.items():
        for i, s in enumerate(runs, 1):
            (root / cell / f"r{i}").mkdir(parents=True)
            (root / cell / f"r{i}" / "summary.json").write_text(json.dumps(s))
    (root / "report").mkdir()  # the sweep's report is not a cell
    return root


def test_every_run_of_every_cell_with_its_phase_figures_and_ping_pong(tmp_path: Path) -> None:
    a = sweep(tmp_path / "a", {"star-runtime-no-udp": [summary(32.1, True), summary(33.5, False)]})
    b = sweep(tmp_path / "b", {"star-mpi-no-tcp": [summary(1.0, True, {"latency_us": {"1024": 20300.0}})]})
    out = tmp_path / "runs.json"
    r = subprocess.run([sys.executable, str(SCRIPT), str(a), str(b), "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = json.loads(out.read_text())
    assert [(x["cell"], x["run"], x["valid"]) for x in got] == [
        ("star-runtime-no-udp", "r1", True), ("star-runtime-no-udp", "r2", False), ("star-mpi-no-tcp", "r1", True)]  # fmt: skip
    # the four figures of each phase, not the bookkeeping beside them
    assert got[1]["flows"]["h1->h4"]["prioritized"] == {"throughput_mbps": 33.5, "share_pct": 50.0, "loss_pct": 1.5, "owd_ms": 7.6}
    assert "mpi" not in got[0] and got[2]["mpi"] == {"latency_us": {"1024": 20300.0}}


def test_a_missing_sweep_directory_is_one_line_and_exit_2(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "nope"), "--out", str(tmp_path / "x.json")],
                       capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "no such sweep directory" in r.stderr
    assert not (tmp_path / "x.json").exists()

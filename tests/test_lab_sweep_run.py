"""`lanes lab sweep` for real on Mininet: two short cells, their report, and a second sweep over
the same directory that runs nothing because both cells are complete; `kill` of a sweep stops
its current run and leaves nothing behind; after `kill -9` of the whole sweep `lanes lab clean`
removes what it left and a resumed sweep redoes only the interrupted cell."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from test_lab_run import leftovers

REPO = Path(__file__).resolve().parents[1]
LANES = str(REPO / ".venv" / "bin" / "lanes")

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="Mininet needs root"),
]


def sweep_cmd(out: Path) -> list[str]:
    return [LANES, "lab", "sweep", "--preset", "fast", "--topos", "star", "--cases", "proactive",
            "--algs", "strict,rlsp-drr", "--protos", "udp", "--link-mbps", "50", "--duration", "6", "--out", str(out)]  # fmt: skip


def sweep(out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(sweep_cmd(out), capture_output=True, text=True, timeout=300, check=False)


def test_two_cell_sweep_reports_and_resumes(tmp_path: Path) -> None:
    r = sweep(tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "[0/2 done, ~" in r.stderr and "[2/2 done] 2 run" in r.stderr
    rows = {x["alg"]: x for x in csv.DictReader((tmp_path / "report" / "sweep.csv").open())}
    assert sorted(rows) == ["rlsp-drr", "strict"]
    # thesis 7.4, proactive on star (N = 1, M = 3): strict rewrites the two lower classes, RL-SP-DRR nothing
    assert float(rows["strict"]["control_writes"]) == 2 and float(rows["rlsp-drr"]["control_writes"]) == 0
    for alg, row in rows.items():
        assert float(row["high_loss_pct"]) < 1.0, (alg, row)  # the high class fits its 60 %
        assert (tmp_path / f"star-proactive-{alg}-udp" / "series.csv").is_file()
    writes = [x for x in csv.DictReader((tmp_path / "report" / "compare.csv").open()) if x["metric"] == "control_writes"]
    assert [x["verdict"] for x in writes] == ["matches the formula", "matches the formula"]
    assert "## Thesis 7.2 PROACTIVE" in (tmp_path / "report" / "report.md").read_text()
    before = json.loads((tmp_path / "star-proactive-strict-udp" / "cell.json").read_text())
    again = sweep(tmp_path)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "2 of 2 cells already complete, skipped" in again.stderr and "lab: " not in again.stderr
    assert json.loads((tmp_path / "star-proactive-strict-udp" / "cell.json").read_text()) == before


def test_sigterm_stops_the_sweep_and_its_run(tmp_path: Path) -> None:
    cmd = [LANES, "lab", "sweep", "--preset", "fast", "--topos", "star", "--cases", "proactive", "--algs", "strict",
           "--protos", "udp", "--link-mbps", "20", "--duration", "60", "--out", str(tmp_path)]  # fmt: skip
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    telemetry = tmp_path / "star-proactive-strict-udp" / "telemetry.jsonl"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and not telemetry.exists():
        time.sleep(0.2)
    assert telemetry.exists(), "the cell's run did not reach its traffic phase"
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=90)
    assert p.returncode == 130 and "Traceback" not in err, err[-1000:]
    runs = subprocess.run(["pgrep", "-f", f"lanes lab run .*{tmp_path}"], capture_output=True, check=False)
    assert runs.returncode == 1, runs.stdout  # no `lanes lab run` of this sweep is left
    assert leftovers() == []


def test_sigkill_mid_sweep_then_clean_and_resume_redoes_only_that_cell(tmp_path: Path) -> None:
    cmd = sweep_cmd(tmp_path)
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    second = tmp_path / "star-proactive-rlsp-drr-udp"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not (second / "telemetry.jsonl").exists() and p.poll() is None:
        time.sleep(0.2)
    assert (second / "telemetry.jsonl").exists(), "the second cell did not reach its traffic phase"
    # a crash takes the sweep and its run (which has a session of its own, so its timeout can end
    # it): both SIGKILLed, the run found by the state file it keeps for `lanes lab clean`
    os.killpg(p.pid, signal.SIGKILL)
    p.wait(timeout=30)
    for state in Path("/run/lanes-lab").glob("*.json"):
        os.kill(json.loads(state.read_text())["owner"], signal.SIGKILL)
    assert not (second / "summary.json").exists() and not (second / "cell.json").exists()
    first = json.loads((tmp_path / "star-proactive-strict-udp" / "cell.json").read_text())
    assert first["ok"]
    clean = subprocess.run([LANES, "lab", "clean"], capture_output=True, text=True, timeout=120, check=False)
    assert clean.returncode == 0, clean.stderr[-1000:]
    assert leftovers() == []
    again = sweep(tmp_path)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "1 of 2 cells already complete, skipped" in again.stderr
    assert json.loads((tmp_path / "star-proactive-strict-udp" / "cell.json").read_text()) == first
    assert json.loads((second / "cell.json").read_text())["ok"]

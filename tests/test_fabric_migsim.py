"""lanes fabric migsim through the CLI: the files it writes and their exact SMP counts (a
4-ary-2-tree consolidated with FTreeMinRC: 6 SMPs per move, see crates/fabric/tests/migsim.rs),
and bad input refused with one line."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from lanes.cli import main


def test_migsim_writes_steps_snapshots_summary_and_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = ["fabric", "migsim", "kary", "--k", "4", "--n", "2", "--pattern", "consolidate", "--seed", "3"]
    assert main([*argv, "--bisect-runs", "20", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "12 migrations (0 inside a leaf): 72 SMPs" in text
    with (out / "steps.csv").open() as fh:
        steps = list(csv.DictReader(fh))
    assert [int(s["smps"]) for s in steps] == [6] * 12
    assert [int(s["cumulative_smps"]) for s in steps] == list(range(6, 73, 6))
    assert {s["to"] for s in steps} == {"hv-0", "hv-1", "hv-2", "hv-3"}
    with (out / "snapshots.csv").open() as fh:
        snaps = list(csv.DictReader(fh))
    assert snaps[0]["step"] == "0" and snaps[-1]["step"] == "12"
    assert all(s["deadlock_free"] == "True" and s["unreachable"] == "0" for s in snaps)
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["smps_total"], summary["vms"], summary["hv_lid"]) == (72, 16, "own")
    assert (out / "migsim.png").stat().st_size > 10_000


def test_migsim_refuses_bad_input_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["fabric", "migsim", "kary", "--k", "4", "--n", "2", "--population", "2"])
    err = capsys.readouterr().err.strip()
    assert rc != 0 and err.count("\n") == 0 and "population" in err
    rc = main(["fabric", "migsim", "kary", "--k", "4", "--n", "2", "--pattern", "to-uniform"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert rc != 0 and "random" in err

"""`lanes lab report` shows runs of another kind (nas) through the section writer its caller gives
(lanes.lab does not import nas), and refuses a kind it has no writer for in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lanes.errors import LanesError
from lanes.lab.report import report


def _run(d: Path, kind: str) -> Path:
    d.mkdir(parents=True)
    (d / "summary.json").write_text(json.dumps({"kind": kind, "params": {"alg": "auto"}}))
    return d


def test_runs_of_another_kind_go_to_the_given_section_writer(tmp_path: Path) -> None:
    a, b = _run(tmp_path / "runs" / "a", "nas"), _run(tmp_path / "runs" / "b", "nas")
    seen = []

    def section(runs, out):
        seen.append(([r for r, _ in runs], [s["kind"] for _, s in runs], out))
        return ["## nas section"], ["<h2>nas section</h2>"]

    out = tmp_path / "report"
    report([tmp_path / "runs"], out, {"nas": section})
    assert seen == [([a, b], ["nas", "nas"], out)]
    assert "## nas section" in (out / "report.md").read_text().splitlines()
    assert "<h2>nas section</h2>" in (out / "report.html").read_text()


def test_a_kind_without_a_writer_is_a_one_line_error(tmp_path: Path) -> None:
    run = _run(tmp_path / "r", "nas")
    with pytest.raises(LanesError, match=f"^{run}: a 'nas' run, which this report cannot show$"):
        report([run], tmp_path / "report")

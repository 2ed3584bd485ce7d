"""Machines in a sweep's report: each cell's nodes and machine kinds come from its cell.json; cells
of one comparison on different nodes of one kind are named; on different kinds their latencies are
not compared (nor a cell's repeats averaged over two kinds) unless asked with
--compare-across-machines. sweep.csv keeps every number either way, and a report rewritten from it
withholds the same."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from lanes.lab import machine
from lanes.lab.sweep.matrix import PRESETS, Cell, plan_cells
from lanes.lab.sweep.report import write_all
from lanes.lab.sweep.reread import rewrite

XEON = {"node": "n1", "cpu_model": "Xeon Gold 6130", "cpus": 32, "kernel": "6.1.0", "mem_gb": 188.0}
EPYC = {"node": "n7", "cpu_model": "EPYC 7452", "cpus": 64, "kernel": "6.1.0", "mem_gb": 251.0}


def _cells(repeats: int = 1) -> list[Cell]:
    return plan_cells(PRESETS["paper"], cases="mpi", repeats=repeats)  # tree2, no/strict/rlsp-drr, UDP


def _put(cell: Cell, out: Path, repeats: int, ms_1k: float, where: dict) -> None:
    d = cell.run_dir(out, repeats)
    d.mkdir(parents=True, exist_ok=True)
    s = {"params": {"topo": cell.topo, "case": cell.case, "alg": cell.alg, "proto": cell.proto,
                    "link_mbps": cell.link_mbps, "duration_s": cell.duration_s},
         "phases": [{"name": "mpi", "start_s": 0, "end_s": 10}],
         "flows": {"h1->h4": {"class": "high", "proto": "udp", "phases": {}}}, "validity": {"warnings": []},
         "mpi": {"latency_us": {"1024": 1000 * ms_1k, "16384": 4000 * ms_1k}, "iterations": cell.mpi_iters,
                 "complete": True}}  # fmt: skip
    (d / "summary.json").write_text(json.dumps(s))
    (d / "cell.json").write_text(json.dumps({"ok": True, "machine": where, "load1_start": 0.1, "load1_end": 0.2}))


def _report(out: Path, cells: list[Cell], repeats: int = 1, across: bool = False) -> tuple[str, list[dict]]:
    rep = write_all(out, cells, repeats, PRESETS["paper"], across_machines=across)
    return (rep / "report.md").read_text(), list(csv.DictReader((rep / "compare.csv").open()))


def test_one_kind_on_two_nodes_is_named_and_compared(tmp_path: Path) -> None:
    cells = _cells()
    for c, node in zip(cells, ["n1", "n1", "n2"], strict=True):
        _put(c, tmp_path, 1, 2.0, {**XEON, "node": node})
    md, _ = _report(tmp_path, cells)
    assert "- tree2 mpi UDP at 10 Mb/s: cells ran on different machines of one kind (no on n1; strict on n1; rlsp-drr on n2)" in md
    assert "| Xeon Gold 6130 x32 | n1, n2 | 6.1.0 | 3 |" in md
    assert "not compared" not in md.split("## MPI ping-pong latency")[1]


def test_latencies_across_machine_kinds_are_not_compared_unless_asked(tmp_path: Path) -> None:
    cells = _cells()
    for c, where in zip(cells, [XEON, XEON, EPYC], strict=True):
        _put(c, tmp_path, 1, 2.0, where)
    md, comp = _report(tmp_path, cells)
    assert "cells ran on different kinds of machine (no on n1; strict on n1; rlsp-drr on n7); latencies are not compared" in md
    mpi_table = md.split("## MPI ping-pong latency by message size, tree2, UDP load")[1].split("##")[0]
    assert "its comparison ran on different kinds of machine (--compare-across-machines to compare)" in mpi_table
    assert "| MPI: latencies of STRICT, RL-SP-DRR and NO | – | not compared: its comparison ran on different kinds" in md
    rows = list(csv.DictReader((tmp_path / "report" / "sweep.csv").open()))
    assert [r["machine_kinds"] for r in rows] == ["Xeon Gold 6130 x32", "Xeon Gold 6130 x32", "EPYC 7452 x64"]
    assert all(float(r["mpi_1024_ms"]) == 2.0 for r in rows)  # the data keeps every cell's number
    # each cell against the thesis is one machine's number: still compared
    assert {x["ours"] for x in comp if x["metric"] == "mpi_16384_ms"} == {"8.0"}
    md, _ = _report(tmp_path, cells, across=True)
    assert "latencies compared as asked (--compare-across-machines)" in md
    assert "| 1024 | 2 | 2 | 2 |" in md
    # a report rewritten from its CSVs withholds the same, and compares when asked
    assert "not compared: its comparison ran on different kinds" in _rewritten(tmp_path / "report", False)
    assert "not compared: its comparison" not in _rewritten(tmp_path / "report", True)


def _rewritten(rep: Path, across: bool) -> str:
    rewrite(rep, across)
    return (rep / "report.md").read_text()


def test_repeats_on_two_kinds_are_not_averaged(tmp_path: Path) -> None:
    cells = [c for c in _cells(repeats=2) if c.alg == "strict"]
    _put(cells[0], tmp_path, 2, 2.0, XEON)
    _put(cells[1], tmp_path, 2, 4.0, EPYC)
    md, comp = _report(tmp_path, cells, 2)
    assert "tree2-mpi-strict-udp: its runs ran on different kinds of machine (EPYC 7452 x64; Xeon Gold 6130 x32)" in md
    assert {x["ours"] for x in comp if x["metric"] == "mpi_16384_ms"} == {""}
    row = next(csv.DictReader((tmp_path / "report" / "sweep.csv").open()))
    assert float(row["mpi_1024_ms"]) == 3.0 and row["nodes"] == "n1; n7"
    _, comp = _report(tmp_path, cells, 2, across=True)
    assert {float(x["ours"]) for x in comp if x["metric"] == "mpi_16384_ms"} == {12.0}


def test_this_machine_is_described() -> None:
    m = machine.describe()
    assert m["node"] and m["cpus"] >= 1 and m["kernel"] and m["cpu_model"]
    assert machine.kind(m) == f"{m['cpu_model']} x{m['cpus']}" and machine.kind(None) == "?"

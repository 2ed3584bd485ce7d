"""A sweep's report again from its own committed files, without the run directories: sweep.csv and
mpi_sizes.csv give the cells' numbers, report.md the validity warnings and the preset, figures/ the
plots already drawn. compare.csv, report.md and report.html are rewritten with the current verdict
rules; the data files and figures are left as they are. `lanes lab sweep-report DIR...`."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from lanes.emu.topo import TOPOLOGIES
from lanes.errors import LanesError
from lanes.lab.cases import CASES
from lanes.lab.sweep.machines import mark
from lanes.lab.sweep.report import _write_docs, compare_rows, write_compare_csv
from lanes.lab.sweep.stats import KEYS, MACHINE_KEYS, METRICS

INTS = {"mpi_iters", "n", "valid_runs"}
FLOATS = {"link_mbps", "duration_s", "load1", "wall_s"}


def _num(v: str) -> float | None:
    return None if v == "" else float(v)


def read_rows(rep: Path) -> list[dict]:
    """The cells of a report directory, shaped as lanes.lab.sweep.stats.cell_row makes them."""
    path = rep / "sweep.csv"
    if not path.is_file():
        raise LanesError(f"{rep}: no sweep.csv (not a sweep report directory)")
    rows = []
    for line in csv.DictReader(path.open()):
        row: dict = {}
        for k in KEYS + ["n", "valid_runs", "load1", "wall_s", "started_utc"]:
            v = line.get(k, "")
            row[k] = int(v) if k in INTS and v else (_num(v) if k in FLOATS else v)
        for k in METRICS:
            mean, ci = _num(line.get(k, "")), _num(line.get(f"{k}_ci95", ""))
            row[k] = None if mean is None else {"n": row["n"], "mean": mean, "ci95": ci}
        row["warnings"], row["runs"], row["mpi"] = [], [], {}
        for k in MACHINE_KEYS:  # reports written before machines were recorded have no such column
            row[k] = line[k].split("; ") if line.get(k) else ["?"]
        rows.append(row)
    _add_mpi(rows, rep / "mpi_sizes.csv")
    _add_warnings(rows, rep / "report.md")
    return rows


def _add_mpi(rows: list[dict], path: Path) -> None:
    if not path.is_file():
        return
    cells = {(r["topo"], r["proto"], r["alg"], r["link_mbps"]): r for r in rows if r["case"] == "mpi"}
    for line in csv.DictReader(path.open()):
        r = cells.get((line["topo"], line["proto"], line["alg"], float(line["link_mbps"])))
        if r is None:
            continue
        size: dict = {}
        lat, ci, idle = _num(line["latency_us"]), _num(line["latency_us_ci95"]), _num(line["idle_latency_us"])
        if lat is not None:
            size["latency_us"] = {"n": r["n"], "mean": lat, "ci95": ci}
        if idle is not None:
            size["idle_latency_us"] = {"n": r["n"], "mean": idle, "ci95": None}
        r["mpi"][line["size_bytes"]] = size


def _add_warnings(rows: list[dict], md: Path) -> None:
    """The old report's validity warnings ("- topo-case-alg-proto: text"), back onto their cells."""
    if not md.is_file():
        return
    text = md.read_text()
    if "## Validity warnings" not in text:
        return
    section = text.split("## Validity warnings", 1)[1].split("\n## ", 1)[0]
    by_name = {f"{r['topo']}-{r['case']}-{r['alg']}-{r['proto']}": r for r in rows}
    for line in section.splitlines():
        name, _, warning = line.removeprefix("- ").partition(": ")
        if line.startswith("- ") and name in by_name:
            by_name[name]["warnings"].append(warning)


def _planned_and_preset(md: Path, rows: list[dict]) -> tuple[int, str]:
    m = re.search(r"(\d+) of (\d+) planned cells have complete runs \((?:\d+ runs; )?preset ([\w-]+)\)",
                  md.read_text() if md.is_file() else "")  # fmt: skip
    if not m:
        return len(rows), "?"
    planned, repeats = int(m.group(2)), max((r["n"] for r in rows), default=1)
    # reports written before the count was of cells counted a cell once per repeat
    if repeats > 1 and planned % repeats == 0 and planned // repeats >= len(rows):
        planned //= repeats
    return planned, m.group(3)


def _figures(rep: Path) -> list[tuple[str, Path]]:
    figs = []
    for topo in TOPOLOGIES:
        for case in CASES:
            f = rep / "figures" / f"{topo}_{case}_throughput.png"
            if f.is_file():
                figs.append((f"{topo} {case}: throughput over time", f))
        f = rep / "figures" / f"{topo}_mpi_latency.png"
        if f.is_file():
            figs.append((f"{topo}: MPI latency vs message size", f))
    return figs


def rewrite(rep: Path, across_machines: bool = False) -> list[dict]:
    """compare.csv, report.md and report.html of `rep` again, from its own files; returns the comparisons."""
    rows = read_rows(rep)
    planned, preset = _planned_and_preset(rep / "report.md", rows)
    notes = mark(rows, across_machines)
    comp = compare_rows(rows)
    write_compare_csv(rep / "compare.csv", comp)
    _write_docs(rep, rows, comp, _figures(rep), planned, preset, notes)
    return comp

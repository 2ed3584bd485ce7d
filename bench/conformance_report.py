"""The conformance report: one table row per program, totals of all and of the v1model programs,
p4c's bmv2 XFAIL programs apart."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from conformance_outcome import Outcome
from conformance_p4info import P4InfoVerdict


@dataclass
class Row:
    program: str
    arch: str
    xfail: bool
    outcome: Outcome
    seconds: float
    p4info: P4InfoVerdict | None = None  # None: not compiled, or p4c committed no P4Info
    compile_s: float = 0.0  # one `lanes p4c` run of the program, process start included


def totals(rows: list[Row]) -> str:
    n = len(rows)
    compiled = sum(r.outcome.compiled for r in rows)
    counts = {k: sum(r.outcome.result == k for r in rows) for k in ("refused", "passed", "failed", "timeout")}
    return (f"{n} | {compiled} | {counts['refused']} | {counts['passed']} | {counts['failed']} | "
            f"{counts['timeout']}")  # fmt: skip


def p4info_totals(rows: list[Row]) -> str:
    judged = [r.p4info for r in rows if r.p4info is not None]
    equal = sum(v.equal for v in judged)
    return f"{len(judged)} | {equal} | {len(judged) - equal}"


def p4info_cell(v: P4InfoVerdict | None) -> str:
    if v is None:
        return ""
    return "equal" if v.equal else cell(v.detail)


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")[:300]


def table(rows: list[Row]) -> list[str]:
    out = [
        "| program | arch | compiled | result | reason or first mismatch | P4Info against p4c's |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        o = r.outcome
        out.append(
            f"| {r.program} | {r.arch} | {'yes' if o.compiled else 'no'} | {o.result} | {cell(o.detail)} "
            f"| {p4info_cell(r.p4info)} |"
        )
    return out


def xfail_lines(rows: list[Row], xfail_names: set[str]) -> list[str]:
    by_name = {r.program: r for r in rows}
    out = ["| program | result here |", "|---|---|"]
    for name in sorted(xfail_names):
        r = by_name.get(Path(name).name)
        out.append(f"| {name} | {r.outcome.result if r else 'not run: not a *-bmv2.p4 with an .stf'} |")
    return out


def write_report(
    path: Path, rows: list[Row], xfail_names: set[str], commit: str, timeout_s: float, only: str | None
) -> None:
    main = [r for r in rows if not r.xfail]
    xfail = [r for r in rows if r.xfail]
    lines = [
        "# p4c's bmv2 STF tests on lanes",
        "",
        f"p4c commit {commit}: every `testdata/p4_16_samples/*-bmv2.p4` with an `.stf`"
        + (f" matching `{only}`" if only else "")
        + ", run by p4c's own `backends/bmv2/run-bmv2-test.py` (unmodified) with lanes's `p4c-bm2-ss`, "
        f"`simple_switch` (`--use-files`, FIFOs) and bmv2's `simple_switch_CLI` first on PATH "
        f"(PSA programs with the driver's `-p`: lanes's `p4c-bm2-psa`, `psa_switch`, `psa_switch_CLI`); "
        f"{timeout_s:g} s per program. Written by `make conformance P4C=DIR` (bench/conformance.py).",
        "",
        "Refused: lanes's compiler declined the program (its one-line reason). Failed: compiled, and "
        "the driver's first complaint.",
        "",
        "| programs | count | compiled | refused | passed | failed | timed out |",
        "|---|---|---|---|---|---|---|",
        f"| all | {totals(rows)} |",
        f"| v1model | {totals([r for r in rows if r.arch == 'v1model'])} |",
        f"| PSA | {totals([r for r in rows if r.arch == 'psa'])} |",
        f"| all but p4c's XFAIL list | {totals(main)} |",
        "",
        "P4Info: for each compiled program p4c committed a P4Info for, ours (`lanes p4c "
        "--p4runtime-files`) against p4c's, entities paired by name; ids, names, aliases, "
        "annotations, match fields, action parameters, table properties and default actions "
        "compared (`doc` strings left out). Not equal: the first difference.",
        "",
        "| P4Info | compared | equal | differ |",
        "|---|---|---|---|",
        f"| all compiled | {p4info_totals(rows)} |",
        "",
        f"Compile time: `lanes p4c` once on every program (compiled or refused), one after another: "
        f"{sum(r.compile_s for r in rows):.1f} s in all, the slowest {max((r.compile_s for r in rows), default=0):.2f} s, "
        "each run's Python start included.",
        "",
        "## Programs",
        "",
        *table(main),
        "",
        "## On p4c's bmv2 XFAIL list",
        "",
        "p4c expects these to fail on bmv2 (XFAIL_TESTS in its backends/bmv2 CMake files); "
        f"{len(xfail)} of the programs run are on it.",
        "",
        *(table(xfail) if xfail else []),
        *([""] if xfail else []),
        *xfail_lines(rows, xfail_names),
        "",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))

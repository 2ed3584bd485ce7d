"""The sweep report's verdict rules, one test per rule, and the report rewritten from a committed
report directory (sweep.csv, mpi_sizes.csv, report.md) without the run directories."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from lanes.lab.sweep.report import (
    NOT_COMPARABLE_END,
    NOT_COMPARABLE_PEAK,
    NOT_COMPARABLE_RATE,
    compare_rows,
    verdict,
    verdict_counts,
)
from lanes.lab.sweep.reread import read_rows, rewrite
from lanes.lab.sweep.stats import write_mpi_csv, write_sweep_csv
from lanes.lab.thesis import FALLING_END, PEAK, kind_of


@pytest.mark.parametrize(
    ("ours", "theirs", "want"),
    [
        (14.0, 10.0, "agrees"),  # x1.4
        (16.0, 10.0, "ours higher (x1.6)"),
        (6.0, 10.0, "ours lower (x0.6)"),
        (0.08, 1.0, "ours lower (x0.08)"),  # no absolute band: 0.92 ms apart is not "agrees"
        (3.4, 1.0, "ours higher (x3.4)"),
    ],
)
def test_latencies_agree_only_within_x1_5(ours: float, theirs: float, want: str) -> None:
    assert verdict("high_owd_ms", ours, theirs) == want


def test_tiny_latencies_and_times_get_their_own_verdict() -> None:
    assert verdict("high_owd_ms", 0.05, 0.2) == "both under 1 ms"
    assert verdict("mpi_1024_ms", 0.32, 0.59) == "both under 1 ms"
    assert verdict("mpi_1024_ms", 1.3, 0.98) == "agrees"  # one of them over 1 ms: the ratio decides
    assert verdict("to_prioritized_s", 0.0, 0.0) == "both under 1 s"
    assert verdict("to_prioritized_s", 0.2, 4.0) == "ours lower (x0.05)"
    assert verdict("to_prioritized_s", 0.0, 4.0) == "ours lower (-4 s)"  # a ratio of 0 says less than the gap


@pytest.mark.parametrize(
    ("ours", "want"),
    [(0.0, "agrees"), (0.1, "agrees"), (0.363, "ours higher (+0.363 pp)"), (2.9, "ours higher (+2.9 pp)")],
)
def test_a_published_zero_loss_agrees_only_with_at_most_0_1_pct(ours: float, want: str) -> None:
    assert verdict("high_loss_pct", ours, 0.0) == want


def test_a_nonzero_published_loss_keeps_three_points() -> None:
    assert verdict("low_loss_pct", 60.5, 63) == "agrees"
    assert verdict("high_loss_pct", 45.0, 37) == "ours higher (+8 pp)"


def test_a_per_second_peak_is_not_compared_with_a_mean() -> None:
    assert verdict("low_owd_ms", 38.6, 31, PEAK) == NOT_COMPARABLE_PEAK
    assert verdict("low_owd_ms", 10.0, 31, PEAK) == NOT_COMPARABLE_PEAK  # a mean below a peak says nothing
    assert verdict("high_loss_pct", 0.0, 0.89, PEAK) == NOT_COMPARABLE_PEAK
    # a mean well above the peak is above every second of the series, so above its mean too
    assert verdict("low_owd_ms", 386, 227, PEAK) == "ours higher (x1.7, above its series' peak)"


def test_the_end_of_a_falling_series_only_tells_lower() -> None:
    assert verdict("high_owd_ms", 5.0, 10, FALLING_END) == "ours lower (x0.5, below where its series ends)"
    assert verdict("high_owd_ms", 9.0, 10, FALLING_END) == NOT_COMPARABLE_END
    assert verdict("high_owd_ms", 30.0, 10, FALLING_END) == NOT_COMPARABLE_END


def test_the_thesis_numbers_read_off_a_series_are_marked() -> None:
    assert (
        kind_of(("tree2", "proactive", "udp", "rlsp-drr"), "high_loss_pct") == PEAK
    )  # 0.89 % at the 147th s
    assert kind_of(("star", "runtime", "udp", "strict"), "high_owd_ms") == FALLING_END  # 27 -> 10 ms
    assert kind_of(("tree2", "runtime", "udp", "no"), "high_owd_ms") == "mean"  # saturates at 315 ms


def _row(topo: str, case: str, proto: str, alg: str, link: float, dur: float, **metrics: float) -> dict:
    r = {"topo": topo, "case": case, "proto": proto, "alg": alg, "link_mbps": link, "duration_s": dur,
         "mpi_iters": 100, "n": 1, "valid_runs": 1, "load1": 0.5, "wall_s": 1.0, "started_utc": "2026-01-01T00:00:00Z",
         "warnings": [], "runs": [], "mpi": {}}  # fmt: skip
    for k, v in metrics.items():
        r[k] = {"n": 1, "mean": v, "ci95": None}
    return r


def test_same_setup_names_switch_buffers_cpu_and_writes_are_counted_apart() -> None:
    rows = [
        _row("star", "proactive", "udp", "strict", 100.0, 180.0, high_loss_pct=0.363, high_owd_ms=0.05,
             low_owd_ms=38.6, low_loss_pct=62.9, low_mbps=19.4, control_writes=2),
        _row("tree1", "proactive", "udp", "strict", 100.0, 30.0, high_owd_ms=0.1, low_owd_ms=20.0, control_writes=4),
    ]  # fmt: skip
    comp = compare_rows(rows)
    by = {(x["topo"], x["metric"]): x for x in comp}
    star = by[("star", "high_owd_ms")]
    assert star["same_setup"].startswith("no: switch: paced TM vs bmv2's; buffers: 64-pkt queues")
    assert "CPU: 2 shared cores vs 4-core i5" in star["same_setup"]
    assert star["verdict"] == "both under 1 ms"
    assert by[("star", "high_loss_pct")]["verdict"] == "ours higher (+0.363 pp)"
    assert by[("tree1", "high_owd_ms")]["same_setup"].startswith("no: 100 vs 50 Mb/s; 30 vs 180 s; switch:")
    assert by[("tree1", "high_owd_ms")]["verdict"] == NOT_COMPARABLE_RATE
    writes = [x for x in comp if x["metric"] == "control_writes"]
    assert [(x["source"], x["verdict"]) for x in writes] == [("formula", "matches the formula")] * 2
    assert verdict_counts(comp) == [
        # star: loss 0.363 higher, 62.9 and 19.4 agree, 0.05 ms both tiny, 38.6 ms under x1.5 its 26-ms peak;
        # tree1: two delays at another link rate, its loss not measured
        "Measured numbers: 8 published numbers (8 of the thesis, 0 of the paper) beside ours: 2 agree, "
        "1 both under 1 ms (or 1 s), 0 with ours lower, 1 with ours higher, 3 not comparable (1 a per-second peak, "
        "2 at another link rate), 1 not measured.",
        "Write counts (thesis 7.4, a formula of N and M, not a measurement): 2 of 2 counted writes match it.",
    ]


def test_a_committed_report_is_rewritten_from_its_csvs(tmp_path: Path) -> None:
    rows = [
        _row("star", "proactive", "udp", "strict", 100.0, 180.0, high_loss_pct=0.0, high_owd_ms=0.05,
             control_writes=2),
        _row("tree2", "mpi", "udp", "strict", 10.0, 180.0, mpi_16384_ms=43.8, control_writes=0),
    ]  # fmt: skip
    rows[1]["mpi"] = {"16384": {"latency_us": {"n": 1, "mean": 43800.0, "ci95": None},
                                "idle_latency_us": {"n": 1, "mean": 41800.0, "ci95": None}}}  # fmt: skip
    write_sweep_csv(tmp_path / "sweep.csv", rows)
    write_mpi_csv(tmp_path / "mpi_sizes.csv", rows)
    (tmp_path / "report.md").write_text(
        "# lanes lab sweep\n\n2 of 6 planned cells have complete runs (preset paper). More.\n\n"
        "## Validity warnings\n\n- star-proactive-strict-udp: port 4 busy 80 %\n"
    )
    back = read_rows(tmp_path)
    assert back[0]["high_owd_ms"] == {"n": 1, "mean": 0.05, "ci95": None}
    assert back[0]["warnings"] == ["port 4 busy 80 %"]
    assert back[1]["mpi"]["16384"]["latency_us"]["mean"] == 43800.0
    comp = rewrite(tmp_path)
    got = {(x["topo"], x["metric"]): x["verdict"] for x in csv.DictReader((tmp_path / "compare.csv").open())}
    assert got[("tree2", "mpi_16384_ms")] == "agrees"  # 43.8 against 51 ms: x0.86
    assert got[("star", "high_owd_ms")] == "both under 1 ms"  # against the thesis's 0.2 ms
    assert len(comp) == len(got) + 1  # the paper's 51 ms repeats the thesis's (same key in the dict)
    md = (tmp_path / "report.md").read_text()
    assert "2 of 6 planned cells have complete runs (2 runs; preset paper)" in md
    assert "- star-proactive-strict-udp: port 4 busy 80 %" in md
    assert "Write counts (thesis 7.4, a formula of N and M, not a measurement): 2 of 2" in md


def test_planned_cells_are_cells_not_runs(tmp_path: Path) -> None:
    rows = [_row("tree2", "proactive", "udp", a, 10.0, 180.0, high_mbps=5.24) for a in ("strict", "rlsp-drr")]
    for r in rows:
        r["n"] = r["valid_runs"] = 3
    write_sweep_csv(tmp_path / "sweep.csv", rows)
    (tmp_path / "report.md").write_text("2 of 6 planned cells have complete runs (preset paper).\n")
    rewrite(tmp_path)
    assert (
        "2 of 2 planned cells have complete runs (6 runs; preset paper)"
        in (tmp_path / "report.md").read_text()
    )


COMMITTED = Path(__file__).resolve().parent.parent / "bench" / "results" / "sweep"


@pytest.mark.parametrize("name", sorted(p.name for p in COMMITTED.glob("*") if (p / "sweep.csv").is_file()))
def test_committed_reports_carry_the_current_verdicts(tmp_path: Path, name: str) -> None:
    """Each committed sweep report is what `lanes lab sweep-report` makes of its CSVs today."""
    import shutil

    copy = tmp_path / name
    shutil.copytree(COMMITTED / name, copy)
    rewrite(copy)
    for f in ("compare.csv", "report.md"):
        assert (copy / f).read_text() == (COMMITTED / name / f).read_text(), (
            f"{name}/{f}: run lanes lab sweep-report"
        )


def test_sweep_md_counts_are_the_reports_counts() -> None:
    """bench/results/sweep.md's table of verdict counts is what each committed compare.csv says."""
    from lanes.lab.sweep.report import verdict_class

    repo = COMMITTED.parent.parent.parent
    table = [
        line for line in (repo / "bench/results/sweep.md").read_text().splitlines()
        if line.startswith("| `bench/results/sweep/") and line.split("|")[1].strip().endswith("/compare.csv`")
    ]  # fmt: skip
    assert len(table) == len([p for p in COMMITTED.glob("*") if (p / "compare.csv").is_file()])
    for line in table:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows = list(csv.DictReader((repo / cells[0].strip("`")).open()))
        measured = [r for r in rows if r["source"] != "formula"]
        formula = [r for r in rows if r["source"] == "formula"]
        by = [verdict_class(r["verdict"]) for r in measured]
        assert "differs" not in by, cells[0]  # every verdict falls in one of the table's columns
        runs = {int(r["valid"].split("/")[1]) for r in rows}
        want = [
            str(max(runs)), str(len(measured)),
            *(str(by.count(c)) for c in ("agrees", "both under", "lower", "higher", "not comparable", "missing")),
            f"{sum(r['verdict'].startswith('matches') for r in formula)} of {len(formula)}",
        ]  # fmt: skip
        assert cells[1:] == want, cells[0]


def test_a_single_run_is_marked_where_its_number_stands(tmp_path: Path) -> None:
    once = _row("tree2", "proactive", "udp", "strict", 10.0, 180.0, high_mbps=5.24)
    thrice = _row("tree2", "proactive", "udp", "rlsp-drr", 10.0, 180.0)
    thrice["n"] = thrice["valid_runs"] = 3
    thrice["high_mbps"] = {"n": 3, "mean": 5.2383, "ci95": 0.0014}
    ours = {x["alg"]: x["ours_text"] for x in compare_rows([once, thrice]) if x["metric"] == "high_mbps"}
    assert ours == {"strict": "5.24 (one run)", "rlsp-drr": "5.24 ± 0.0014"}
    write_sweep_csv(tmp_path / "sweep.csv", [once, thrice])
    (tmp_path / "report.md").write_text("2 of 2 planned cells have complete runs (preset paper).\n")
    rewrite(tmp_path)
    assert "1 of 2 cells are one run, marked '(one run)'" in (tmp_path / "report.md").read_text()

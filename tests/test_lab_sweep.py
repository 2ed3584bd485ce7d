"""`lanes lab sweep` without a network: cell planning, resume (complete cells skipped, incomplete
ones run again), the 95 % CI, CSV files, RUNTIME transition times from a synthetic series, and the
report's verdicts."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from lanes.errors import LanesError
from lanes.lab.csvout import write_run_csvs
from lanes.lab.sweep import matrix
from lanes.lab.sweep.matrix import PRESETS, Cell, Eta, is_complete, plan_cells
from lanes.lab.sweep.report import setup_diff, verdict
from lanes.lab.transitions import dequeue_rates, runtime_transitions, time_to_settle
from lanes.nas.summary import mean_ci


def test_thesis_preset_plans_the_54_cells_at_the_thesis_rates_and_phases() -> None:
    cells = plan_cells(PRESETS["thesis"])
    assert len(cells) == 54 == len({c.name for c in cells})
    assert {c.topo: c.link_mbps for c in cells} == {"star": 100, "tree1": 50, "tree2": 10}
    assert {c.case: c.duration_s for c in cells} == {"runtime": 270, "proactive": 180, "mpi": 180}
    assert {c.mpi_iters for c in cells} == {100}
    assert cells[0].name == "star-runtime-no-udp" and cells[-1].name == "tree2-mpi-rlsp-drr-tcp"


def test_paper_preset_is_tree2_at_10_mbps_proactive_and_mpi_under_udp() -> None:
    cells = plan_cells(PRESETS["paper"])
    assert [c.name for c in cells] == [f"tree2-{case}-{alg}-udp" for case in ("proactive", "mpi")
                                       for alg in ("no", "strict", "rlsp-drr")]  # fmt: skip
    assert {(c.link_mbps, c.duration_s) for c in cells} == {(10.0, 180.0)}


def test_subsets_overrides_and_repeats() -> None:
    cells = plan_cells(PRESETS["fast"], topos="tree1", cases="runtime,mpi", algs="strict", protos="tcp",
                       repeats=3, duration_s=30, mpi_iters=7)  # fmt: skip
    assert [(c.case, c.repeat) for c in cells] == [("runtime", 1), ("runtime", 2), ("runtime", 3),
                                                   ("mpi", 1), ("mpi", 2), ("mpi", 3)]  # fmt: skip
    assert {(c.link_mbps, c.duration_s, c.mpi_iters) for c in cells} == {(50, 30, 7)}
    assert cells[1].run_dir(Path("o"), 3) == Path("o/tree1-runtime-strict-tcp/r2")
    assert cells[0].run_dir(Path("o"), 1) == Path("o/tree1-runtime-strict-tcp")


@pytest.mark.parametrize("kw", [{"topos": "star,ring"}, {"algs": "wfq"}, {"protos": ""}, {"repeats": 0},
                                {"duration_s": 1}, {"mpi_iters": 0}])  # fmt: skip
def test_bad_selection_is_a_lanes_error(kw: dict) -> None:
    with pytest.raises(LanesError):
        plan_cells(PRESETS["thesis"], **kw)


def _summary(cell: Cell, **over: object) -> dict:
    s = {
        "params": {"topo": cell.topo, "case": cell.case, "alg": cell.alg, "proto": cell.proto,
                   "link_mbps": cell.link_mbps, "duration_s": cell.duration_s},
        "phases": [{"name": "low_only", "start_s": 0, "end_s": 15}, {"name": "high_present", "start_s": 15, "end_s": 30}],
        "flows": {"h1->h4": {"class": "high", "proto": cell.proto, "phases": {}}},
        "validity": {"warnings": []},
    }  # fmt: skip
    if cell.case == "mpi":
        s["mpi"] = {"latency_us": {"1": 50.0}, "iterations": cell.mpi_iters}
    s.update(over)
    return s


def _put(d: Path, s: dict) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "summary.json").write_text(json.dumps(s))
    return d


def test_complete_means_same_settings_and_a_validity_section(tmp_path: Path) -> None:
    c = plan_cells(PRESETS["fast"], topos="star", cases="proactive", algs="strict", protos="udp")[0]
    assert not is_complete(c, tmp_path / "missing")
    assert is_complete(c, _put(tmp_path / "a", _summary(c)))
    s = _summary(c)
    del s["validity"]
    assert not is_complete(c, _put(tmp_path / "b", s))
    s = _summary(c)
    s["params"]["duration_s"] = 99
    assert not is_complete(c, _put(tmp_path / "c", s))
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "summary.json").write_text('{"params": ')  # cut off mid-write
    assert not is_complete(c, tmp_path / "d")
    m = plan_cells(PRESETS["fast"], topos="star", cases="mpi", algs="strict", protos="udp")[0]
    assert is_complete(m, _put(tmp_path / "e", _summary(m)))
    assert not is_complete(m, _put(tmp_path / "f", _summary(m, mpi={"latency_us": {"1": 5.0}, "iterations": 99})))
    # a ping-pong stopped at its time limit: done, unless the cell now allows it longer
    cut = {"latency_us": {"1": 5.0}, "iterations": m.mpi_iters, "complete": False}
    params = {**_summary(m)["params"], "mpi_timeout_s": 1800.0}
    assert is_complete(m, _put(tmp_path / "g", _summary(m, mpi=cut, params=params)))
    longer = plan_cells(PRESETS["fast"], topos="star", cases="mpi", algs="strict", protos="udp", mpi_timeout_s=5400)[0]
    assert not is_complete(longer, tmp_path / "g")
    assert "--mpi-timeout" in matrix.run_args(longer, tmp_path) and "5400" in matrix.run_args(longer, tmp_path)


def test_sweep_skips_complete_cells_and_reruns_incomplete_ones(tmp_path: Path, monkeypatch) -> None:
    cells = plan_cells(PRESETS["fast"], topos="star", cases="proactive", protos="udp")
    _put(cells[0].run_dir(tmp_path, 1), _summary(cells[0]))  # complete
    _put(cells[1].run_dir(tmp_path, 1), {"params": {}})  # a run that died before its summary
    (cells[1].run_dir(tmp_path, 1) / "cell.json").write_text("{}")  # ... and the sweep's record of it
    ran: list[str] = []

    def fake_run(cell: Cell, run_dir: Path, log: Path, timeout_s: float) -> int:
        ran.append(cell.name)  # stands in for `lanes lab run`, which the Mininet test runs for real
        assert not (run_dir / "cell.json").exists()  # `lanes lab run` would refuse the directory
        _put(run_dir, _summary(cell))
        return 0

    monkeypatch.setattr(matrix, "_run_one", fake_run)
    recs = matrix.sweep(cells, tmp_path, 1, PRESETS["fast"])
    assert ran == ["star-proactive-strict-udp", "star-proactive-rlsp-drr-udp"]
    assert [r["ok"] for r in recs] == [True, True]
    assert json.loads((cells[1].run_dir(tmp_path, 1) / "cell.json").read_text())["alg"] == "strict"
    ran.clear()
    matrix.sweep(cells, tmp_path, 1, PRESETS["fast"])
    assert ran == []


def test_time_left_scales_with_how_the_cells_ran_so_far() -> None:
    c = Cell("star", "proactive", "no", "udp", 100, 30, 5)
    eta = Eta()
    assert eta.left([c, c]) == 2 * (30 + matrix.OVERHEAD_S)
    eta.record(c, 2 * (30 + matrix.OVERHEAD_S))  # took twice the estimate
    assert eta.left([c]) == pytest.approx(2 * (30 + matrix.OVERHEAD_S))


def test_best_effort_ping_pong_is_named_by_its_limit_not_folded_into_the_scale() -> None:
    quick = Cell("star", "proactive", "no", "udp", 100, 30, 5)
    slow = Cell("tree2", "mpi", "no", "udp", 10, 90, 100, mpi_timeout_s=5400)
    strict = Cell("tree2", "mpi", "strict", "udp", 10, 90, 100)
    assert slow.open_ended and not strict.open_ended and not quick.open_ended
    eta = Eta()
    eta.record(slow, 3780)  # an hour-long ping-pong says nothing about the 30-s cells
    assert eta.left([quick]) == 30 + matrix.OVERHEAD_S
    assert eta.text([quick]) == "~0m55s left"
    assert eta.text([quick, slow]).endswith("left (best effort's ping-pong: up to 1h30m more)")


def test_ci95_is_student_t() -> None:
    m = mean_ci([1.0, 2.0, 3.0])
    assert m["mean"] == 2.0 and m["ci95"] == pytest.approx(4.303 / math.sqrt(3))
    assert mean_ci([5.0])["ci95"] is None


def _ramp(change: float, end: float, before: float, after: float, ramp: int) -> list[dict]:
    """Per-second rates: `before` for `ramp` seconds after `change` (the change not felt yet),
    then `after`."""
    rows = []
    for t in range(int(change) + 1, int(end) + 1):
        k = t - change  # the interval (t-1, t] is the k-th after the change
        rows.append({"t": float(t), "mbps": after if k > ramp else before})
    return rows


def test_transition_time_is_the_first_second_from_which_the_rate_holds() -> None:
    rows = _ramp(30, 60, 33.3, 52.4, 4)
    assert time_to_settle(rows, 30, 60) == 4.0
    assert time_to_settle(_ramp(30, 60, 33.3, 52.4, 0), 30, 60) == 0.0
    # a single second on target inside the ramp does not count: it must hold for 3 s
    rows = _ramp(30, 60, 33.3, 52.4, 6)
    rows[1]["mbps"] = 52.4
    assert time_to_settle(rows, 30, 60) == 6.0
    assert time_to_settle([], 30, 60) is None


def test_runtime_transitions_per_high_flow() -> None:
    up = _ramp(10, 20, 33.3, 52.4, 2)
    down = _ramp(20, 30, 52.4, 33.3, 5)
    s = {"params": {"case": "runtime"},
         "phases": [{"name": "fair_before", "start_s": 0, "end_s": 10}, {"name": "prioritized", "start_s": 10, "end_s": 20},
                    {"name": "fair_after", "start_s": 20, "end_s": 30}],
         "flows": {"h1->h4": {"class": "high"}, "h2->h4": {"class": "medium"}}}  # fmt: skip
    assert runtime_transitions(s, {"h1->h4": up + down}) == {"h1->h4": {"to_prioritized_s": 2.0, "to_fair_s": 5.0}}
    assert runtime_transitions({**s, "params": {"case": "proactive"}}, {}) == {}
    # the switch's 0.25-s view of the same flow: on target 0.75 s after the change, back 1.5 s after
    fine = [{"t": 10 + k / 4, "mbps": 52.4 if k > 3 else 33.3} for k in range(1, 41)]
    fine += [{"t": 20 + k / 4, "mbps": 33.3 if k > 6 else 52.4} for k in range(1, 41)]
    got = runtime_transitions(s, {"h1->h4": up + down}, {"h1->h4": fine})["h1->h4"]
    assert got == {"to_prioritized_s": 2.0, "to_fair_s": 5.0, "switch_to_prioritized_s": 0.75,
                   "switch_to_fair_s": 1.5}  # fmt: skip


def test_dequeue_rates_of_a_class_at_one_port() -> None:
    def rec(t: float, s: str, deq6: int, deq7: int, other: int) -> dict:
        return {"t": t, "switch": s, "queues": [{"port": 4, "qid": 6, "deq_pkts": deq6},
                {"port": 4, "qid": 7, "deq_pkts": deq7}, {"port": 4, "qid": 5, "deq_pkts": other},
                {"port": 1, "qid": 7, "deq_pkts": 10 * other}]}  # fmt: skip

    records = [rec(0.25, "s1", 100, 0, 50), rec(0.5, "s2", 0, 0, 0), rec(0.5, "s1", 200, 0, 90),
               rec(0.75, "s1", 210, 250, 130)]  # fmt: skip
    rows = dequeue_rates(records, "s1", 4, {6, 7})
    # 100 then 260 frames of 1500 B in 0.25 s: 4.8 and 12.48 Mb/s (the queue change is followed)
    assert [r["t"] for r in rows] == [0.5, 0.75]
    assert [round(r["mbps"], 2) for r in rows] == [4.8, 12.48]


def test_run_csvs(tmp_path: Path) -> None:
    s = {"params": {"topo": "star", "case": "mpi", "alg": "strict", "proto": "udp", "link_mbps": 100},
         "flows": {"h2->h4": {"class": "medium", "phases": {"mpi": {"throughput_mbps": 20.5, "loss_pct": 1.25, "seconds": 9}}}},
         "mpi": {"latency_us": {"16": 80.5, "2": 70.0}, "max_us": {"2": 90.0, "16": 99.0}, "idle_latency_us": {"2": 60.0}},
         "transitions": {}}  # fmt: skip
    (tmp_path / "summary.json").write_text(json.dumps(s))
    (tmp_path / "series.json").write_text(json.dumps({"h2->h4": [{"t": 2.0, "mbps": 20.0}, {"t": 1.0, "mbps": 19.0,
                                                                                        "loss_pct": 2.5}]}))  # fmt: skip
    names = sorted(p.name for p in write_run_csvs(tmp_path))
    assert names == ["mpi.csv", "series.csv", "summary.csv"]
    rows = list(csv.reader((tmp_path / "series.csv").open()))
    assert rows[0][:5] == ["t", "flow", "class", "mbps", "loss_pct"]
    assert rows[1][:5] == ["1.0", "h2->h4", "medium", "19.0", "2.5"] and rows[2][4] == ""
    assert list(csv.reader((tmp_path / "mpi.csv").open()))[1:] == [["2", "70.0", "90.0", "60.0"],
                                                                  ["16", "80.5", "99.0", ""]]  # fmt: skip
    summ = list(csv.DictReader((tmp_path / "summary.csv").open()))
    assert summ == [{"topo": "star", "case": "mpi", "alg": "strict", "proto": "udp", "link_mbps": "100",
                     "flow": "h2->h4", "class": "medium", "phase": "mpi", "throughput_mbps": "20.5",
                     "share_pct": "", "loss_pct": "1.25", "owd_ms": "", "owd_max_ms": "", "owd_p50_ms": "", "owd_p99_ms": "",
                     "owd_p999_ms": "", "seconds": "9"}]  # fmt: skip


@pytest.mark.parametrize(
    ("metric", "ours", "theirs", "want"),
    [
        ("low_loss_pct", 57.3, 58, "agrees"),
        ("high_loss_pct", 36.5, 0, "ours higher (+36.5 pp)"),
        ("low_mbps", 22.4, 22, "agrees"),
        ("high_mbps", 4.0, 5.3, "ours lower (-25 %)"),
        ("high_owd_ms", 0.26, 33, "ours lower (x0.0079)"),
        ("high_owd_ms", 0.8, 0.2, "both under 1 ms"),
        ("mpi_16384_ms", 2000, 2600, "agrees"),  # within x1.5
        ("to_prioritized_s", 0.0, 4, "ours lower (-4 s)"),
        ("control_writes", 8, 8, "matches the formula"),
        ("control_writes", 6, 8, "differs (6 vs 8)"),
        ("high_mbps", None, 5.3, "–"),
    ],
)
def test_verdicts(metric: str, ours: float | None, theirs: float, want: str) -> None:
    assert verdict(metric, ours, theirs) == want


def test_setup_difference_names_rate_length_and_round_trips() -> None:
    row = {"case": "proactive", "link_mbps": 10.0, "duration_s": 30.0, "mpi_iters": 10}
    assert setup_diff(row, 10, 180, 100) == ["30 vs 180 s"]
    assert setup_diff({**row, "duration_s": 180.0}, 10, 180, 100) == []
    assert setup_diff({**row, "case": "mpi"}, 50, 180, 100) == ["10 vs 50 Mb/s", "10 vs 100 round trips per size"]


def test_paper_claims_say_when_best_effort_was_cut_off() -> None:
    from lanes.lab.sweep.report import paper_claims

    def row(alg: str, lat: dict[str, float]) -> dict:
        return {"topo": "tree2", "case": "mpi", "proto": "udp", "alg": alg, "link_mbps": 50.0,
                "mpi": {n: {"latency_us": {"mean": v}} for n, v in lat.items()}}  # fmt: skip

    full = {str(1 << i): 1000.0 * (i + 1) for i in range(15)}
    rows = [row("no", {"1": 2.0e6, "2": 2.1e6}), row("strict", full), row("rlsp-drr", {n: 2 * v for n, v in full.items()})]
    head, body = paper_claims(rows)
    assert head[1] == "ours (tree2, 50 Mb/s, UDP)", "the rate run, not the paper's"
    every = next(b for b in body if b[0].startswith("MPI: STRICT and RL-SP-DRR below NO"))
    assert every[1:] == ["2 of 2 sizes (13 not measured in all three: ping-pong cut off)", "holds"]
    strict_first = next(b for b in body if b[0].startswith("MPI: STRICT below RL-SP-DRR"))
    assert strict_first[2] == "holds"

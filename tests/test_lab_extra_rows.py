"""The thesis's extra rows (build-up, CPU, TCP retransmissions, convergence, stability) on small
synthetic series and a synthetic run directory."""

import json

import pytest
from lanes.lab import traffic
from lanes.lab.sweep import extra_rows as x

CLIENT_LOG = """\
[ ID] Interval            Transfer    Bandwidth       Write/Err  Rtry     Cwnd/RTT(var)        NetPwr
[  1] 0.0000-1.0000 sec  1.33 GBytes  11.4 Gbits/sec  10885/0          5     1023K/90(60) us  15852431
[  1] 1.0000-2.0000 sec  1.04 GBytes  8.90 Gbits/sec  8483/0         12     1023K/38(10) us  29260099
[  1] 0.0000-2.0124 sec  2.36 GBytes  10.1 Gbits/sec  19369/0         17     1023K/32(4) us  39422407
"""


def test_client_retries_per_second_without_the_summary_line():
    assert traffic.parse_client_retries(CLIENT_LOG) == [(1.0, 5), (2.0, 12)]


def test_buildup_is_the_first_second_at_ninety_percent_of_the_plateau():
    # rises 1 ms a second for 10 s from the start at t=30, then holds 10 ms until 60
    rows = [{"t": 30.0 + k, "owd_ms": float(min(k, 10))} for k in range(1, 31)]
    assert x.buildup_s(rows, 30.0, 60.0) == {"plateau_ms": 10.0, "buildup_s": 9.0}


def test_no_buildup_under_a_one_ms_plateau():
    rows = [{"t": float(k), "owd_ms": 0.3} for k in range(1, 21)]
    assert x.buildup_s(rows, 0.0, 20.0) == {"plateau_ms": 0.3, "buildup_s": None}


def test_stability_of_a_steady_and_of_an_alternating_rate():
    steady = [{"t": float(k), "mbps": 50.0} for k in range(1, 31)]
    assert x.stability(steady, 0.0, 30.0) == {"seconds": 30, "mean_mbps": 50.0, "cv": 0.0, "max_dev_pct": 0.0}
    alt = [{"t": float(k), "mbps": 9.0 if k % 2 else 11.0} for k in range(1, 31)]
    assert x.stability(alt, 0.0, 30.0) == {"seconds": 30, "mean_mbps": 10.0, "cv": 0.1, "max_dev_pct": 10.0}


def test_convergence_counts_from_the_change_until_the_rate_holds():
    # 30 Mb/s until 15, then 3 s of 45, then 20 Mb/s held: settles in the interval 18-19
    rows = [{"t": float(k), "mbps": 30.0 if k <= 15 else (45.0 if k <= 18 else 20.0)} for k in range(1, 31)]
    assert x.convergence_s(rows, 15.0, 30.0) == 3.0


def _run_dir(tmp_path, proto):
    rd = tmp_path / f"star-proactive-strict-{proto}"
    rd.mkdir()
    phases = [{"name": "low_only", "start_s": 0.0, "end_s": 20.0},
              {"name": "high_present", "start_s": 20.0, "end_s": 40.0, "changed_s": 20.0}]  # fmt: skip
    summary = {
        "params": {"topo": "star", "case": "proactive", "alg": "strict", "proto": proto, "link_mbps": 100.0,
                   "duration_s": 40.0},
        "phases": phases,
        "flows": {"h1->h4": {"class": "high", "phases": {}}, "h2->h4": {"class": "low", "phases": {}}},
    }  # fmt: skip
    (rd / "summary.json").write_text(json.dumps(summary))
    low = [{"t": float(k), "mbps": 90.0 if k <= 20 else 35.0, "owd_ms": 5.0} for k in range(1, 41)]
    high = [{"t": 20.0 + k, "mbps": 60.0, "owd_ms": float(min(k, 4))} for k in range(1, 21)]
    (rd / "series.json").write_text(json.dumps({"h1->h4": high, "h2->h4": low}))
    (rd / "cpu.jsonl").write_text("".join(json.dumps({"t": float(k), "s1": 40.0 if k <= 20 else 60.0, "system_pct": 99.0})
                                          + "\n" for k in range(1, 41)))  # fmt: skip
    (rd / "cell.json").write_text(json.dumps({"started_utc": "2026-11-27T14:00:00Z", "load1_start": 0.5}))

    def log(seconds):  # 2 retransmissions every second
        return "".join(f"[  1] {k - 1}.0000-{k}.0000 sec  1.0 MBytes  8.0 Mbits/sec  10/0  2  10K/100(1) us  1\n"
                       for k in range(1, seconds + 1))  # fmt: skip

    (rd / "client_h1_h4.txt").write_text(log(20))  # the high flow's clock starts at 20 s
    (rd / "client_h2_h4.txt").write_text(log(40))
    return rd


def test_export_then_rows_of_a_udp_cell(tmp_path):
    cell_dir = x.export_run(_run_dir(tmp_path, "udp"), tmp_path / "out" / "c")
    assert sorted(p.name for p in cell_dir.iterdir()) == ["cpu.csv", "run.json", "series.csv"]
    r = x.cell_rows(x.load_cell(cell_dir))
    assert r["switch_cpu_pct"] == 50.0  # 20 s at 40 % and 20 s at 60 %
    assert (r["high_plateau_ms"], r["buildup_s"]) == (4.0, 4.0)
    assert (r["low_buildup_s"], r["low_rebuild_s"]) == (1.0, 1.0)  # 5 ms from the first second
    assert r["retries_per_s"] is None and "convergence_s" not in r


def test_export_then_rows_of_a_tcp_cell(tmp_path):
    cell_dir = x.export_run(_run_dir(tmp_path, "tcp"), tmp_path / "out" / "c")
    cell = x.load_cell(cell_dir)
    assert len(cell["retries"]) == 60 and cell["load1_start"] == 0.5
    r = x.cell_rows(cell)
    # the seconds ending 23..40 s (2 s after the change): both flows, 2 retransmissions each
    assert r["retries_per_s"] == 4.0
    assert r["convergence_s"] == 0.0 and r["max_cv"] == 0.0
    assert r["stability_window_s"] == 18.0
    rows = x.write_cells_csv([cell_dir], tmp_path / "cells.csv")
    assert rows[0]["load1_start"] == 0.5
    assert (tmp_path / "cells.csv").read_text().splitlines()[0].startswith("topo,case,alg,proto,link_mbps")


def test_sweep_rows_reads_the_named_columns(tmp_path):
    p = tmp_path / "sweep.csv"
    p.write_text(
        "topo,case,alg,proto,link_mbps,load1,switch_cpu_pct,to_fair_s\nstar,runtime,no,tcp,100,0.6,22.1,\n"
    )
    assert x.sweep_rows(p, ["switch_cpu_pct", "to_fair_s"]) == [
        {"topo": "star", "case": "runtime", "alg": "no", "proto": "tcp", "link_mbps": 100.0, "load1": 0.6,
         "switch_cpu_pct": 22.1, "to_fair_s": None}
    ]  # fmt: skip


def test_cpu_table_averages_the_load_cases_per_algorithm_and_rate(tmp_path):
    d = tmp_path / "thesis"
    d.mkdir()
    (d / "sweep.csv").write_text(
        "topo,case,alg,proto,link_mbps,load1,switch_cpu_pct\n"
        "star,runtime,no,tcp,100,0.6,22\nstar,proactive,no,tcp,100,0.4,24\nstar,mpi,no,tcp,100,0.1,90\n"
        "star,runtime,strict,tcp,100,0.2,20\n"
    )
    assert x.cpu_table([d / "sweep.csv"]) == [
        {"report": "thesis", "topo": "star", "proto": "tcp", "alg": "no", "link_mbps": 100.0, "cells": 2,
         "switch_cpu_pct": 23.0, "load1_max": 0.6},
        {"report": "thesis", "topo": "star", "proto": "tcp", "alg": "strict", "link_mbps": 100.0, "cells": 1,
         "switch_cpu_pct": 20.0, "load1_max": 0.2},
    ]  # fmt: skip


@pytest.mark.parametrize("argv", [["--export", "x"], ["--cells", "y"], ["--cpu", "z"]])
def test_cli_needs_its_destination(argv):
    with pytest.raises(SystemExit):
        x.main(argv)


def test_a_tcp_run_summary_counts_each_clients_retransmissions(tmp_path):
    from types import SimpleNamespace

    from lanes.lab import summary

    flow = SimpleNamespace(src="h1", dst="h4", key="h1->h4")
    (tmp_path / "client_h1_h4.txt").write_text(CLIENT_LOG)
    plan = SimpleNamespace(
        flows=[SimpleNamespace(flow=flow), SimpleNamespace(flow=SimpleNamespace(src="h2", dst="h4"))]
    )
    assert summary._tcp_retries(tmp_path, plan) == {"h1->h4": 17}  # 5 + 12; h2's client left no log


def test_export_of_a_directory_that_is_no_run_is_one_line(tmp_path, capsys):
    assert x.main(["--export", str(tmp_path), "--to", str(tmp_path / "out")]) == 1
    assert capsys.readouterr().err == f"error: {tmp_path}: not a lab run directory (no summary.json)\n"

"""`lanes consolidate delay` and `lanes consolidate cv` as a user runs them (in-process `lanes` main)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from lanes.cli import main
from lanes.consolidate.loader import write_day
from lanes.consolidate.synthetic import SynthParams, generate


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def table(out: str) -> dict[str, float]:
    return {k: float(v) for k, v in (line.split("\t") for line in out.splitlines() if line.count("\t") == 1)}


def test_delay_fig3_spike_on_one_core(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    series = tmp_path / "spike.csv"
    series.write_text("util_pct\n150\n100\n100\n100\n")  # a header line is allowed
    rc, out, _ = run(capsys, "consolidate", "delay", "--cores", "1", str(series))
    assert rc == 0
    got = table(out)
    assert got["total_delay_min"] == pytest.approx(2.0)  # 0.5 min of delay in each of 4 minutes
    assert got["delayed_pct"] == pytest.approx(100.0)
    rc, out, _ = run(capsys, "consolidate", "delay", "--cores", "1", "--series", str(series))
    rows = [line.split("\t") for line in out.splitlines()[1:5]]
    assert [float(r[3]) for r in rows] == pytest.approx([0.5] * 4)  # delay_min column
    assert [float(r[2]) for r in rows] == pytest.approx([50.0] * 4)  # backlog in percent-minutes


def test_delay_steady_full_core_and_step(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    steady = tmp_path / "steady.csv"
    steady.write_text("\n".join(["100"] * 30) + "\n")
    rc, out, _ = run(capsys, "consolidate", "delay", "--cores", "1", str(steady))
    assert rc == 0 and table(out)["total_delay_min"] == 0.0
    # 12 cores, 5-minute samples: 1500 % for 5 minutes leaves 1500 percent-minutes = 1.25 min of delay,
    # held over the next 5-minute sample at 1200 %: total 1.25 * 10 = 12.5 minutes.
    five = tmp_path / "five.csv"
    five.write_text("1500\n1200\n")
    rc, out, _ = run(capsys, "consolidate", "delay", "--cores", "12", "--step-s", "300", str(five))
    assert rc == 0 and table(out)["total_delay_min"] == pytest.approx(12.5)


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        ("10\nabc\n", (), "not a number"),
        ("10\n-5\n", (), ">= 0"),
        ("", (), "no values"),
        ("10\n", ("--step-s", "0"), "--step-s"),
    ],
)
def test_delay_bad_input_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, args: tuple[str, ...], message: str
) -> None:
    f = tmp_path / "bad.csv"
    f.write_text(content)
    rc, out, err = run(capsys, "consolidate", "delay", "--cores", "1", *args, str(f))
    assert rc != 0 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err and "Traceback" not in err


@pytest.fixture(scope="module")
def small_trace_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    trace = generate(SynthParams(days=3, vms=60, seed=5))
    d = tmp_path_factory.mktemp("synth")
    for i, day in enumerate(trace.days):
        write_day(d / f"{day}.csv.gz", trace.vms, trace.util[i])
    return d


def test_cv_writes_summary_report_and_plots(
    small_trace_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    rc, _, err = run(
        capsys,
        "consolidate",
        "cv",
        "--data",
        str(small_trace_dir),
        "--min-days",
        "2",
        "--cores",
        "4,8",
        "--thresholds",
        "70,100",
        "--delay-limits",
        "1,100",
        "--packer",
        "util,delay,delay-corr",
        "--out",
        str(out),
        "--jobs",
        "1",
    )
    assert rc == 0, err
    assert "fold 3/3" in err  # progress on stderr
    summary = json.loads((out / "summary.json").read_text())
    rows = summary["rows"]
    # util: 2 cores x 2 thresholds; each delay packer: 2 x 2 x 2 limits; then the same pooled over cores.
    assert len(rows) == (4 + 8 + 8) + (2 + 4 + 4)
    columns = {
        "delay_avg_min",
        "delay_median_min",
        "delay_max_min",
        "fill_avg_pct",
        "fill_median_pct",
        "fill_max_pct",
        "delayed_time_avg_pct",
        "delay_when_delayed_avg_min",
    }
    assert all(columns <= set(r) for r in rows)
    # Bins hold all the test day's work: avg fill x bins x capacity = the fleet's demand, summed over folds.
    trace_util = np.stack(
        [
            np.loadtxt(small_trace_dir / f"day0{i}.csv.gz", delimiter=",", skiprows=1, usecols=range(1, 1441))
            for i in (1, 2, 3)
        ]
    )
    demand = trace_util.sum(axis=1).mean(axis=1).sum()  # sum over folds of mean summed demand
    for r in rows:
        if r["cores"] == "all":
            continue
        held = r["fill_avg_pct"] / 100 * r["points"] * 100 * r["cores"]
        assert held == pytest.approx(demand, rel=1e-9), r
        assert r["delay_median_min"] <= r["delay_max_min"] and r["fill_median_pct"] <= r["fill_max_pct"]
    report = (out / "report.md").read_text()
    assert "Table I shape" in report and "Table II shape" in report and "*paper*" in report
    for p in ("util", "delay", "delay-corr"):
        assert (out / f"fill_vs_delay_{p}.png").stat().st_size > 10_000


def test_cv_missing_data_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    rc, _, err = run(capsys, "consolidate", "cv", "--data", str(tmp_path / "nope"), "--out", str(tmp_path))
    assert rc != 0 and len(err.strip().splitlines()) == 1 and "not a directory" in err
    # No --data: the PlanetLab default; a missing trace names where it looked.
    monkeypatch.setenv("LANES_PLANETLAB", str(tmp_path / "absent"))
    rc, _, err = run(capsys, "consolidate", "cv", "--out", str(tmp_path / "o"))
    assert rc != 0 and len(err.strip().splitlines()) == 1 and "PlanetLab data not found" in err
    rc, _, err = run(capsys, "consolidate", "cv", "--data", str(tmp_path), "--packer", "worst", "--out", "x")
    assert rc != 0 and "--packer" in err


def test_number_lists_as_the_issue_writes_them() -> None:
    from lanes.consolidate.cli import _numbers
    from lanes.errors import LanesError

    assert _numbers("30,40,...,100", "t") == [30, 40, 50, 60, 70, 80, 90, 100]
    assert _numbers("30:100:10", "t") == _numbers("30,40,...,100", "t")
    assert _numbers("1,10,100,1000", "t") == [1, 10, 100, 1000]
    for bad in ("30,...,100", "0,10", "12,x"):
        with pytest.raises(LanesError):
            _numbers(bad, "t")

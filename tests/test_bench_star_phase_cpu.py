"""bench/star_phase_cpu.py: a lab run's CPU and loop counts split by phase (the first second of
each phase left out, the loop's cumulative counters turned into rates), and the scheduler's
wake-ups counted by waker and wakee from perf script's lines."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import star_phase_cpu  # noqa: E402


def write_run(d: Path) -> None:
    d.mkdir()
    phases = [
        {"name": "low_only", "start_s": 0, "end_s": 5.0},
        {"name": "high_present", "start_s": 5.0, "end_s": 10.0},
    ]
    (d / "summary.json").write_text(json.dumps({"phases": phases}))
    # the first second of each phase (t < start + 1) is a start-up the means leave out
    cpu = [
        {
            "t": t + 0.5,
            "system_pct": (90.0 if t in (0, 5) else 40.0 if t < 5 else 60.0),
            "s1": 10.0 if t < 5 else 20.0,
        }
        for t in range(10)
    ]
    (d / "cpu.jsonl").write_text("".join(json.dumps(r) + "\n" for r in cpu))
    loop = [{"t": t + 0.5, "turns": 1000 * t if t <= 5 else 5000 + 3000 * (t - 5), "woken_by_arrival": 0 if t <= 5 else 2000 * (t - 5),
             "woken_by_timer": 1000 * min(t, 5) + (1000 * (t - 5) if t > 5 else 0), "turns_rx_only": 0} for t in range(10)]  # fmt: skip
    (d / "loop.jsonl").write_text("".join(json.dumps(r) + "\n" for r in loop))


def test_each_phase_gets_its_own_means_and_loop_rates(tmp_path: Path) -> None:
    write_run(tmp_path / "run")
    got = star_phase_cpu.per_phase(tmp_path / "run")
    assert got["low_only"]["system_pct"] == 40.0 and got["high_present"]["system_pct"] == 60.0
    assert got["low_only"]["switch_pct"] == 10.0 and got["high_present"]["switch_pct"] == 20.0
    assert got["low_only"]["turns_per_s"] == 1000 and got["high_present"]["turns_per_s"] == 3000
    assert got["high_present"]["woken_by_arrival_per_s"] == 2000
    assert got["high_present"]["woken_by_timer_per_s"] == 1000


def test_the_kernels_run_has_no_switch_figures(tmp_path: Path) -> None:
    d = tmp_path / "run"
    write_run(d)
    rows = [json.loads(x) for x in (d / "cpu.jsonl").read_text().splitlines()]
    (d / "cpu.jsonl").write_text(
        "".join(json.dumps({k: v for k, v in r.items() if k != "s1"}) + "\n" for r in rows)
    )
    (d / "loop.jsonl").unlink()
    got = star_phase_cpu.per_phase(d)
    assert got["high_present"] == {"system_pct": 60.0, "switch_pct": None}


def test_wake_ups_are_counted_by_waker_and_wakee_and_interrupts_by_name() -> None:
    script = "\n".join(
        [
            "  lanes-dataplane sched:sched_waking: comm=iperf pid=12 prio=120 target_cpu=001",
            "  lanes-dataplane sched:sched_waking: comm=iperf pid=13 prio=120 target_cpu=000",
            "      ksoftirqd/1 sched:sched_waking: comm=iperf pid=12 prio=120 target_cpu=001",
            "          swapper irq_vectors:reschedule_entry: vector=253",
        ]
    )
    got = star_phase_cpu.count_wakes(script, 0.5)
    # a thread's instance number is dropped (ksoftirqd/1 -> ksoftirqd); counts are per second
    assert got == {"lanes-dataplane -> iperf": 4, "ksoftirqd -> iperf": 2, "reschedule_entry": 2}

"""The whole machine's CPU from the CPUs' idle residency (lanes/lab/machine_cpu.py): the
arithmetic, the task run-time fallback, and a process that spins through the window is seen
whole, where /proc/stat's tick-sampled columns may miss work between ticks."""

from __future__ import annotations

import multiprocessing
import time

from lanes.lab import machine_cpu
from lanes.lab.machine_cpu import CpuSnapshot, busy_pct


def test_busy_is_wall_time_on_every_cpu_less_idle() -> None:
    a = CpuSnapshot(wall_s=10.0, idle_s=100.0, run_s=None, cpus=2)
    b = CpuSnapshot(wall_s=12.0, idle_s=103.0, run_s=None, cpus=2)
    # 4 CPU-seconds of wall time, 3 idle: one CPU-second busy in 2 s
    assert busy_pct(a, b) == 50.0


def test_without_cpuidle_the_tasks_run_time_counts() -> None:
    a = CpuSnapshot(wall_s=0.0, idle_s=None, run_s=5.0)
    b = CpuSnapshot(wall_s=4.0, idle_s=None, run_s=7.0)
    assert busy_pct(a, b) == 50.0


def test_an_empty_or_backward_window_reads_zero() -> None:
    a = CpuSnapshot(wall_s=1.0, idle_s=10.0, run_s=None, cpus=2)
    assert busy_pct(a, a) == 0.0
    assert busy_pct(a, CpuSnapshot(wall_s=2.0, idle_s=13.0, run_s=None, cpus=2)) == 0.0


def _spin(until: float) -> None:
    while time.monotonic() < until:
        pass


def test_a_process_spinning_through_the_window_is_counted() -> None:
    until = time.monotonic() + 1.5
    p = multiprocessing.get_context("fork").Process(target=_spin, args=(until,))
    p.start()
    try:
        time.sleep(0.2)
        before = machine_cpu.snapshot()
        time.sleep(1.0)
        after = machine_cpu.snapshot()
    finally:
        p.join()
    # one core spun the whole second: at least most of a core, whatever else ran or idled
    assert busy_pct(before, after) >= 80.0

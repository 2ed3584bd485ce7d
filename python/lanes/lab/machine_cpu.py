"""The whole machine's CPU use over a window, from the time its CPUs spent idle.

/proc/stat's user and system columns are filled by sampling at the scheduler tick on kernels with
tick-based accounting (CONFIG_TICK_CPU_ACCOUNTING, 250 Hz on the project's VM): a tick charges
its whole 4 ms to whatever runs at that instant, so timer-driven work that falls between ticks
is missed or, in phase with them, overcounted. A saturated port through the kernel's bridge +
HTB read 9-10 % there (once 65 %) against 26-32 % from the CPUs' idle residency and from the sum
of every task's run time (bench/RESULTS.md, "Each port its own batch window, and the whole
machine measured exactly"). cpuidle's residency counters
(/sys/devices/system/cpu/cpuN/cpuidle/stateM/time, microseconds, polling included) are exact;
busy is then wall time times CPUs less idle. Where cpuidle is missing, the sum of every task's
run time (/proc/*/task/*/schedstat, nanoseconds) stands in: it misses only interrupts taken
while a CPU idled.
"""

from __future__ import annotations

import glob
import time
from dataclasses import dataclass
from pathlib import Path

IDLE_FILES = "/sys/devices/system/cpu/cpu[0-9]*/cpuidle/state[0-9]*/time"
TASK_FILES = "/proc/[0-9]*/task/[0-9]*/schedstat"


@dataclass(frozen=True)
class CpuSnapshot:
    """One reading: the monotonic clock, and either the CPUs' idle seconds (and how many CPUs
    report it) or the tasks' run seconds."""

    wall_s: float
    idle_s: float | None
    run_s: float | None
    cpus: int = 0


def _sum_files(pattern: str, scale: float) -> float:
    total = 0
    for f in glob.glob(pattern):
        try:
            total += int(Path(f).read_text().split()[0])
        except (OSError, ValueError, IndexError):  # a task that ended between glob and read
            continue
    return total * scale


def tasks_run_s() -> float:
    """Every task's run time so far, summed (exact: schedstat)."""
    return _sum_files(TASK_FILES, 1e-9)


def snapshot() -> CpuSnapshot:
    """The machine's idle (or run) time so far."""
    files = glob.glob(IDLE_FILES)
    if files:
        cpus = len({Path(f).parents[2] for f in files})
        return CpuSnapshot(time.monotonic(), _sum_files(IDLE_FILES, 1e-6), None, cpus)
    return CpuSnapshot(time.monotonic(), None, tasks_run_s())


def busy_pct(before: CpuSnapshot, after: CpuSnapshot) -> float:
    """CPU used between two snapshots, in percent of one core (200 % = two cores busy)."""
    wall = after.wall_s - before.wall_s
    if wall <= 0:
        return 0.0
    if before.idle_s is not None and after.idle_s is not None:
        busy = after.cpus * wall - (after.idle_s - before.idle_s)
    else:
        busy = (after.run_s or 0.0) - (before.run_s or 0.0)
    return round(max(busy, 0.0) / wall * 100.0, 1)

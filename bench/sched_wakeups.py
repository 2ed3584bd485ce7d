"""How a thread is woken: `perf sched record` around a run, then from `perf sched timehist -w`
the thread's scheduling delay (woken to running) and how often it ran on another CPU than the
task that woke it (a wake-up across CPUs needs an interrupt to the other one; on a VM whose
idle virtual CPU has halted, that is an exit to the host)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

# "   81679.791577 [0001]  sockperf[9045]    awakened: lanes-dataplane[9041/9023]"
# "   81679.791661 [0000]  lanes-dataplane[9041/9023]   0.108   0.030   0.052"
LINE = re.compile(r"\s*([\d.]+) \[(\d+)\]\s+(\S+)\s+(.*)")


def record(out: Path, seconds: float) -> subprocess.Popen:
    """Starts recording every CPU's scheduler events for `seconds`; wait() on it."""
    return subprocess.Popen(
        ["perf", "sched", "record", "-o", str(out), "--", "sleep", str(seconds)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def wakeups(data: Path, thread: str) -> dict:
    """The scheduling delay of `thread` (a comm prefix) per wake-up, in us (p50, p90), and the
    share of its wake-ups that ran on another CPU than their waker's."""
    r = subprocess.run(["perf", "sched", "timehist", "-i", str(data), "-w"], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"perf sched timehist: {r.stderr.strip()[-300:]}")
    waker_cpu: int | None = None
    delays: list[float] = []
    cross = woken = 0
    for line in r.stdout.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        cpu, task, rest = int(m[2]), m[3], m[4]
        if f"awakened: {thread}" in rest:
            waker_cpu = cpu
        elif task.startswith(thread) and "awakened" not in rest:
            fields = rest.split()  # wait time, scheduling delay, run time (ms)
            if len(fields) >= 3 and waker_cpu is not None:
                delays.append(float(fields[1]) * 1000)
                woken += 1
                cross += cpu != waker_cpu
            waker_cpu = None
    if not delays:
        return {"wakeups": 0}
    delays.sort()
    return {
        "wakeups": woken,
        "sched_delay_p50_us": delays[len(delays) // 2],
        "sched_delay_p90_us": delays[int(0.9 * (len(delays) - 1))],
        "other_cpu_share": cross / woken,
    }

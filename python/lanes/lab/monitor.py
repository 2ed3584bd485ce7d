"""Sampling during a run: TM queue depths and counters of every lanes switch (its `stats_json`
over the command port, every period), the queueing-delay histograms and receive-ring backlogs the
switches measure (from the read of each second, which resets them), each switch's event-loop
counters (loop.jsonl, cumulative), and CPU use of each switch process and of the whole machine."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from lanes.errors import LanesError
from lanes.lab import machine_cpu
from lanes.lab.switch_stats import read_stats
from lanes.switch.command_client import CommandClient

CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_cpu_ticks(pid: int) -> int | None:
    """utime + stime of a process (all its threads), in clock ticks."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[11]) + int(fields[12])


def stolen_cpu() -> tuple[int, int]:
    """(stolen, total) jiffies over all cores (/proc/stat's steal column)."""
    v = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (v[7] if len(v) > 7 else 0), sum(v)


class Monitor:
    """Background sampler; writes telemetry.jsonl and cpu.jsonl into the run directory."""

    def __init__(self, out: Path, t0: float, ctl_ports: dict[str, int], pids: dict[str, int],
                 period_s: float = 0.25) -> None:  # fmt: skip
        self.out = out
        self.t0 = t0
        self.ctl_ports = ctl_ports
        self.pids = pids
        self.period = period_s
        self.stop_evt = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="lab-monitor", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stop_evt.set()
        self.thread.join(timeout=10)

    def _loop(self) -> None:
        ctls = {name: CommandClient(port) for name, port in self.ctl_ports.items()}
        last_cpu = {n: (time.monotonic(), proc_cpu_ticks(p)) for n, p in self.pids.items()}
        last_sys = (machine_cpu.snapshot(), stolen_cpu())
        next_cpu = time.monotonic() + 1.0
        with (
            open(self.out / "telemetry.jsonl", "w") as tel,
            open(self.out / "cpu.jsonl", "w") as cpu,
            open(self.out / "delay.jsonl", "w") as delay,
            open(self.out / "rx.jsonl", "w") as rx,
            open(self.out / "loop.jsonl", "w") as loop,
        ):
            while not self.stop_evt.wait(self.period):
                now = time.monotonic()
                t = round(now - self.t0, 3)
                each_second = now >= next_cpu
                if each_second:
                    next_cpu = now + 1.0
                for name, c in ctls.items():
                    try:  # the read of each second also resets the delay and rx backlog records
                        stats = read_stats(c, reset=each_second)
                    except (OSError, ValueError, LanesError):  # a switch that died: the run stops it
                        continue
                    busy = [q.depth_row() for q in stats.queues() if q.enq_pkts > 0]
                    tel.write(json.dumps({"t": t, "switch": name, "queues": busy}) + "\n")
                    if each_second:
                        delays = [q.delay_row() for q in stats.queues() if q.delay.pkts > 0]
                        delay.write(json.dumps({"t": t, "switch": name, "queues": delays}) + "\n")
                        rx.write(json.dumps({"t": t, "switch": name, "ports": stats.rx_backlog()}) + "\n")
                        # the loop's counters since start: its turns (wake-ups) are its CPU cost
                        loop.write(json.dumps({"t": t, "switch": name, **stats.loop,
                                               "wakeups_by_port": stats.wakeups_by_port()}) + "\n")
                if each_second:
                    rec: dict[str, float] = {"t": t}
                    for n, p in self.pids.items():
                        ticks = proc_cpu_ticks(p)
                        t_prev, k_prev = last_cpu[n]
                        if ticks is not None and k_prev is not None:
                            rec[n] = round(100.0 * (ticks - k_prev) / CLK_TCK / (now - t_prev), 1)
                        last_cpu[n] = (now, ticks)
                    m_now, s_now = machine_cpu.snapshot(), stolen_cpu()
                    rec["system_pct"] = machine_cpu.busy_pct(last_sys[0], m_now)
                    # share of the machine's CPU time the hypervisor gave to someone else
                    tot_d = s_now[1] - last_sys[1][1]
                    rec["steal_pct"] = round(100.0 * (s_now[0] - last_sys[1][0]) / tot_d, 2) if tot_d else 0.0
                    last_sys = (m_now, s_now)
                    cpu.write(json.dumps(rec) + "\n")
        for c in ctls.values():
            c.close()

#!/usr/bin/env python3
"""What a saturated port costs in CPU: lanes (rlsp-drr, tm_basic) against the kernel's bridge +
tc HTB shaped like it, between the same namespaces in the same run. h1 (high class, 60 % of the
port) and h2, h3 (low classes) each offer 60 % of the port's rate toward h4 (iperf3 UDP, 1400 B
datagrams). Per contender and port rate: the whole machine's CPU (all processes, from the CPUs'
idle residency, lanes/lab/machine_cpu.py; 200 % = both cores) and, for lanes, the switch
process's CPU with its data plane thread's user and system time. Needs root.

    sudo .venv/bin/python bench/switch_cpu.py [--rates 100,200] [--batch-us default,250] [--wake leading,high,arrivals]
        [--rx-mode packet,afxdp] [--reply-poll-us 0,100] [--perf] [--json OUT]

On veth a sender's transmit runs the receiving host's network stack in the sender's context, so
the switch's system time includes its receivers' packet delivery (the kernel pays it either
way). With --perf, a second measuring pass samples the data plane thread (perf record -g) and
reports the share of its samples under net_rx_action: that part is the receivers', the rest is
the switch's own cost. perf is kept out of the first pass, whose figures it would inflate.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))
from lanes.lab import machine_cpu  # noqa: E402
from netns import Star, UdpFlows  # noqa: E402
from switch_latency import setup_htb, setup_lanes  # noqa: E402

TICK = 100  # USER_HZ: /proc's clock ticks per second


def task_times(path: str) -> tuple[int, int]:
    f = Path(path).read_text().rsplit(")", 1)[1].split()
    return int(f[11]), int(f[12])


def dataplane_tid(pid: int) -> int:
    for task in Path(f"/proc/{pid}/task").iterdir():
        if (task / "comm").read_text().strip() == "lanes-dataplane":
            return int(task.name)
    raise RuntimeError("no lanes-dataplane thread in the switch process")


def switch_pid(star: Star) -> int:
    r = star.ns(star.sw, "pgrep", "-f", "lanes switch")
    return int(r.stdout.split()[0])


def loop_turns(star: Star) -> tuple[int, int]:
    """(turns, frames sent) of the switch's event loop so far (`stats_json`)."""
    doc = json.loads(star.ctl("stats_json").strip().splitlines()[-1])
    return doc["event_loop"]["turns"], sum(p["tx_pkts"] for p in doc["ports"])


def run_ns(path: str) -> int:
    """A task's run time so far, exact (schedstat's first field)."""
    return int(Path(path).read_text().split()[0])


def measure_window(seconds: float, pid: int | None) -> dict:
    """CPU over `seconds`: the machine's, and the switch's if there is one."""
    m0 = machine_cpu.snapshot()
    tid = dataplane_tid(pid) if pid else None
    p0 = task_times(f"/proc/{pid}/stat") if pid else (0, 0)
    t0 = task_times(f"/proc/{pid}/task/{tid}/stat") if tid else (0, 0)
    r0 = run_ns(f"/proc/{pid}/task/{tid}/schedstat") if tid else 0
    w0 = time.monotonic()
    time.sleep(seconds)
    dt = time.monotonic() - w0
    out = {"machine_cpu_pct": machine_cpu.busy_pct(m0, machine_cpu.snapshot())}
    if pid and tid:
        p1 = task_times(f"/proc/{pid}/stat")
        t1 = task_times(f"/proc/{pid}/task/{tid}/stat")
        pct = lambda a, b: round(100.0 * (a - b) / TICK / dt, 1)  # noqa: E731
        out["switch_cpu_pct"] = pct(sum(p1), sum(p0))
        out["dataplane_user_pct"] = pct(t1[0], t0[0])
        out["dataplane_system_pct"] = pct(t1[1], t0[1])
        out["dataplane_run_pct"] = round(1e-7 * (run_ns(f"/proc/{pid}/task/{tid}/schedstat") - r0) / dt, 2)
    return out


def receivers_share(pid: int, seconds: float, tmp: Path) -> float:
    """Share of the data plane thread's perf samples spent in receivers' net_rx_action."""
    data = tmp / "perf.data"
    tid = dataplane_tid(pid)
    subprocess.run(
        ["perf", "record", "-q", "-g", "-t", str(tid), "-o", str(data), "--", "sleep", str(seconds)],
        check=True,
        capture_output=True,
    )
    rep = subprocess.run(
        ["perf", "report", "-i", str(data), "--children", "--sort", "sym", "--stdio", "-g", "none"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    m = re.search(r"^\s+([\d.]+)%\s+[\d.]+%\s+\[k\] net_rx_action$", rep, re.M)
    return float(m.group(1)) / 100 if m else 0.0


def run_one(contender: str, lanes_args: list[str] | None, mbps: int, seconds: float, perf: bool,
            tmp: Path) -> dict:  # fmt: skip
    """One contender at one port rate: the kernel's bridge + HTB when `lanes_args` is None."""
    with Star(4) as star:
        if lanes_args is None:
            setup_htb(star, port_mbps=mbps)
        else:
            setup_lanes(star, tmp, lanes_args, port_mbps=mbps)
        pid = switch_pid(star) if lanes_args is not None else None
        offered = 0.6 * mbps
        load_s = seconds * (2 if perf else 1) + 6
        log_dir = tmp / f"{contender.replace(' ', '_')}_{mbps}_{time.monotonic_ns()}"
        log_dir.mkdir()
        load = UdpFlows(star, log_dir, {1: offered, 2: offered, 3: offered}, seconds=load_s)
        time.sleep(2.0)
        turns0 = loop_turns(star) if pid else None
        r = measure_window(seconds, pid)
        if turns0 is not None:
            turns1 = loop_turns(star)
            turns, sent = turns1[0] - turns0[0], turns1[1] - turns0[1]
            # each turn's cost is what the window saves: a wake-up of the data plane thread
            r["loop_turns_per_s"] = round(turns / seconds)
            r["frames_per_turn"] = round(sent / turns, 2) if turns else None
        if perf and pid:
            share = receivers_share(pid, seconds, tmp)
            r["receivers_share_of_dataplane"] = round(share, 3)
            r["switch_own_cpu_pct"] = round(r["switch_cpu_pct"] * (1 - share), 1)
        r["received_mbps"] = {f"h{h}": round(v["mbps"], 1) for h, v in load.received().items()}
        return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rates", default="100,200", help="port rates in Mb/s, comma-separated")
    ap.add_argument("--seconds", type=float, default=8.0, help="measuring window per run")
    ap.add_argument("--batch-us", default="default",
                    help="lanes's batch windows to try, comma-separated ('default': the switch's own)")  # fmt: skip
    ap.add_argument(
        "--wake", help="lanes's wake settings to try, comma-separated (leading, high, arrivals; default: the switch's)"
    )
    ap.add_argument(
        "--rx-mode", help="lanes's port sockets to try, comma-separated (packet, afxdp; default: packet)"
    )
    ap.add_argument(
        "--reply-poll-us",
        help="lanes's --reply-poll-us values to try, comma-separated (default: the switch's)",
    )
    ap.add_argument("--perf", action="store_true", help="also split off the receivers' share with perf")
    ap.add_argument("--json", type=Path, help="write the results here")
    args = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for mbps in (int(x) for x in args.rates.split(",")):
            contenders: list[tuple[str, list[str] | None]] = []
            for b in args.batch_us.split(","):
                for w in args.wake.split(",") if args.wake else [None]:
                    for rx in args.rx_mode.split(",") if args.rx_mode else [None]:
                        for rp in args.reply_poll_us.split(",") if args.reply_poll_us else [None]:
                            name = "lanes rlsp-drr" + (f" batch {b} us" if b != "default" else "")
                            name += f" wake {w}" if w else ""
                            name += (f" rx {rx}" if rx else "") + (f" reply {rp} us" if rp else "")
                            extra = ["--wake", w] if w else []
                            extra += ["--rx-mode", rx] if rx else []
                            extra += ["--reply-poll-us", rp] if rp else []
                            window = [] if b == "default" else ["--batch-us", b]
                            contenders.append((name, [*window, *extra]))
            for contender, lanes_args in [*contenders, ("linux htb", None)]:
                r = {"contender": contender, "port_mbps": mbps}
                r.update(run_one(contender, lanes_args, mbps, args.seconds, args.perf, tmp))
                results.append(r)
                print(json.dumps(r), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

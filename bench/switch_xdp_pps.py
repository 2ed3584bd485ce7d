#!/usr/bin/env python3
"""Packets per second through one switch when neither the generator nor the sink limits it:
lanes with AF_PACKET ports, lanes with AF_XDP ports (both tm_basic, rl-sp-drr, the switch pinned
to CPU 1) and the kernel bridge, at 64 B and 1514 B frames. Needs root.

    sudo .venv/bin/python bench/switch_xdp_pps.py [--sizes 60,1514] [--seconds 5] [--json OUT]

Namespaces gen, sw and sink (removed on exit, also on failure): gen's veth sends frames with
BPF_PROG_RUN live frames (bench/xdp_pktgen.py gen, pinned to CPU 0) into the switch's port 1;
port 2's peer in sink drops them in a native XDP program that counts them. Per run: offered pps
(generator), pps the contender took in (lanes: its port 1 rx counter; bridge: port 1's rx minus
its drops), pps out (the sink's count), the switch's CPU (lanes process, from schedstat; for
the bridge the softirq time of both CPUs), and the load average before the run (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LANES = str(REPO / ".venv" / "bin" / "lanes")
PKTGEN = str(REPO / "bench" / "xdp_pktgen.py")
TICK = os.sysconf("SC_CLK_TCK")
COMMANDS = """table_add ipv4_lpm ipv4_forward 10.0.1.2/32 => 00:00:00:00:01:02 2
table_add src_ip_prio set_priority 10.0.1.1/32 => 7 0 7000
"""
CONTENDERS = ("bridge", "lanes-packet", "lanes-afxdp")


def sh(*cmd: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=60)


class Topology:
    """gen:g0 <-> sw:p1, sw:p2 <-> sink:k0; every process started is stopped by PID."""

    def __init__(self) -> None:
        tag = "xp" + uuid.uuid4().hex[:6]
        self.gen, self.sw, self.sink = f"{tag}-gen", f"{tag}-sw", f"{tag}-sink"
        self.procs: list[subprocess.Popen] = []

    def __enter__(self) -> Topology:
        try:
            for ns in (self.gen, self.sw, self.sink):
                sh("ip", "netns", "add", ns)
            sh(
                "ip",
                "link",
                "add",
                "p1",
                "netns",
                self.sw,
                "type",
                "veth",
                "peer",
                "name",
                "g0",
                "netns",
                self.gen,
            )
            sh(
                "ip",
                "link",
                "add",
                "p2",
                "netns",
                self.sw,
                "type",
                "veth",
                "peer",
                "name",
                "k0",
                "netns",
                self.sink,
            )
            for ns, dev in ((self.gen, "g0"), (self.sw, "p1"), (self.sw, "p2"), (self.sink, "k0")):
                self.ns(ns, "ip", "link", "set", dev, "up")
            self.ns(self.sw, "ip", "link", "set", "lo", "up")  # the switch's ctl port
            self.ns(self.sw, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
            # veth takes frames from ndo_xdp_xmit only when its peer runs NAPI: GRO on does that
            # without an XDP program (plain UDP is not coalesced)
            self.ns(self.sw, "ethtool", "-K", "p1", "gro", "on")
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def ns(self, name: str, *cmd: str, check: bool = True) -> subprocess.CompletedProcess:
        return sh("ip", "netns", "exec", name, *cmd, check=check)

    def start(self, name: str, *cmd: str, log: Path | None = None) -> subprocess.Popen:
        out = open(log, "w") if log else subprocess.PIPE  # noqa: SIM115 - closed with the process
        p = subprocess.Popen(
            ["ip", "netns", "exec", name, *cmd], stdout=out, stderr=subprocess.STDOUT, text=True
        )
        self.procs.append(p)
        return p

    def stop(self, p: subprocess.Popen) -> None:
        if p.poll() is None:
            p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()

    def close(self) -> None:
        for p in self.procs:
            self.stop(p)
        for ns in (self.gen, self.sw, self.sink):
            sh("ip", "netns", "del", ns, check=False)


def cpu_ticks() -> list[list[int]]:
    """Per CPU: user, nice, system, idle, iowait, irq, softirq, steal (/proc/stat)."""
    return [[int(x) for x in line.split()[1:9]] for line in Path("/proc/stat").read_text().splitlines()
            if re.match(r"cpu\d", line)]  # fmt: skip


def proc_run_ns(pid: int) -> int:
    """Nanoseconds the process's threads have run (schedstat): the tick-sampled utime/stime
    of /proc/PID/stat read less than half of what perf saw the data plane thread run here."""
    return sum(
        int((task / "schedstat").read_text().split()[0]) for task in Path(f"/proc/{pid}/task").iterdir()
    )


def lanes_rx(topo: Topology) -> int:
    out = topo.ns(topo.sw, LANES, "ctl", "--thrift-port", "9399", "-c", "show_ports").stdout
    return int(re.search(r"^1 \d+ \S+ (\d+)", out, re.MULTILINE).group(1))


def dev_stat(topo: Topology, dev: str, name: str) -> int:
    out = topo.ns(topo.sw, "cat", f"/sys/class/net/{dev}/statistics/{name}").stdout
    return int(out)


def start_contender(topo: Topology, who: str, log: Path) -> int | None:
    if who == "bridge":
        topo.ns(topo.sw, "ip", "link", "add", "br0", "type", "bridge")
        for dev in ("p1", "p2"):
            topo.ns(topo.sw, "ip", "link", "set", dev, "master", "br0")
        topo.ns(topo.sw, "ip", "link", "set", "br0", "up")
        # a static entry: no flooding, no learning from a sink that never sends
        topo.ns(topo.sw, "bridge", "fdb", "add", "00:00:00:00:01:02", "dev", "p2", "master", "static")
        return None
    cmds = log.with_suffix(".commands")
    cmds.write_text(COMMANDS)
    mode = who.split("-")[1]
    sw = topo.start(topo.sw, "taskset", "-c", "1", LANES, "switch", str(REPO / "p4" / "tm_basic.json"),
               "-i", "1@p1", "-i", "2@p2", "--rx-mode", mode, "--scheduler", "rl-sp-drr",
               "--default-rate", "100Gbps", "--commands", str(cmds), "--no-grpc", "--thrift-port", "9399",
               log=log)  # fmt: skip
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        r = topo.ns(topo.sw, LANES, "ctl", "--thrift-port", "9399", "-c", "show_ports", check=False)
        if r.returncode == 0:
            return sw.pid  # ip netns exec and taskset exec the switch: same process
        time.sleep(0.2)
    raise RuntimeError(f"{who} did not come up: {log.read_text()}")


def read_json_lines(p: subprocess.Popen) -> list[dict]:
    return [json.loads(line) for line in p.stdout.read().splitlines() if line.startswith("{")]


def one_run(who: str, size: int, seconds: float, out_dir: Path, sink_napi: str) -> dict:
    load1 = os.getloadavg()[0]
    with Topology() as topo:
        pid = start_contender(topo, who, out_dir / f"{who}_{size}.log")
        sink = topo.start(topo.sink, sys.executable, PKTGEN, "sink", "k0", "--interval", "0.25")
        assert json.loads(sink.stdout.readline()).get("ready"), "sink did not start"
        if sink_napi == "threaded":
            # the sink's receive path (veth NAPI, its XDP program) in a kernel thread of its own,
            # as on another machine, instead of in the sending contender's context
            topo.ns(topo.sink, "sh", "-c", "echo 1 > /sys/class/net/k0/threaded")
        time.sleep(0.5)
        rx0 = (
            lanes_rx(topo) if pid else dev_stat(topo, "p1", "rx_packets") - dev_stat(topo, "p1", "rx_dropped")
        )
        cpu0, proc0 = cpu_ticks(), proc_run_ns(pid) if pid else 0
        t0 = time.monotonic()
        gen = topo.ns(topo.gen, "taskset", "-c", "0", sys.executable, PKTGEN, "gen", "g0",
                      "--size", str(size), "--seconds", str(seconds))  # fmt: skip
        wall = time.monotonic() - t0
        cpu1, proc1 = cpu_ticks(), proc_run_ns(pid) if pid else 0
        time.sleep(0.5)  # let the queues drain into the sink
        rx1 = (
            lanes_rx(topo) if pid else dev_stat(topo, "p1", "rx_packets") - dev_stat(topo, "p1", "rx_dropped")
        )
        topo.stop(sink)
        dropped = read_json_lines(sink)[-1]["dropped"]
        sent = [json.loads(x) for x in gen.stdout.splitlines()][-1]
    softirq = [(b[6] - a[6]) * 100 / TICK / wall for a, b in zip(cpu0, cpu1, strict=True)]
    busy = [
        (sum(b[:7]) - b[3] - b[4] - sum(a[:7]) + a[3] + a[4]) * 100 / TICK / wall
        for a, b in zip(cpu0, cpu1, strict=True)
    ]
    # time the hypervisor gave another guest: neither this switch nor the bridge ran then
    steal = [(b[7] - a[7]) * 100 / TICK / wall for a, b in zip(cpu0, cpu1, strict=True)]
    r = {
        "contender": who,
        "frame_bytes": size,
        "sink_napi": sink_napi,
        "seconds": round(wall, 3),
        "load1_before": load1,
        "offered_pps": round(sent["sent"] / sent["t"]),
        "in_pps": round((rx1 - rx0) / wall),
        "out_pps": round(dropped / wall),
        "switch_cpu_pct": round((proc1 - proc0) / 1e7 / wall, 1) if pid else None,
        "softirq_pct_per_cpu": [round(x, 1) for x in softirq],
        "busy_pct_per_cpu": [round(x, 1) for x in busy],
        "steal_pct_per_cpu": [round(x, 1) for x in steal],
    }
    r["saturated"] = saturated(r)
    return r


def saturated(r: dict) -> str:
    """Who limited the run: the generator when the contender took in what was offered, the
    egress path when the sink counted less than the contender took in, else the contender
    (its ingress queue or ring overflowed: lanes's one core, the bridge's softirq)."""
    if r["in_pps"] >= 0.95 * r["offered_pps"] and r["out_pps"] >= 0.95 * r["in_pps"]:
        return "generator"
    if r["out_pps"] < 0.95 * r["in_pps"]:
        return "egress/sink"
    return "bridge (softirq)" if r["switch_cpu_pct"] is None else "lanes (one core)"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="60,1514", help="frame bytes without FCS (60 = 64 B on the wire)")
    p.add_argument("--seconds", type=float, default=5)
    p.add_argument("--contenders", default=",".join(CONTENDERS))
    p.add_argument(
        "--json", type=Path, default=REPO / "bench" / "results" / "switch_loop" / "switch_xdp_pps.json"
    )
    p.add_argument("--sink-napi", default="inline",
                   help="inline (the sink's receive runs in the sender's context, veth's default), threaded "
                        "(in a kernel thread of its own, as on another machine), or both (comma-separated)")  # fmt: skip
    a = p.parse_args()
    napis = a.sink_napi.split(",")
    if not set(napis) <= {"inline", "threaded"}:
        print(f"switch_xdp_pps: --sink-napi takes inline and/or threaded, got {a.sink_napi!r}", file=sys.stderr)
        return 1
    if os.geteuid() != 0:
        print("switch_xdp_pps: needs root (network namespaces, XDP)", file=sys.stderr)
        return 1
    a.json.parent.mkdir(parents=True, exist_ok=True)
    logs = Path(tempfile.mkdtemp(prefix="switch_xdp_pps_"))  # the switches' logs
    results = []
    runs = [(int(s), n, w) for s in a.sizes.split(",") for n in napis for w in a.contenders.split(",")]
    for size, napi, who in runs:
        print(f"switch_xdp_pps: {who} at {size} B, sink {napi}, for {a.seconds:g} s ...", flush=True)
        r = one_run(who, size, a.seconds, logs, napi)
        print(f"  offered {r['offered_pps']:,} pps, in {r['in_pps']:,}, out {r['out_pps']:,}, "
              f"switch CPU {r['switch_cpu_pct']}, load {r['load1_before']:.2f}: {r['saturated']}", flush=True)  # fmt: skip
        results.append(r)
    doc = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "kernel": os.uname().release,
           "cpus": os.cpu_count(), "results": results}  # fmt: skip
    a.json.write_text(json.dumps(doc, indent=1) + "\n")
    print("\n| contender | frame B | sink NAPI | offered pps | in pps | out pps | switch CPU % | saturated | load1 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        cpu = "-" if r["switch_cpu_pct"] is None else f"{r['switch_cpu_pct']:.0f}"
        print(f"| {r['contender']} | {r['frame_bytes']} | {r['sink_napi']} | {r['offered_pps']:,} | {r['in_pps']:,} | "
              f"{r['out_pps']:,} | {cpu} | {r['saturated']} | {r['load1_before']:.2f} |")  # fmt: skip
    for size, napi in sorted({(r["frame_bytes"], r["sink_napi"]) for r in results}):
        by = {r["contender"]: r["out_pps"] for r in results if (r["frame_bytes"], r["sink_napi"]) == (size, napi)}
        if by.get("bridge"):
            ratios = ", ".join(f"{k} {v / by['bridge']:.2f}x" for k, v in by.items() if k != "bridge")
            print(f"{size} B, sink {napi}, against the bridge: {ratios}")
    print(f"JSON: {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

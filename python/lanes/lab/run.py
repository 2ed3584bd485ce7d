"""`lanes lab run`: one experiment from network set-up to summary.json and plots."""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lanes import atomic
from lanes.emu.net import LabNet
from lanes.emu.topo import Topology, build, classify_everywhere
from lanes.errors import LanesError
from lanes.interrupt import terminate_as_interrupt
from lanes.lab import cases, control, htb, mpi, traffic
from lanes.lab.core import Procs, check_switches, check_tools, clear_run_dir, ping_all, say
from lanes.lab.monitor import Monitor

if TYPE_CHECKING:  # imported where used: the P4Runtime client needs grpc
    from lanes.lab.p4rt import P4RuntimeTables

REPO = Path(__file__).resolve().parents[3]
PROGRAM = REPO / "p4" / "tm_basic.json"


@dataclass
class Params:
    topo: str
    case: str
    alg: str
    proto: str
    link_mbps: float
    duration_s: float
    out: Path
    queue_depth: int = 64
    host_shaping: bool = True
    control: str = "auto"  # auto | p4runtime | ctl
    control_used: str = ""
    switch_rt: int = 20
    high_load_pct: float = 50.0  # UDP sending rate of the high class, % of the link
    low_load_pct: float = 50.0  # of each medium and low class (thesis: 50 % each)
    burst_bytes: int | None = None  # token bucket of rate-limited classes (None: the default)
    batch_us: float | None = None  # the lanes switch's batch window (None: its default)
    wake: str | None = None  # which arrivals wake the lanes switch (None: its default)
    mpi_iters: int = mpi.ITERATIONS  # ping-pong round trips per message size (case mpi)
    mpi_timeout_s: float = mpi.TIMEOUT_S  # the ping-pong is stopped after this many seconds of the run
    switch_model: str = "lanes"  # the switches' TM: lanes (paced) or bmv2 (the model of bmv2's TM)
    classes_at: str = "access"  # which switches classify by sender: the access ones (thesis) or all


def run(p: Params) -> Path:
    check_tools(p)
    topo = build(p.topo, p.link_mbps)
    if p.classes_at == "all":
        topo = classify_everywhere(topo)
    plan = cases.plan(topo, p.case, p.alg, p.duration_s)
    if plan.family == "htb" and p.switch_model != "lanes":
        raise LanesError("--switch-model applies to the lanes switch, not to linux-htb")
    clear_run_dir(p.out)
    (p.out / "params.json").write_text(json.dumps({**asdict(p), "out": str(p.out)}, indent=1))
    (p.out / "plan.json").write_text(json.dumps(asdict(plan), indent=1, default=str))
    backend = "linux-htb" if plan.family == "htb" else "lanes"
    use_grpc = p.control in ("auto", "p4runtime") and control.p4runtime_available()
    if p.control == "p4runtime" and not use_grpc:
        raise LanesError("--control p4runtime: the P4Runtime server or the p4runtime package is missing")
    p.control_used = "p4runtime" if use_grpc else "ctl"
    say(f"{p.topo} {p.case} {p.alg} {p.proto} at {p.link_mbps:g} Mb/s for {p.duration_s:g} s -> {p.out}")
    procs = Procs()
    writes = control.WriteLog()
    with terminate_as_interrupt(), LabNet(
        topo, backend=backend, out_dir=p.out, program=PROGRAM, scheduler=plan.scheduler,
        queue_depth=p.queue_depth, host_shaping=p.host_shaping, grpc=use_grpc,
        switch_rt=p.switch_rt,
        switch_args=_switch_args(p),
    ) as net:  # fmt: skip
        procs.net = net
        try:
            result = _experiment(p, topo, plan, net, procs, writes, use_grpc)
        finally:
            procs.stop()
    from lanes.lab.summary import summarize

    summary = summarize(p, topo, plan, result)
    atomic.write_text(p.out / "summary.json", json.dumps(summary, indent=1))
    for w in summary["validity"]["warnings"]:
        say(f"WARNING, this run is not valid: {w}")
    from lanes.lab.plots import plot_run

    plot_run(p.out, summary)
    from lanes.lab.csvout import write_run_csvs

    write_run_csvs(p.out)
    say(f"done: {p.out}/summary.json")
    return p.out


def _switch_args(p: Params) -> tuple[str, ...]:
    """More `lanes switch` options the run asks for."""
    args: tuple[str, ...] = ("--batch-us", f"{p.batch_us:g}") if p.batch_us is not None else ()
    if p.wake is not None:
        args += ("--wake", p.wake)
    if p.switch_model != "lanes":
        args += ("--tm-model", p.switch_model)
    return args


def _udp_mbps(p: Params, cls: str) -> float:
    return (p.high_load_pct if cls == "high" else p.low_load_pct) / 100.0 * p.link_mbps


def _tables(p: Params, topo: Topology, plan: cases.Plan, net: LabNet, writes: control.WriteLog,
            use_grpc: bool) -> dict[str, Any]:  # fmt: skip
    if plan.family == "htb":
        n = htb.setup(topo, net, plan.initial, p.queue_depth, p.burst_bytes)
        for _ in range(n):
            writes.add(-1.0, "tc", "class")
        return {}
    tables = {}
    for s in topo.switches:
        sw = net.switch(s)
        t: P4RuntimeTables | control.CtlTables
        if use_grpc:
            from lanes.lab.p4rt import P4RuntimeTables

            t = P4RuntimeTables(s, sw.grpc_port, sw.device_id, REPO / "p4" / "tm_basic.p4info.txtpb", PROGRAM)
        else:
            t = control.CtlTables(s, sw.thrift_port)
        control.populate(t, topo, s, plan.initial[s], writes, -1.0, p.burst_bytes or 0)
        tables[s] = t
    return tables


def _idle_owd(p: Params, topo: Topology, net: LabNet, procs: Procs) -> dict[str, float]:
    """One-way latency of each high flow on the idle network (1 Mb/s UDP for 2 s)."""
    out = {}
    for i, f in enumerate(x for x in topo.flows if x.cls == "high"):
        port = traffic.BASE_PORT + 100 + i
        log = p.out / f"idle_{f.src}_{f.dst}.txt"
        srv = procs.start(net.host(f.dst), traffic.server_cmd("udp", port), log)
        time.sleep(0.5)
        cmd = traffic.client_cmd("udp", topo.hosts[f.dst].ip, port, 2, 1.0)
        net.host(f.src).cmd(" ".join(cmd) + " > /dev/null 2>&1")
        time.sleep(0.5)
        procs.stop([srv])
        ivs = [iv for iv in traffic.parse_server(log.read_text()) if iv.owd_ms is not None]
        if ivs:
            out[f.key] = sum(iv.owd_ms for iv in ivs) / len(ivs)  # type: ignore[misc]
    return out


def _switch_drops(thrift_port: int) -> dict[str, int]:
    """The switch's drop counters by reason (its `stats_json`)."""
    from lanes.lab.switch_stats import read_stats
    from lanes.switch.command_client import CommandClient

    c = CommandClient(thrift_port)
    try:
        return read_stats(c).drops
    finally:
        c.close()


def _mpi_idle(p: Params, topo: Topology, net: LabNet, procs: Procs) -> dict[str, float]:
    """The ping-pong on the idle network first: the floor the loaded runs compare with."""
    say("MPI ping-pong on the idle network")
    proc = mpi.start(net, topo, p.out, procs, p.mpi_iters)
    deadline = time.monotonic() + p.mpi_timeout_s
    done_at = None
    while proc.poll() is None and time.monotonic() < deadline:
        if done_at is None and mpi.finished(p.out):
            done_at = time.monotonic()
        if done_at is not None and time.monotonic() - done_at > 10:
            break
        time.sleep(0.1)
    procs.stop([proc])
    idle: dict[str, float] = mpi.collect(p.out, p.mpi_iters)["latency_us"]
    (p.out / "mpi.txt").rename(p.out / "mpi_idle.txt")
    return idle


def _experiment(p: Params, topo: Topology, plan: cases.Plan, net: LabNet, procs: Procs,
                writes: control.WriteLog, use_grpc: bool) -> dict[str, Any]:  # fmt: skip
    tables = _tables(p, topo, plan, net, writes, use_grpc)
    say(f"{len(writes.entries)} set-up writes over {'P4Runtime' if use_grpc else 'the command port'}"
        if plan.family != "htb" else f"{len(writes.entries)} tc class set-up commands")  # fmt: skip
    ping_all(topo, net)
    idle = _idle_owd(p, topo, net, procs)
    say("idle one-way latency: " + ", ".join(f"{k} {v:.3f} ms" for k, v in idle.items()))
    ports = {fr.flow.key: traffic.BASE_PORT + i for i, fr in enumerate(plan.flows)}
    for fr in plan.flows:
        log = p.out / f"server_{fr.flow.src}_{fr.flow.dst}.txt"
        procs.start(net.host(fr.flow.dst), traffic.server_cmd(p.proto, ports[fr.flow.key]), log)
    time.sleep(1.0)
    ctl_ports = {s: net.lanes_switch(s).thrift_port for s in topo.switches} if plan.family != "htb" else {}
    pids = {s: net.lanes_switch(s).process_id for s in topo.switches} if plan.family != "htb" else {}
    mpi_idle = _mpi_idle(p, topo, net, procs) if plan.mpi_start_s is not None else None
    udp0 = {
        n: traffic.udp_counters(net.host(n).cmd("cat /proc/net/snmp"))
        for n in {fr.flow.dst for fr in plan.flows}
    }
    # clients are started now and send from their start time on (iperf --txstart-time), so the
    # intervals they report line up with the phases to the millisecond
    lead = 1.0 + 0.1 * len(plan.flows)
    t0, epoch0 = time.monotonic() + lead, time.time() + lead
    starts: dict[str, float] = {}
    clients: list[subprocess.Popen[bytes]] = []
    for fr in plan.flows:
        length = (fr.end_s - fr.start_s) if fr.end_s is not None else 24 * 3600
        cmd = traffic.client_cmd(p.proto, topo.hosts[fr.flow.dst].ip, ports[fr.flow.key], length,
                                 _udp_mbps(p, fr.flow.cls), txstart=epoch0 + fr.start_s)  # fmt: skip
        log = p.out / f"client_{fr.flow.src}_{fr.flow.dst}.txt"
        clients.append(procs.start(net.host(fr.flow.src), cmd, log))
        starts[fr.flow.key] = fr.start_s
    mon = Monitor(p.out, t0, ctl_ports, pids)
    mon.start()
    events: list[tuple[float, int, object]] = [(w.t_s, 1, w) for w in plan.writes]
    if plan.mpi_start_s is not None:
        events.append((plan.mpi_start_s, 2, None))
    events.sort(key=lambda e: (e[0], e[1]))
    changed_at: dict[float, float] = {}  # planned time of a change -> when its last write returned
    mpi_proc = None
    mpi_done_at: float | None = None
    next_progress = 0.0
    end = plan.duration_s
    try:
        while True:
            now = time.monotonic() - t0
            while events and events[0][0] <= now:
                _, kind, obj = events.pop(0)
                if kind == 1:
                    done = _write(topo, net, plan, tables, writes, obj, t0, p.burst_bytes)  # type: ignore[arg-type]
                    changed_at[obj.t_s] = max(done, changed_at.get(obj.t_s, done))  # type: ignore[attr-defined]
                else:
                    mpi_proc = mpi.start(net, topo, p.out, procs, p.mpi_iters)
            if mpi_proc is not None:
                if mpi_proc.poll() is not None:
                    end = time.monotonic() - t0
                    break
                if mpi_done_at is None and mpi.finished(p.out):
                    mpi_done_at = now
                if mpi_done_at is not None and now - mpi_done_at > 10:
                    say("mpiexec did not exit 10 s after the last result; stopping it")
                    procs.stop([mpi_proc])
                    end = mpi_done_at
                    break
                if now > p.mpi_timeout_s:
                    # a lossy best-effort network can stretch TCP's retransmission timeouts to
                    # minutes: the sizes measured so far are kept, the result marked incomplete
                    say(f"the MPI ping-pong did not finish within {p.mpi_timeout_s:g} s; stopping it, "
                        "keeping the sizes it measured")  # fmt: skip
                    procs.stop([mpi_proc])
                    end = now
                    break
            elif now >= plan.duration_s + 0.5 and not events:
                break
            if plan.family != "htb":
                check_switches(p, topo, net, now)
            if now >= next_progress >= 0:
                next_progress += 5.0
                _progress(p, plan, now, writes)
            time.sleep(0.05)
    finally:
        mon.stop()
    procs.stop(clients)
    time.sleep(1.0)
    procs.stop()
    receivers = {}
    for name in sorted({fr.flow.dst for fr in plan.flows}):
        after = traffic.udp_counters(net.host(name).cmd("cat /proc/net/snmp"))
        receivers[name] = {k: after.get(k, 0) - udp0[name].get(k, 0) for k in ("InDatagrams", "RcvbufErrors")}
    switch_drops = {s: _switch_drops(net.switch(s).thrift_port) for s in ctl_ports}
    for t in tables.values():
        t.close()
    mpi_result = None
    if plan.mpi_start_s is not None:
        mpi_result = mpi.collect(p.out, p.mpi_iters)
        if mpi_idle:
            mpi_result["idle_latency_us"] = mpi_idle
    (p.out / "writes.json").write_text(json.dumps(writes.entries))
    from lanes.lab.validity import IPERF_MEGA

    offered = {fr.flow.key: _udp_mbps(p, fr.flow.cls) * IPERF_MEGA for fr in plan.flows}
    return {"starts": starts, "idle_owd_ms": idle, "end_s": end, "writes": writes, "mpi": mpi_result,
            "receivers": receivers, "switch_drops": switch_drops, "offered_mbps": offered,
            "changed_at": changed_at}  # fmt: skip


def _write(topo: Topology, net: LabNet, plan: cases.Plan, tables: dict[str, Any], writes: control.WriteLog,
           w: cases.Write, t0: float, burst: int | None) -> float:  # fmt: skip
    """Apply one planned change and log it at the time it took effect (when the write returned):
    on a busy machine that can be well after the planned time, and the phase's numbers are
    measured from then on."""
    s = w.setting
    if plan.family == "htb":
        n = htb.change(topo, net, w.switch, w.cls, s, burst)
        done = round(time.monotonic() - t0, 3)
        for _ in range(n):
            writes.add(done, w.switch, f"tc class {w.cls}")
    else:
        tables[w.switch].modify_class(w.prefix, s.prio, s.rate_Bps, s.quantum, burst or 0)
        done = round(time.monotonic() - t0, 3)
        writes.add(done, w.switch, f"src_ip_prio {w.prefix} {s.prio} {s.rate_Bps}")
    late = f" ({done - w.t_s:.2f} s after its planned time)" if done - w.t_s > 0.25 else ""
    say(f"t={done:.1f} s: {w.switch} {w.cls} -> priority {s.prio}, {s.rate_Bps * 8 / 1e6:.1f} Mb/s{late}")
    return done


def _progress(p: Params, plan: cases.Plan, now: float, writes: control.WriteLog) -> None:
    phase = next((ph.name for ph in plan.phases if ph.start_s <= now < ph.end_s), plan.phases[-1].name)
    rates = []
    for fr in plan.flows:
        log = p.out / f"server_{fr.flow.src}_{fr.flow.dst}.txt"
        ivs = traffic.parse_server(log.read_text()) if log.exists() else []
        if ivs:
            rates.append(f"{fr.flow.key} {ivs[-1].mbps:.1f}")
    total = f"/{plan.duration_s:.0f}" if plan.mpi_start_s is None else ""
    extra = f"; {writes.count(0.0)} runtime writes"
    if plan.mpi_start_s is not None and now >= plan.mpi_start_s:
        extra = f"; {mpi.progress(p.out)}"  # no writes after set-up in this case
    say(f"[{now:5.1f}{total} s] {phase}: " + (", ".join(rates) or "starting") + " Mb/s" + extra)

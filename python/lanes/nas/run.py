"""`lanes lab run --case nas`: one network-aware scheduling experiment on Mininet, from set-up to
summary.json and the goodput plot; `--repeats N` runs it N times and aggregates."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from lanes import atomic
from lanes.emu.net import LabNet
from lanes.emu.topo import Topology
from lanes.errors import LanesError
from lanes.interrupt import terminate_as_interrupt
from lanes.lab import control, traffic
from lanes.lab.core import Procs, check_switches, check_tools, clear_run_dir, ping_all, say
from lanes.lab.monitor import stolen_cpu
from lanes.nas import inband
from lanes.nas.controller import Controller
from lanes.nas.detect import NasConfig
from lanes.nas.inband import InbandObserver
from lanes.nas.plan import NasPlan, Sender, plan
from lanes.nas.topo import build, host_mbps

REPO = Path(__file__).resolve().parents[3]
# (bmv2 JSON, P4Info): the controller's program, and the one that does it all in the data plane
PROGRAMS = {
    "controller": (REPO / "p4" / "nas.json", REPO / "p4" / "nas.p4info.txtpb"),
    "inband": (REPO / "p4" / "nas_inband.json", REPO / "p4" / "nas_inband.p4info.txtpb"),
}
HEADERS = 42  # Ethernet + IPv4 + UDP bytes around an iperf datagram
# Every sender here is paced at its host link's rate, as exactly as the switch paces its ports:
# drop-tail then hands each freed slot of a full queue to the same sender and locks the other out,
# so by default the shared queues drop at random (in proportion to what each flow sends, as the
# analytic baseline assumes). Same for every algorithm of the case; the original's preset has
# drop-tail, as the original had.
DROP = "random"


@dataclass
class NasParams:
    topo: str
    alg: str
    proto: str
    link_mbps: float
    duration_s: float
    out: Path
    hold_s: float = 3.0
    load_pct: float = 100.0  # each sender's rate, % of its host link (UDP)
    roles: list[str] | None = None  # None: every flow of the topology
    queue_depth: int = 64
    switch_rt: int = 20
    repeats: int = 1
    case: str = "nas"
    drop: str = DROP  # what a full switch queue drops: random | tail
    timeline: str = "scaled"  # lanes.nas.plan
    manual_at_s: float | None = None  # the hand trigger (None: the plan's)
    poll_s: float = 0.25  # the controller's poll period
    min_pkts: int = 20  # a flow's packets a poll must carry to be judged
    udp_len: int = traffic.UDP_LEN  # iperf's datagram
    preset: str | None = None  # lanes.nas.original: what set the fields above


def run(p: NasParams) -> Path:
    if p.repeats > 1:
        from lanes.nas.summary import aggregate

        dirs = []
        for i in range(1, p.repeats + 1):
            say(f"repeat {i}/{p.repeats}")
            dirs.append(run_once(replace(p, out=p.out / f"rep{i}", repeats=1)))
        agg = aggregate([json.loads((d / "summary.json").read_text()) for d in dirs])
        atomic.write_text(p.out / "aggregate.json", json.dumps(agg, indent=1))
        say(f"done: {p.out}/aggregate.json")
        return p.out
    return run_once(p)


def offered_mbps(p: NasParams, topo: Topology, src: str) -> float:
    """iperf's -b for a sender: its host link's rate (x load), less the headers iperf does not count."""
    return host_mbps(topo, src) * p.load_pct / 100 * p.udp_len / (p.udp_len + HEADERS)


def run_once(p: NasParams) -> Path:
    check_tools(p)  # type: ignore[arg-type]
    if not control.p4runtime_available():
        raise LanesError("case nas needs P4Runtime (the grpc and p4runtime packages; run `make setup`)")
    topo = build(p.topo, p.link_mbps)
    pl = plan(topo, p.alg, p.duration_s, p.roles, timeline=p.timeline, manual_at_s=p.manual_at_s)
    cfg = NasConfig(mode=pl.mode, hold_s=p.hold_s, poll_s=p.poll_s, min_pkts=p.min_pkts)
    clear_run_dir(p.out)
    (p.out / "params.json").write_text(json.dumps({**asdict(p), "out": str(p.out)}, indent=1))
    (p.out / "plan.json").write_text(json.dumps(asdict(pl), indent=1, default=str))
    say(f"{p.topo} nas {p.alg} {p.proto} at {p.link_mbps:g} Mb/s for {p.duration_s:g} s -> {p.out}")
    procs = Procs()
    with terminate_as_interrupt(), LabNet(topo, **net_args(p, pl)) as net:
        procs.net = net
        try:
            result = _experiment(p, topo, pl, cfg, net, procs)
        finally:
            procs.stop()
    from lanes.nas.plots import plot_goodput
    from lanes.nas.summary import summarize

    summary = summarize(p, topo, pl, cfg, result)
    atomic.write_text(p.out / "summary.json", json.dumps(summary, indent=1))
    plot_goodput(p.out, summary)
    say(f"done: {p.out}/summary.json")
    return p.out


def net_args(p: NasParams, pl: NasPlan) -> dict:
    """LabNet's arguments besides the topology: what every switch of the run gets."""
    return {"backend": "lanes", "out_dir": p.out, "program": _program(pl)[0], "scheduler": pl.scheduler,
            "queue_depth": p.queue_depth, "grpc": True, "switch_rt": p.switch_rt,
            "switch_args": ("--drop", p.drop)}  # fmt: skip


def _program(pl: NasPlan) -> tuple[Path, Path]:
    return PROGRAMS["inband" if pl.control == "inband" else "controller"]


def _experiment(p: NasParams, topo: Topology, pl: NasPlan, cfg: NasConfig, net: LabNet, procs: Procs) -> dict:
    from lanes.lab.cases import ClassSetting
    from lanes.lab.p4rt import P4RuntimeTables

    writes = control.WriteLog()
    tables = {}
    for s in topo.switches:
        sw = net.switch(s)
        program, p4info = _program(pl)
        tables[s] = P4RuntimeTables(s, sw.grpc_port, sw.device_id, p4info, program)
        settings = {e.prefix: ClassSetting(cfg.normal_prio, round(e.share_mbps * 1e6 / 8)) for e in topo.classes[s]}
        control.populate(tables[s], topo, s, settings, writes, -1.0)
    try:
        ctl: Controller | InbandObserver
        if pl.control == "inband":
            ctl = InbandObserver(topo, tables, cfg, p.out, arm_s=pl.arm_s, end_s=pl.duration_s + 1)
            setup_writes = len(writes.entries) + inband.install(topo, tables, cfg)
        else:
            ctl = Controller(topo, tables, cfg, p.out, control=pl.control, arm_s=pl.arm_s,
                             manual_s=pl.manual_s, end_s=pl.duration_s + 1)  # fmt: skip
            setup_writes = len(writes.entries) + ctl.nas.install(ctl.detector)
        say(f"{setup_writes} set-up writes over P4Runtime")
        ping_all(topo, net)
        return _traffic(p, topo, pl, net, procs, ctl) | {"setup_writes": setup_writes}
    finally:
        for t in tables.values():
            t.close()


def sender_cmd(p: NasParams, topo: Topology, snd: Sender, port: int, txstart: float) -> list[str]:
    """The iperf client of one sender. The receivers' reports are the measurement; a TCP client
    reporting each second would quit on a write blocked behind a slow full queue
    (traffic.client_cmd)."""
    return traffic.client_cmd(p.proto, topo.hosts[snd.flow.dst].ip, port, snd.end_s - snd.start_s,
                              offered_mbps(p, topo, snd.flow.src), txstart=txstart, udp_len=p.udp_len,
                              report_each_second=p.proto != "tcp")  # fmt: skip


def _traffic(p: NasParams, topo: Topology, pl: NasPlan, net: LabNet, procs: Procs,
             ctl: Controller | InbandObserver) -> dict:  # fmt: skip
    ports = {snd.name: traffic.BASE_PORT + i for i, snd in enumerate(pl.senders)}
    for snd in pl.senders:
        log = p.out / f"server_{snd.name}.txt"
        procs.start(net.host(snd.flow.dst), traffic.server_cmd(p.proto, ports[snd.name]), log)
    time.sleep(1.0)
    # run time 0, far enough ahead that every client is started before it (a client whose start
    # time has passed starts at once, and its intervals would not line up with the phases)
    t0 = ctl.t0 = time.monotonic() + 0.5 + 0.1 * len(pl.senders)
    # iperf clients start at their own --txstart-time, so their intervals line up with the phases
    epoch0 = time.time() + (t0 - time.monotonic())
    clients = []
    for snd in pl.senders:
        cmd = sender_cmd(p, topo, snd, ports[snd.name], epoch0 + snd.start_s)
        clients.append(procs.start(net.host(snd.flow.src), cmd, p.out / f"client_{snd.name}.txt"))
    ctl.start()
    next_progress = 0.0
    # the machine's stolen and total CPU time each half second: a port the hypervisor stops
    # loses its line time, so the summary says how much each phase lost
    cpu: list[tuple[float, int, int]] = []
    try:
        while True:
            now = time.monotonic() - t0
            if not cpu or now >= cpu[-1][0] + 0.5:
                cpu.append((round(now, 3), *stolen_cpu()))
            if now >= pl.duration_s + 0.5:
                break
            if ctl.error:
                raise LanesError(f"the nas controller stopped: {ctl.error}")
            check_switches(p, topo, net, now)  # type: ignore[arg-type]
            if now >= next_progress:
                next_progress += 5.0
                _progress(p, pl, now, ctl)
            time.sleep(0.1)
    finally:
        ctl.stop()
    procs.stop(clients)
    time.sleep(1.0)
    procs.stop()
    return {"events": ctl.events, "feedback_msgs": ctl.feedback_msgs(), "polls": ctl.polls,
            "feedback_before_arm": getattr(ctl, "sent_before_arm", None), "writes_after_setup": ctl.writes,
            "offered_mbps": {s.name: offered_mbps(p, topo, s.flow.src) for s in pl.senders}, "cpu": cpu}  # fmt: skip


def _progress(p: NasParams, pl: NasPlan, now: float, ctl: Controller | InbandObserver) -> None:
    phase = next((ph.name for ph in pl.phases if ph.start_s <= now < ph.end_s), pl.phases[-1].name)
    rates = []
    for snd in pl.senders:
        log = p.out / f"server_{snd.name}.txt"
        ivs = traffic.parse_server(log.read_text()) if log.exists() else []
        if ivs and snd.start_s <= now < snd.end_s + 1:
            rates.append(f"{snd.name} {ivs[-1].mbps:.1f}")
    say(f"[{max(now, 0):5.1f}/{pl.duration_s:.0f} s] {phase}: " + (", ".join(rates) or "starting")
        + f" Mb/s; {len(ctl.events)} nas events")  # fmt: skip

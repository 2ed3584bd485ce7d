"""summary.json of a run: per flow and phase throughput, loss and one-way latency; control-plane
writes; switch CPU and queue telemetry; MPI latencies. Per-second series go to series.json."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from lanes import atomic
from lanes.emu.topo import Topology
from lanes.lab import mpi, occupancy, owd_histogram, traffic, validity
from lanes.lab.cases import Plan, measured_from
from lanes.lab.delay import per_phase

DELAY_BINS_MS = [0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100]


def _series(out: Path, plan: Plan, starts: dict[str, float]) -> dict[str, list[dict[str, Any]]]:
    series: dict[str, list[dict[str, Any]]] = {}
    for fr in plan.flows:
        key = fr.flow.key
        log = out / f"server_{fr.flow.src}_{fr.flow.dst}.txt"
        if key not in starts or not log.exists():
            series[key] = []
            continue
        t0 = starts[key]
        rows = []
        for iv in traffic.parse_server(log.read_text()):
            r: dict[str, Any] = {"t": round(t0 + iv.end_s, 3), "mbps": round(iv.mbps, 3)}
            if iv.total:
                r["loss_pct"] = round(100.0 * (iv.lost or 0) / iv.total, 3)
                r["lost"], r["total"] = iv.lost, iv.total
            if iv.owd_ms is not None:
                r["owd_ms"], r["owd_max_ms"] = iv.owd_ms, iv.owd_max_ms
            if iv.owd_hist_us is not None:
                r["owd_hist_us"], r["owd_beyond"] = iv.owd_hist_us, iv.owd_beyond
            rows.append(r)
        series[key] = rows
    return series


def _phase_stats(rows: list[dict], a: float, b: float, proto: str, last: bool = False) -> dict | None:
    """Means over the one-second rows of [a, b]. A row may end a little after b when the traffic
    goes on into the next phase, not after the end of the run's last phase: the senders stop
    there, and a second they were stopped in would read as a port that did not deliver."""
    # leave out the seconds right after a phase change (queues drain, TCP adapts)
    settle = min(2.0, max(1.0, 0.1 * (b - a)), 0.5 * (b - a))
    slack = 0.001 if last else 0.25
    sel = [r for r in rows if r["t"] - 1.0 >= a + settle - 0.25 and r["t"] <= b + slack]
    if not sel:
        return None
    st: dict = {"throughput_mbps": round(sum(r["mbps"] for r in sel) / len(sel), 3), "seconds": len(sel),
                "window_s": [round(min(r["t"] for r in sel) - 1.0, 3), max(r["t"] for r in sel)]}  # fmt: skip
    if proto == "udp":
        total = sum(r.get("total", 0) for r in sel)
        lost = sum(r.get("lost", 0) for r in sel)
        st["loss_pct"] = round(100.0 * lost / total, 3) if total else None
        lat = [(r["owd_ms"], r.get("total", 1)) for r in sel if r.get("owd_ms") is not None]
        if lat:
            w = sum(n for _, n in lat) or 1
            st["owd_ms"] = round(sum(v * n for v, n in lat) / w, 4)
            st["owd_max_ms"] = max(r["owd_max_ms"] for r in sel if r.get("owd_max_ms") is not None)
        bins, beyond = owd_histogram.merge(sel)
        if bins or beyond:  # every datagram's latency, not the seconds' means
            for name, ms in owd_histogram.tail_ms(bins, beyond).items():
                st[f"owd_{name}_ms"] = ms
    return st


def read_jsonl(path: Path) -> list[dict]:
    """The records of one of the monitor's .jsonl files ([] for a run without it, e.g. linux-htb)."""
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def _telemetry(records: list[dict]) -> dict:
    if not records:
        return {}
    prev: dict[tuple, tuple[float, int]] = {}
    acc: dict[tuple, dict] = defaultdict(lambda: {"depth": [], "delay": [], "drops": 0, "enq": 0})
    for rec in records:
        for q in rec["queues"]:
            k = (rec["switch"], q["port"], q["qid"])
            a = acc[k]
            a["depth"].append(q["depth_pkts"])
            a["drops"], a["enq"] = q["drops"], q["enq_pkts"]
            if k in prev:
                dt = rec["t"] - prev[k][0]
                rate = (q["deq_pkts"] - prev[k][1]) / dt if dt > 0 else 0
                if rate > 0:
                    a["delay"].append(1000.0 * q["depth_pkts"] / rate)
            prev[k] = (rec["t"], q["deq_pkts"])
    res: dict = {}
    for (s, port, qid), a in sorted(acc.items()):
        hist = [0] * (len(DELAY_BINS_MS) + 1)
        for d in a["delay"]:
            hist[next((i for i, b in enumerate(DELAY_BINS_MS) if d < b), len(DELAY_BINS_MS))] += 1
        res.setdefault(s, {}).setdefault(str(port), {})[str(qid)] = {
            "enq_pkts": a["enq"],
            "drops": a["drops"],
            "depth_pkts_mean": round(sum(a["depth"]) / len(a["depth"]), 2),
            "depth_pkts_max": max(a["depth"]),
            "delay_ms_hist": {"bins_ms": DELAY_BINS_MS, "counts": hist},
        }
    return res


def _cpu(recs: list[dict]) -> dict:
    keys = {k for r in recs for k in r if k not in ("t", "steal_pct")}
    res = {}
    for k in sorted(keys):
        v = [r[k] for r in recs if k in r]
        res[k] = {"mean": round(sum(v) / len(v), 1), "max": max(v)} if v else {}
    return res


def summarize(p, topo: Topology, plan: Plan, result: dict) -> dict:
    out = Path(p.out)
    series = _series(out, plan, result["starts"])
    cpu_recs = read_jsonl(out / "cpu.jsonl")
    telemetry = read_jsonl(out / "telemetry.jsonl")
    atomic.write_text(out / "series.json", json.dumps(series))
    phases: list[dict[str, Any]] = [{"name": ph.name, "start_s": ph.start_s, "end_s": ph.end_s} for ph in plan.phases]
    for ph in phases:  # when the phase's change took effect, if it has one (see measured_from)
        if ph["start_s"] in result.get("changed_at", {}):
            ph["changed_s"] = result["changed_at"][ph["start_s"]]
    if plan.mpi_start_s is not None:
        phases[-1]["end_s"] = round(result["end_s"], 2)
    flows: dict = {}
    for fr in plan.flows:
        f = fr.flow
        per = {}
        for ph in phases:
            st = _phase_stats(series[f.key], measured_from(ph), ph["end_s"], p.proto, last=ph is phases[-1])
            if st is not None and (fr.start_s < ph["end_s"] - 0.5):
                per[ph["name"]] = st
        flows[f.key] = {"class": f.cls, "proto": p.proto, "phases": per}
    # share of each flow among the flows leaving the same virtual switch, per phase
    for ph in phases:
        groups: dict[str, list[str]] = defaultdict(list)
        for fr in plan.flows:
            if ph["name"] in flows[fr.flow.key]["phases"]:
                groups[topo.hosts[fr.flow.src].switch].append(fr.flow.key)
        for keys in groups.values():
            tot = sum(flows[k]["phases"][ph["name"]]["throughput_mbps"] for k in keys)
            for k in keys:
                st = flows[k]["phases"][ph["name"]]
                st["share_pct"] = round(100.0 * st["throughput_mbps"] / tot, 2) if tot else None
    writes = result["writes"]
    summary = {
        "params": {
            "topo": p.topo, "case": p.case, "alg": p.alg, "proto": p.proto,
            "link_mbps": p.link_mbps, "duration_s": p.duration_s,
            "high_load_pct": p.high_load_pct, "low_load_pct": p.low_load_pct, "queue_depth": p.queue_depth,
            "mpi_iters": getattr(p, "mpi_iters", mpi.ITERATIONS),
            "mpi_timeout_s": getattr(p, "mpi_timeout_s", mpi.TIMEOUT_S),
        },
        "phases": phases,
        "flows": flows,
        "control_writes": writes.count(0.0),
        "control_writes_setup": len(writes.entries) - writes.count(0.0),
        "control_channel": "tc" if plan.family == "htb" else ("p4runtime" if p.control_used == "p4runtime" else "ctl"),
        "idle_owd_ms": {k: round(v, 4) for k, v in result["idle_owd_ms"].items()},
        "cpu_pct": _cpu(cpu_recs),
        # datagrams the receiving hosts' own sockets dropped (not the network's loss)
        "receiver_udp": result.get("receivers", {}),
        "switch_drops": result.get("switch_drops", {}),
        "queues": _telemetry(telemetry),
        # measured by the switches' TM per packet (lanes only): {switch: {port: {queue: {phase: ...}}}}
        "queueing_delay_us": per_phase(read_jsonl(out / "delay.jsonl"), phases),
        # egress queue depths and receive-ring backlogs, per phase (lanes only, in packets)
        "occupancy": occupancy.per_phase(telemetry, read_jsonl(out / "rx.jsonl"), phases),
    }  # fmt: skip
    if p.proto == "tcp":  # retransmissions per flow over the run, from the clients' own reports
        summary["tcp_retries"] = _tcp_retries(out, plan)
    if result.get("mpi") is not None:
        summary["mpi"] = result["mpi"]
    if p.case == "runtime":
        from lanes.lab.transitions import runtime_transitions

        summary["transitions"] = runtime_transitions(summary, series, _high_class_dequeues(telemetry, topo, plan))
    summary["validity"] = validity.check(p, topo, plan, flows, phases, _steal_pct(cpu_recs),
                                         result.get("offered_mbps", {}), summary.get("mpi"))  # fmt: skip
    return summary


def _high_class_dequeues(records: list[dict], topo: Topology, plan: Plan) -> dict[str, list[dict]]:
    """Per high flow, what its source's virtual switch sent from the high class's queues toward
    the flow's destination, every monitor sample (lanes only: {} without telemetry)."""
    from lanes.lab.transitions import dequeue_rates

    if not records:
        return {}
    qids = {w.setting.prio for w in plan.writes if w.cls == "high"}
    for sw, settings in plan.initial.items():
        qids |= {settings[e.prefix].prio for e in topo.classes.get(sw, []) if e.cls == "high" and e.prefix in settings}
    res = {}
    for fr in plan.flows:
        f = fr.flow
        if f.cls == "high":
            sw = topo.hosts[f.src].switch
            res[f.key] = dequeue_rates(records, sw, topo.out_port(sw, topo.hosts[f.dst].ip), qids)
    return res


def _tcp_retries(out: Path, plan: Plan) -> dict[str, int]:
    res = {}
    for fr in plan.flows:
        log = out / f"client_{fr.flow.src}_{fr.flow.dst}.txt"
        if log.exists():
            res[fr.flow.key] = sum(n for _, n in traffic.parse_client_retries(log.read_text()))
    return res


def _steal_pct(recs: list[dict]) -> float | None:
    v = [r["steal_pct"] for r in recs if "steal_pct" in r]
    return round(sum(v) / len(v), 2) if v else None

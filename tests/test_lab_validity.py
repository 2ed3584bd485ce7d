"""A run's validity section (lanes.lab.validity): an under-used congested port, a sender short of
its rate and a machine losing CPU to steal are flagged; a good run and a strict scheduler's
deliberately idle capacity are not."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from lanes.emu.topo import build
from lanes.lab import cases, validity


def _run(tmp_path: Path, alg: str, delivered: dict[str, float], sent: dict[str, float],
         steal: float | None = 0.1) -> dict:  # fmt: skip
    topo = build("star", 100)
    plan = cases.plan(topo, "proactive", alg, 20)
    phases = [{"name": ph.name, "start_s": ph.start_s, "end_s": ph.end_s} for ph in plan.phases]
    flows = {}
    for fr in plan.flows:
        per = {}
        for ph in phases:
            if fr.start_s < ph["end_s"] - 0.5:
                per[ph["name"]] = {"throughput_mbps": delivered[f"{fr.flow.key}@{ph['name']}"]}
        flows[fr.flow.key] = {"class": fr.flow.cls, "phases": per}
        # the client's per-second reports, as iperf 2 prints them
        lines = [f"[  1] {t:.4f}-{t + 1:.4f} sec  6.25 MBytes  {sent[fr.flow.key]} Mbits/sec  4458/0  4458 pps"
                 for t in range(30)]  # fmt: skip
        (tmp_path / f"client_{fr.flow.src}_{fr.flow.dst}.txt").write_text("\n".join(lines) + "\n")
    offered = {fr.flow.key: 50 * validity.IPERF_MEGA for fr in plan.flows}
    p = SimpleNamespace(out=tmp_path, proto="udp")
    return validity.check(p, topo, plan, flows, phases, steal, offered)


FULL = {"h2->h4@low_only": 48.6, "h3->h4@low_only": 48.6, "h1->h4@high_present": 52.4,
        "h2->h4@high_present": 22.4, "h3->h4@high_present": 22.4}  # fmt: skip
SENT = {"h1->h4": 52.4, "h2->h4": 52.4, "h3->h4": 52.4}


def test_a_full_port_and_punctual_senders_are_valid(tmp_path: Path) -> None:
    v = _run(tmp_path, "rlsp-drr", FULL, SENT)
    assert v["valid"] and v["warnings"] == []
    assert v["ports"]["high_present"]["h4"]["backlogged"]
    assert abs(v["ports"]["high_present"]["h4"]["share"] - 97.2 / 97.22) < 0.01


def test_an_underused_port_a_short_sender_and_steal_are_flagged(tmp_path: Path) -> None:
    slow = {**FULL, "h2->h4@low_only": 44.9, "h3->h4@low_only": 44.9}
    v = _run(tmp_path, "rlsp-drr", slow, {**SENT, "h3->h4": 40.0}, steal=3.5)
    assert not v["valid"]
    text = "\n".join(v["warnings"])
    assert "low_only: the port to h4 delivered 89.8 of 97.2 Mb/s (92.4 %)" in text
    assert "sender h3->h4 reached 40.0 of 52.4 Mb/s" in text
    assert "stole 3.5 %" in text
    assert len(v["warnings"]) == 4  # the short sender in both phases


def test_strict_priority_leaves_capacity_idle_by_design(tmp_path: Path) -> None:
    idle = {**FULL, "h2->h4@high_present": 19.4, "h3->h4@high_present": 19.4}
    v = _run(tmp_path, "strict", idle, SENT)
    assert v["valid"], v["warnings"]
    assert v["ports"]["high_present"]["h4"]["checked"] is False


def _tree2_tcp(tmp_path: Path, uplink_share: float) -> dict:
    """tree2 at 10 Mb/s, TCP: each virtual switch's flows fill `uplink_share` of its uplink."""
    topo = build("tree2", 10)
    plan = cases.plan(topo, "proactive", "rlsp-drr", 20)
    phases = [{"name": ph.name, "start_s": ph.start_s, "end_s": ph.end_s} for ph in plan.phases]
    cap = validity.goodput_capacity_mbps(10, "tcp")
    weights = {"high": 0.52, "medium": 0.24, "low": 0.24}
    flows = {}
    for fr in plan.flows:
        per = {}
        for ph in phases:
            if fr.start_s < ph["end_s"] - 0.5:
                here = topo.hosts[fr.flow.src].switch
                total = sum(weights[g.flow.cls] for g in plan.flows
                            if g.start_s < ph["end_s"] - 0.5 and topo.hosts[g.flow.src].switch == here)  # fmt: skip
                per[ph["name"]] = {"throughput_mbps": uplink_share * cap * weights[fr.flow.cls] / total}
        flows[fr.flow.key] = {"class": fr.flow.cls, "phases": per}
    p = SimpleNamespace(out=tmp_path, proto="tcp")
    return validity.check(p, topo, plan, flows, phases, 0.1, {})


def test_on_a_tree_the_shared_uplink_is_the_port_checked(tmp_path: Path) -> None:
    v = _tree2_tcp(tmp_path, 0.99)
    # no receiver's own port is full, but the virtual switches' uplinks are: valid
    assert v["valid"], v["warnings"]
    checked = v["ports"]["high_present"]
    assert set(checked) == {"s1->s5", "s2->s5"} and min(c["share"] for c in checked.values()) > 0.95
    slow = _tree2_tcp(tmp_path, 0.85)
    assert not slow["valid"]
    assert any("high_present: the port s1->s5 delivered 8.1 of 9.6 Mb/s (85.0 %)" in w for w in slow["warnings"])


def test_the_ping_pongs_port_is_not_checked_in_the_mpi_phase(tmp_path: Path) -> None:
    topo = build("star", 100)
    plan = cases.plan(topo, "mpi", "rlsp-drr", 20)
    phases = [{"name": "load", "start_s": 0.0, "end_s": 3.0}, {"name": "mpi", "start_s": 3.0, "end_s": 5.62}]
    # a real run's numbers: iperf counted 84.2 of 97.2 Mb/s in the second before the ping-pong ended
    delivered = {"load": 48.6, "mpi": 42.1}
    flows = {fr.flow.key: {"class": fr.flow.cls, "phases": {
        ph["name"]: {"throughput_mbps": delivered[ph["name"]], "window_s": [1.0, 3.0] if ph["name"] == "load" else [4.0, 5.0]}
        for ph in phases}} for fr in plan.flows}  # fmt: skip
    lat = {"4096": 1712.46, "8192": 2665.13, "16384": 3642.67}
    p = SimpleNamespace(out=tmp_path, proto="udp")
    offered = {fr.flow.key: 50 * validity.IPERF_MEGA for fr in plan.flows}
    v = validity.check(p, topo, plan, flows, phases, 0.1, offered, {"latency_us": lat, "iterations": 100})
    assert v["valid"], v["warnings"]
    port = v["ports"]["mpi"]["h4"]
    assert port["checked"] is False and port["mpi_payload_mbps"] > 4
    assert port["delivered_mbps"] == round(84.2 + port["mpi_payload_mbps"], 2)
    assert v["ports"]["load"]["h4"]["checked"] is True and "mpi_payload_mbps" not in v["ports"]["load"]["h4"]
    # without the ping-pong's results the port is checked as before, and flagged
    v = validity.check(p, topo, plan, flows, phases, 0.1, offered)
    assert any("mpi: the port to h4 delivered 84.2 of 97.2" in w for w in v["warnings"])
    # a ping-pong stopped before its largest size makes the run invalid, its sizes kept
    part = {"latency_us": {"1": 2.0e6, "2": 2.5e6}, "iterations": 100, "complete": False}
    v = validity.check(p, topo, plan, flows, phases, 0.1, offered, part)
    assert v["warnings"] == ["mpi: the ping-pong was stopped before its largest size (measured 2 sizes, up to 2 B)"]

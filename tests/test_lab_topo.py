"""The lab's topologies, cases and parsers without a network: every host reaches every other
through the thesis's tables, the appendix-2 rates, the thesis 7.4 write counts, iperf parsing."""

from __future__ import annotations

import pytest
from lanes.emu.topo import build, classify_everywhere
from lanes.errors import LanesError
from lanes.lab import cases, traffic
from lanes.lab.thesis import control_writes


def _peer(topo, switch: str, port: int) -> str:
    for lk in topo.links:
        if lk.a == switch and lk.a_port == port:
            return lk.b
        if lk.b == switch and lk.b_port == port:
            return lk.a
    raise AssertionError(f"{switch} port {port} has no link")


@pytest.mark.parametrize("name", ["star", "tree1", "tree2"])
def test_every_host_reaches_every_host_by_the_tables(name: str) -> None:
    topo = build(name, 100)
    for src in topo.hosts.values():
        for dst in topo.hosts.values():
            if src is dst:
                continue
            node, hops = src.switch, 0
            while node in topo.switches:
                node = _peer(topo, node, topo.out_port(node, dst.ip))
                hops += 1
                assert hops <= 5, (src, dst)
            assert node == dst.name, (name, src.name, dst.name, node)


def test_tree2_layout_and_rates() -> None:
    topo = build("tree2", 100)
    assert len(topo.hosts) == 12 and len(topo.switches) == 7
    assert topo.hosts["h10"].ip == "10.0.4.10" and topo.hosts["h10"].mac == "00:00:00:00:04:0a"
    assert topo.port_rates("s7") == {1: 200, 2: 200}  # ToR-aggregation at twice the rate
    assert topo.port_rates("s1") == {1: 100, 2: 100, 3: 100, 4: 100}
    assert topo.vswitches() == ["s1", "s2", "s3", "s4"]
    assert [(f.key, f.cls) for f in topo.flows][:4] == [
        ("h1->h7", "high"), ("h2->h8", "medium"), ("h3->h9", "low"), ("h4->h10", "high"),
    ]  # fmt: skip


def test_appendix2_rates_at_the_thesis_link_rates() -> None:
    # table 2.2 (star, 100 Mb/s): 7 500 000 / 2 500 000 / 2 500 000 B/s, quantum 7000
    p = cases.plan(build("star", 100), "proactive", "rlsp-drr", 20)
    got = {k: (s.prio, s.rate_Bps, s.quantum) for k, s in p.initial["s1"].items()}
    assert got["10.0.1.1/32"] == (7, 7_500_000, 7000)
    assert got["10.0.1.2/32"] == (5, 2_500_000, 7000)
    assert got["10.0.1.3/32"] == (4, 2_500_000, 7000)
    # table 2.7 (tree2, 10 Mb/s): 750 000 for the high class; 2 500 000 on the doubled links
    p = cases.plan(build("tree2", 10), "proactive", "rlsp-drr", 20)
    assert p.initial["s3"]["10.0.3.7/32"].rate_Bps == 750_000
    assert p.initial["s7"]["10.0.0.0/8"] == cases.ClassSetting(3, 2_500_000, 7000)


@pytest.mark.parametrize("topo,n", [("star", 1), ("tree1", 2), ("tree2", 4)])
@pytest.mark.parametrize("case", ["runtime", "proactive", "mpi"])
@pytest.mark.parametrize("alg", ["no", "strict", "rlsp-drr"])
def test_write_counts_follow_thesis_7_4(topo: str, n: int, case: str, alg: str) -> None:
    p = cases.plan(build(topo, 50), case, alg, 30)
    assert len(p.writes) == control_writes(case, alg, n)
    assert all(0 < w.t_s < 30 for w in p.writes)


def test_runtime_rlsp_drr_moves_the_high_class_to_queue_7_and_back() -> None:
    p = cases.plan(build("star", 100), "runtime", "rlsp-drr", 30)
    assert [(w.t_s, w.cls, w.setting.prio, w.setting.rate_Bps) for w in p.writes] == [
        (10.0, "high", 7, 7_500_000), (20.0, "high", 6, 4_166_667),
    ]  # fmt: skip
    assert [ph.name for ph in p.phases] == ["fair_before", "prioritized", "fair_after"]


def test_classifying_everywhere_gives_the_core_the_senders_classes_at_its_own_link_rate() -> None:
    thesis = build("tree2", 10)
    assert thesis.vswitches() == ["s1", "s2", "s3", "s4"]
    every = classify_everywhere(build("tree2", 10))
    assert every.vswitches() == [f"s{i}" for i in range(1, 8)]
    for s in thesis.vswitches():
        assert every.classes[s] == thesis.classes[s], "the access switches keep their tables"
    plan = cases.plan(every, "proactive", "rlsp-drr", 60)
    for core in ("s5", "s6", "s7"):
        high = plan.initial[core]["10.0.1.1/32"]
        assert (high.prio, high.rate_Bps) == (7, round(0.6 * 20e6 / 8)), "high class, 60 % of the 20 Mb/s uplink"
        assert plan.initial[core]["10.0.1.2/32"].prio == 5
        assert plan.initial[core]["10.0.0.0/8"].prio == 3, "anything else stays in the default class"
    assert cases.plan(thesis, "proactive", "rlsp-drr", 60).initial["s5"] == {
        "10.0.0.0/8": cases.ClassSetting(3, round(20e6 / 8))
    }


def test_bad_parameters_are_one_line_errors() -> None:
    with pytest.raises(LanesError, match="unknown topology"):
        build("ring", 100)
    with pytest.raises(LanesError, match="unknown algorithm"):
        cases.plan(build("star", 100), "proactive", "wfq", 20)
    with pytest.raises(LanesError, match="unknown case"):
        cases.plan(build("star", 100), "later", "strict", 20)


SERVER_UDP = """\
[  1] local 10.0.1.4%h4-eth0 port 5001 connected with 10.0.1.1 port 41437 (trip-times) (sock=5) (peer 2.1.8)
[ ID] Interval            Transfer     Bandwidth        Jitter   Lost/Total  Latency avg/min/max/stdev PPS  Rx/inP  NetPwr
[  1] 0.0000-1.0000 sec  2.69 MBytes  22.6 Mbits/sec   0.865 ms 2309/4229 (55%) 31.887/0.020/134.884/19.071 ms 1928 pps 1920/61(37) pkts 88.51
[  1] 1.0000-2.0000 sec  1011 KBytes  8.28 Mbits/sec   2.421 ms 3696/4400 (84%) 89.475/66.763/110.560/7.572 ms 704 pps 704/63(5) pkts 11.57
[  1] 0.0000-2.0463 sec  23.3 MBytes  19.4 Mbits/sec   0.803 ms 28000/44586 (63%) 38.541/0.020/134.884/24.531 ms 1651 pps 16586/64(41) pkts 62.97
"""


def test_iperf2_enhanced_udp_lines() -> None:
    ivs = traffic.parse_server(SERVER_UDP)
    assert len(ivs) == 2  # the 2 s summary line is not an interval
    assert ivs[0].mbps == pytest.approx(22.6) and (ivs[0].lost, ivs[0].total) == (2309, 4229)
    assert ivs[0].owd_ms == pytest.approx(31.887) and ivs[0].owd_max_ms == pytest.approx(134.884)
    assert ivs[1].start_s == 1.0 and ivs[1].mbps == pytest.approx(8.28)

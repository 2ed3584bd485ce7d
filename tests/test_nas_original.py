"""`--preset original` of case nas (no network): what the switches, links, senders and the
controller get, the original's timeline with its hand trigger, and that the controller's settings
of the preset still find the doomed flow at 500/600 kb/s."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from lanes.errors import LanesError
from lanes.lab_cli import nas_params, register
from lanes.nas.detect import Detector, NasConfig
from lanes.nas.plan import plan
from lanes.nas.run import net_args, offered_mbps, sender_cmd
from lanes.nas.topo import build

VICTIM, UP, DOWN = "h1->h4", "h2->h3", "h5->h6"


def params(*extra: str) -> object:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["lab", "run", "--case", "nas", "--topo", "nas3", "--out", "/tmp/x", *extra])
    return nas_params(args)


def test_the_preset_sets_the_originals_rates_buffers_drop_and_trigger() -> None:
    p = params("--alg", "nas-manual", "--preset", "original")
    assert (p.link_mbps, p.queue_depth, p.drop, p.manual_at_s, p.duration_s) == (1.0, 50, "tail", 17.0, 40.0)
    assert (p.timeline, p.poll_s, p.min_pkts, p.udp_len) == ("original", 1.0, 10, 1470)
    # the links: bottlenecks of 500 kb/s (s1-s2) and 600 kb/s (s2-s4), hosts at their own rates
    topo = build(p.topo, p.link_mbps)
    rates = {(lk.a, lk.b): lk.mbps for lk in topo.links}
    assert rates[("s1", "s2")] == 0.5 and rates[("s2", "s4")] == 0.6
    assert (rates[("h1", "s1")], rates[("h2", "s1")], rates[("h5", "s2")]) == (0.5, 0.5, 0.6)
    # every switch: 50-packet queues, drop-tail, its ports at those rates
    pl = plan(topo, p.alg, p.duration_s, timeline=p.timeline, manual_at_s=p.manual_at_s)
    net = net_args(p, pl)
    assert (net["queue_depth"], net["switch_args"]) == (50, ("--drop", "tail"))
    assert topo.port_rates("s1") == {1: 0.5, 2: 0.5, 3: 0.5}
    assert topo.port_rates("s2")[3] == 0.6
    # iperf's rate: the host link less the headers it does not count (1470 of 1512 bytes)
    assert offered_mbps(p, topo, "h1") == pytest.approx(0.5 * 1470 / 1512)


def test_options_beside_the_preset_win_and_without_it_nothing_changes() -> None:
    p = params("--alg", "nas-manual", "--preset", "original", "--queue-depth", "64", "--manual-at", "20")
    assert (p.queue_depth, p.manual_at_s, p.link_mbps, p.drop) == (64, 20.0, 1.0, "tail")
    p = params("--alg", "nas-auto")
    assert (p.link_mbps, p.queue_depth, p.drop, p.timeline, p.poll_s, p.min_pkts) == (
        100.0, 64, "random", "scaled", 0.25, 20)  # fmt: skip
    # in band the program's 250 ms window needs 20 of the flow's packets: smaller datagrams
    assert params("--alg", "nas-inband", "--preset", "original").udp_len == 200


def test_the_originals_timeline_by_hand_down_never_pauses() -> None:
    pl = plan(build("nas3", 1.0), "nas-manual", 40, timeline="original", manual_at_s=17.0)
    assert [(ph.name, ph.start_s, ph.end_s) for ph in pl.phases] == [
        ("calibrate", 0, 5), ("baseline", 5, 17), ("active", 17, 32), ("reset", 32, 40)]  # fmt: skip
    assert [(s.name, s.start_s, s.end_s) for s in pl.senders] == [
        ("up", 0, 40), ("down-1", 0, 32), ("victim", 5, 40)]  # fmt: skip
    assert (pl.manual_s, pl.onset_s, pl.arm_s) == (17.0, 17.0, None)


def test_the_originals_timeline_automatic_down_returns_at_the_trigger_second() -> None:
    pl = plan(build("nas3", 1.0), "nas-auto", 40, timeline="original", manual_at_s=17.0)
    assert [(ph.name, ph.start_s, ph.end_s) for ph in pl.phases] == [
        ("calibrate", 0, 5), ("baseline", 5, 13), ("gap", 13, 17), ("active", 17, 32), ("reset", 32, 40)]  # fmt: skip
    assert [(s.name, s.start_s, s.end_s) for s in pl.senders] == [
        ("up", 0, 40), ("down-1", 0, 13), ("down-2", 17, 32), ("victim", 5, 40)]  # fmt: skip
    # armed 1.5 s before the onset: a full queue still delivers down's packets a second into the gap
    assert (pl.manual_s, pl.onset_s, pl.arm_s) == (None, 17.0, 15.5)
    assert plan(build("nas3", 1.0), "nas-inband", 40, timeline="original").arm_s == 15.5


def test_tcp_senders_do_not_report_each_second_so_a_write_may_wait_behind_the_slow_queue() -> None:
    # iperf 2 gives a client's socket a send timeout of half its report interval and quits on a
    # longer write; a 50-packet queue at 500 kb/s holds 1.2 s, so with -i 1 TCP clients died
    for proto, reports in (("tcp", False), ("udp", True)):
        p = params("--alg", "nas-off", "--preset", "original", "--proto", proto)
        topo = build(p.topo, p.link_mbps)
        pl = plan(topo, p.alg, p.duration_s, timeline=p.timeline, manual_at_s=p.manual_at_s)
        victim = next(s for s in pl.senders if s.name == "victim")
        cmd = sender_cmd(p, topo, victim, 5003, 1000.0)
        assert ("-i" in cmd) is reports
        assert cmd[cmd.index("-t") + 1] == "35" and cmd[cmd.index("--txstart-time") + 1] == "1000.000000"
        assert ("-u" in cmd) is (proto == "udp")


def test_a_trigger_the_timeline_cannot_hold_is_a_clear_error() -> None:
    with pytest.raises(LanesError, match="--manual-at must be 9 to 20 s"):
        plan(build("nas3", 1.0), "nas-manual", 40, timeline="original", manual_at_s=25.0)
    with pytest.raises(LanesError, match="--manual-at must be 13 to 20 s"):
        plan(build("nas3", 1.0), "nas-auto", 40, timeline="original", manual_at_s=10.0)
    with pytest.raises(LanesError, match="unknown timeline 'later'"):
        plan(build("nas3", 1.0), "nas-auto", 40, timeline="later")


def test_the_scaled_timeline_is_unchanged() -> None:
    pl = plan(build("nas3", 100), "nas-manual", 40)
    assert [(ph.name, ph.start_s, ph.end_s) for ph in pl.phases] == [
        ("calibrate", 0, 6), ("baseline", 6, 14), ("gap", 14, 18), ("active", 18, 30), ("reset", 30, 40)]  # fmt: skip
    assert [(s.name, s.start_s, s.end_s) for s in pl.senders] == [
        ("up", 0, 40), ("down-1", 0, 14), ("down-2", 18, 30), ("victim", 6, 40)]  # fmt: skip
    assert (pl.manual_s, pl.onset_s, pl.arm_s) == (19.0, 18.0, None)
    assert (plan(build("nas3", 100), "nas-auto", 40).arm_s, plan(build("nas3", 100), "nas-inband", 40).arm_s) == (
        14.0, 14.5)  # fmt: skip


def _frames(kbps: float, seconds: float) -> int:
    return int(kbps * 1e3 / 8 * seconds / 1512)


def test_the_presets_controller_finds_the_victim_at_500_600_kbps() -> None:
    """Counters as the baseline at the original's rates leaves them: the victim brings 250 kb/s
    to s2's port (about 21 frames a second) and loses 30 % there. With the default 250 ms polls
    that is 5 frames a poll, under the 20 needed: never judged. With the preset's 1-s polls and
    10 frames it is demoted at s1 after three lossy polls."""
    topo = build("nas3", 1.0)
    flows = {VICTIM: {"s1": (500, 0.5), "s2": (250, 0.3), "s4": (175, 0)},
             UP: {"s1": (500, 0.5), "s2": (250, 0), "s3": (250, 0)}, DOWN: {"s2": (600, 0.3), "s4": (425, 0)}}  # fmt: skip
    ports = {"s1:3": 500, "s2:3": 600, "s2:2": 250}

    def actions(cfg: NasConfig, polls: int) -> list:
        det = Detector(topo, cfg)
        c: dict = {s: {"in": {}, "out": {}, "port": {}} for s in topo.switches}
        got, t = [], 0.0
        for _ in range(polls + 1):
            got += det.step(t, {s: {k: dict(v) for k, v in d.items()} for s, d in c.items()})[0]
            t = round(t + cfg.poll_s, 3)
            for key, hops in flows.items():
                idx = det.index(key)
                for s, (kbps, loss) in hops.items():
                    pk = _frames(kbps, cfg.poll_s)
                    a, b = c[s]["in"].get(idx, (0, 0)), c[s]["out"].get(idx, (0, 0))
                    c[s]["in"][idx] = (a[0] + pk, a[1] + pk * 1512)
                    c[s]["out"][idx] = (b[0] + round(pk * (1 - loss)), b[1] + round(pk * (1 - loss)) * 1512)
            for sp, kbps in ports.items():
                s, port = sp.split(":")
                c[s]["port"][int(port)] = c[s]["port"].get(int(port), 0) + int(kbps * 1e3 / 8 * cfg.poll_s)
        return got

    assert actions(NasConfig(), 40) == []  # 10 s of 250 ms polls
    p = params("--alg", "nas-auto", "--preset", "original")
    got = actions(NasConfig(poll_s=p.poll_s, min_pkts=p.min_pkts), 10)
    assert [(a.kind, a.flow, a.switch, a.detected_at, a.t) for a in got] == [("demote", VICTIM, "s1", "s2:3", 3.0)]


def test_net_args_carry_the_drop_rule(tmp_path: Path) -> None:
    p = params("--alg", "nas-auto", "--drop", "tail")
    pl = plan(build("nas3", 100), "nas-auto", 40)
    assert net_args(p, pl)["switch_args"] == ("--drop", "tail")

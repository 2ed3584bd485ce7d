"""The decisions of network-aware scheduling on counter samples (no network): who is doomed, where
it yields, that nothing happens without a shared upstream bottleneck, hold and reset."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from lanes.nas.detect import Detector, NasConfig
from lanes.nas.topo import build

PKT = 1500
POLL = 0.25
VICTIM, UP, DOWN = "h1->h4", "h2->h3", "h5->h6"


class Feed:
    """Cumulative nas counters of nas3 (L = 100: s1-s2 50 Mb/s, s2-s4 60 Mb/s), built from rates."""

    def __init__(self, cfg: NasConfig | None = None) -> None:
        self.topo = build("nas3", 100)
        self.det = Detector(self.topo, cfg or NasConfig())
        self.t = 0.0
        self.c = {s: {"in": {}, "out": {}, "port": {}} for s in self.topo.switches}
        self.det.step(self.t, self._copy())

    def _copy(self) -> dict:
        return {s: {k: dict(v) for k, v in d.items()} for s, d in self.c.items()}

    def poll(self, flows: dict[str, dict[str, tuple[float, float]]], ports: dict[str, float]) -> list:
        """flows: key -> switch -> (Mb/s in, loss fraction); ports: "s:p" -> Mb/s out."""
        self.t = round(self.t + POLL, 3)
        for key, hops in flows.items():
            idx = self.det.index(key)
            for s, (mbps, loss) in hops.items():
                pk = int(mbps * 1e6 / 8 * POLL / PKT)
                a, b = self.c[s]["in"].get(idx, (0, 0)), self.c[s]["out"].get(idx, (0, 0))
                out = int(pk * (1 - loss))
                self.c[s]["in"][idx] = (a[0] + pk, a[1] + pk * PKT)
                self.c[s]["out"][idx] = (b[0] + out, b[1] + out * PKT)
        for sp, mbps in ports.items():
            s, p = sp.split(":")
            self.c[s]["port"][int(p)] = self.c[s]["port"].get(int(p), 0) + int(mbps * 1e6 / 8 * POLL)
        actions, _ = self.det.step(self.t, self._copy())
        return actions


# the baseline of nas3: victim and up share s1-s2, victim and down share s2-s4
CONGESTED = {
    VICTIM: {"s1": (50, 0.5), "s2": (25, 0.3), "s4": (17.5, 0)},
    UP: {"s1": (50, 0.5), "s2": (25, 0), "s3": (25, 0)},
    DOWN: {"s2": (60, 0.3), "s4": (42.5, 0)},
}
FULL = {"s1:3": 50, "s2:3": 60, "s2:2": 25}
DEMOTED = {VICTIM: {"s1": (50, 1.0)}, UP: {"s1": (50, 0), "s2": (50, 0), "s3": (50, 0)},
           DOWN: {"s2": (60, 0.02), "s4": (59, 0)}}  # fmt: skip
DEMOTED_PORTS = {"s1:3": 50, "s2:3": 59, "s2:2": 50}


def test_a_flow_doomed_downstream_yields_at_the_shared_upstream_bottleneck() -> None:
    f = Feed()
    assert f.poll(CONGESTED, FULL) == []
    assert f.poll(CONGESTED, FULL) == []
    (a,) = f.poll(CONGESTED, FULL)  # the third lossy poll in a row
    assert (a.kind, a.flow, a.switch, a.detected_at) == ("demote", VICTIM, "s1", "s2:3")
    assert a.loss == pytest.approx(0.3, abs=0.01)
    assert a.t == pytest.approx(3 * POLL)


def test_nothing_without_a_shared_upstream_bottleneck() -> None:
    # only victim and down: the victim's first hop is busy, but nobody else uses it
    f = Feed()
    alone = {VICTIM: {"s1": (50, 0), "s2": (50, 0.45), "s4": (27, 0)}, DOWN: CONGESTED[DOWN]}
    for _ in range(20):
        assert f.poll(alone, {"s1:3": 50, "s2:3": 60}) == []
    # the shared first hop is not busy (the up flow sends little)
    f = Feed()
    light = {**CONGESTED, UP: {"s1": (5, 0), "s2": (5, 0), "s3": (5, 0)}}
    for _ in range(20):
        assert f.poll(light, {"s1:3": 30, "s2:3": 60}) == []


def test_loss_at_the_first_hop_or_below_threshold_is_no_reason() -> None:
    f = Feed()
    first_only = {VICTIM: {"s1": (50, 0.5), "s2": (25, 0), "s4": (25, 0)}, UP: CONGESTED[UP]}
    for _ in range(20):
        assert f.poll(first_only, {"s1:3": 50, "s2:3": 25}) == []
    f = Feed()
    small = {**CONGESTED, VICTIM: {"s1": (50, 0.5), "s2": (25, 0.03), "s4": (24, 0)}}
    for _ in range(20):
        assert f.poll(small, FULL) == []
    # lossy polls that are not consecutive do not add up
    f = Feed()
    for i in range(20):
        assert f.poll(CONGESTED if i % 3 else small, FULL) == []


def test_unarmed_watches_only_and_arming_starts_a_new_streak() -> None:
    f = Feed()
    f.det.armed = False
    for _ in range(10):
        assert f.poll(CONGESTED, FULL) == []
    f.det.armed = True
    assert f.poll(CONGESTED, FULL) == []
    assert f.poll(CONGESTED, FULL) == []
    assert [a.kind for a in f.poll(CONGESTED, FULL)] == ["demote"]


def test_demotion_holds_while_the_downstream_port_has_no_room_then_resets_once() -> None:
    cfg = NasConfig(hold_s=2.0)
    f = Feed(cfg)
    for _ in range(3):
        acts = f.poll(CONGESTED, FULL)
    assert [a.kind for a in acts] == ["demote"]
    # down keeps s2-s4 full for 10 s: no change, however many hold times pass
    for _ in range(40):
        assert f.poll(DEMOTED, DEMOTED_PORTS) == []
    # down stops: the port is idle, and hold_s after its last refresh the victim is restored
    idle = {VICTIM: {"s1": (50, 1.0)}, UP: DEMOTED[UP]}
    stop_t = f.t
    restored = []
    for _ in range(20):
        restored += f.poll(idle, {"s1:3": 50, "s2:2": 50})
    assert [(a.kind, a.switch) for a in restored] == [("restore", "s1")]
    assert restored[0].t - stop_t == pytest.approx(cfg.hold_s + POLL, abs=POLL + 1e-9)


def test_at_most_one_change_per_hold_time() -> None:
    cfg = NasConfig(hold_s=2.0)
    f = Feed(cfg)
    changes = []
    # a competitor that comes and goes every 1.5 s: faster than the hold time
    for i in range(80):
        on = (i // 6) % 2 == 0
        changes += f.poll(CONGESTED if on else {VICTIM: {"s1": (50, 0.5), "s2": (25, 0), "s4": (25, 0)},
                                                UP: CONGESTED[UP]}, FULL if on else {"s1:3": 50, "s2:3": 25})  # fmt: skip
    ts = [a.t for a in changes]
    assert ts, "the flow was never demoted"
    assert all(b - a >= cfg.hold_s - 1e-9 for a, b in itertools.pairwise(ts))


def test_the_inband_observer_turns_deadlines_into_exact_events(tmp_path: Path) -> None:
    from lanes.nas.inband import InbandObserver

    topo = build("nas3", 100)
    obs = InbandObserver(topo, {}, NasConfig(hold_s=3.0), tmp_path, arm_s=None, end_s=40)
    obs.t0 = 100.0  # run time 0 at 100 s of the monotonic clock
    us = 1_000_000
    obs._track("s1", VICTIM, 0, 110 * us)  # never demoted: nothing
    # first seen demoted at 110.2 s with a deadline of 113.0: it began at 110.0 (deadline - hold)
    obs._track("s1", VICTIM, 113 * us, 110_200_000)
    obs._track("s1", VICTIM, 115 * us, 112 * us)  # refreshed: no new event
    obs._track("s1", VICTIM, 115 * us, 115_100_000)  # lapsed: restored at the deadline, 15.0
    assert [(e["kind"], e["t"], e["switch"]) for e in obs.events] == [("demote", 10.0, "s1"), ("restore", 15.0, "s1")]

"""Buffer occupancy per phase from the monitor's samples (lanes.lab.occupancy) and the
receive backlogs read from the switch's stats_json."""

from __future__ import annotations

import json

from lanes.lab.occupancy import per_phase
from lanes.lab.switch_stats import parse_stats

PHASES = [{"name": "low_only", "start_s": 0.0, "end_s": 5.0}, {"name": "high_present", "start_s": 5.0, "end_s": 10.0}]


def _queues(t: float, low_depth: int) -> dict:
    return {"t": t, "switch": "s1", "queues": [
        {"port": 4, "qid": 4, "depth_pkts": low_depth}, {"port": 4, "qid": 7, "depth_pkts": 0}]}  # fmt: skip


def test_queue_depths_and_ring_backlogs_per_phase() -> None:
    queues = [_queues(t / 4, 10 if t < 20 else 64) for t in range(1, 41)]  # every 0.25 s to t = 10
    rx = [{"t": float(t), "switch": "s1", "ports": {"1": t, "4": 0}} for t in range(1, 11)]
    got = per_phase(queues, rx, PHASES)["s1"]
    # instant samples: low_only's from 1 s (after the skip) up to 5 s, high_present's from 6 s
    assert got["low_only"]["queues"]["4"]["4"] == {"mean": 10.0, "max": 10, "samples": 16}
    assert got["high_present"]["queues"]["4"]["4"] == {"mean": 64.0, "max": 64, "samples": 16}
    assert got["high_present"]["queues"]["4"]["7"]["max"] == 0
    # a ring sample at t covers (t - 1, t]: the phase's own seconds 2-5 and 7-10, edges kept
    assert got["low_only"]["rx_backlog"]["1"] == {"mean": 3.5, "max": 5, "samples": 4}
    assert got["high_present"]["rx_backlog"]["1"] == {"mean": 8.5, "max": 10, "samples": 4}


def test_a_late_change_moves_the_window() -> None:
    rx = [{"t": float(t), "switch": "s1", "ports": {"1": t}} for t in range(1, 11)]
    late = [PHASES[0], {**PHASES[1], "changed_s": 7.0}]
    assert per_phase([], rx, late)["s1"]["high_present"]["rx_backlog"]["1"]["samples"] == 2  # t = 9, 10


def test_rx_backlog_from_stats_json() -> None:
    def port(num: int, backlog: int) -> dict:
        return {"port": num, "rx_pkts": 1200, "rx_bytes": 0, "rx_backlog_max": backlog, "tx_pkts": 0,
                "tx_bytes": 0, "tx_errors": 0, "queues": []}  # fmt: skip

    stats = parse_stats(json.dumps({"ports": [port(1, 17), port(4, 0)], "drops": {"parser": 2}}))
    assert stats.rx_backlog() == {"1": 17, "4": 0}
    assert stats.drops == {"parser": 2}

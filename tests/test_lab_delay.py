"""Merging the switches' queueing-delay histograms per phase (lanes.lab.delay)."""

from __future__ import annotations

import json

from lanes.lab.delay import bucket_lower, per_phase, quantile_ns
from lanes.lab.switch_stats import parse_stats


def test_bucket_bounds_match_the_switch() -> None:
    # the same bounds as crates/switch/src/delay.rs: exact below 4 ns, then 4 buckets per octave
    assert [bucket_lower(i) for i in range(10)] == [0, 1, 2, 3, 4, 5, 6, 7, 8, 10]
    assert bucket_lower(4 * 12) == 1 << 13 and bucket_lower(4 * 12 + 3) == 7 << 11
    for i in range(4, 250):
        assert bucket_lower(i) < bucket_lower(i + 1) <= 1.25 * bucket_lower(i)


def test_stats_json_rows_merge_per_phase() -> None:
    # 1000 packets at ~10 us in queue 7 and ~1 ms in queue 5, over two one-second samples
    def queue(qid: int, max_ns: int, sum_ns: int, bucket: int) -> dict:
        delay = {"pkts": 500, "p50": 0, "p99": 0, "max": max_ns, "sum": sum_ns, "buckets": [[bucket, 500]]}
        return {"qid": qid, "depth_pkts": 0, "depth_bytes": 0, "enq_pkts": 500, "deq_pkts": 500, "drop_pkts": 0,
                "delay_ns": delay}  # fmt: skip

    empty = {**queue(0, 0, 0, 0), "delay_ns": {"pkts": 0, "max": 0, "sum": 0, "buckets": []}}
    port = {"port": 4, "rx_pkts": 0, "rx_bytes": 0, "rx_backlog_max": 0, "tx_pkts": 0, "tx_bytes": 0, "tx_errors": 0,
            "queues": [empty, queue(7, 10_000, 5_000_000, 48), queue(5, 1_000_000, 500_000_000, 75)]}  # fmt: skip
    stats = parse_stats(json.dumps({"ports": [port], "drops": {}}))
    rows = [q.delay_row() for q in stats.queues() if q.delay.pkts > 0]
    assert [(r["port"], r["qid"], r["pkts"]) for r in rows] == [(4, 7, 500), (4, 5, 500)]
    assert bucket_lower(48) <= 10_000 < bucket_lower(49) and bucket_lower(75) <= 1_000_000 < bucket_lower(76)
    records = [{"t": t, "switch": "s1", "queues": rows} for t in (3.0, 4.0, 9.0)]
    phases = [{"name": "a", "start_s": 0, "end_s": 5}, {"name": "b", "start_s": 5, "end_s": 10}]
    got = per_phase(records, phases)
    a7, a5 = got["s1"]["4"]["7"]["a"], got["s1"]["4"]["5"]["a"]
    assert a7["pkts"] == 1000 and a5["pkts"] == 1000  # samples at t=3 and t=4 belong to phase a
    assert abs(a7["p99_us"] - 10) <= 1.25 and abs(a5["p50_us"] - 1000) <= 125
    assert a7["mean_us"] == 10.0 and a5["max_us"] == 1000.0
    assert got["s1"]["4"]["7"]["b"]["pkts"] == 500
    assert quantile_ns({}, 0, 0.5) == 0.0

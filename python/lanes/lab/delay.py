"""Queueing delay measured by the lanes switches: the TM records each packet's time in its queue
into a log-linear histogram per queue (crates/switch/src/delay.rs); the monitor reads and resets it
every second (lanes.lab.switch_stats), and this module merges those samples per phase."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from lanes import _native
from lanes.lab.cases import measured_from


def bucket_lower(i: int) -> int:
    """Smallest delay in ns of histogram bucket i (exact below 8 ns, then 4 buckets per octave): the
    switch's own bounds; past the last bucket, the largest delay there is."""
    lower = _native.delay_bucket_lower(i)
    return (1 << 64) - 1 if lower is None else lower


def quantile_ns(buckets: dict[int, int], total: int, q: float) -> float:
    """The q quantile as the middle of its bucket."""
    rank = max(1, math.ceil(q * total - 1e-9))
    seen = 0
    for i in sorted(buckets):
        seen += buckets[i]
        if seen >= rank:
            return (bucket_lower(i) + bucket_lower(i + 1)) / 2
    return float(bucket_lower(max(buckets) + 1)) if buckets else 0.0


@dataclass
class _Merged:
    """One queue's samples of one phase, merged."""

    pkts: int = 0
    sum_ns: int = 0
    max_ns: int = 0
    buckets: defaultdict[int, int] = field(default_factory=lambda: defaultdict(int))


def per_phase(records: list[dict[str, Any]], phases: list[dict[str, Any]], skip_s: float = 1.0) -> dict[str, Any]:
    """{switch: {port: {qid: {phase: {pkts, p50_us, p99_us, max_us, mean_us}}}}} from the monitor's
    one-second samples; a sample taken at t covers (t - 1, t]; the first `skip_s` of a phase is left out."""
    acc: defaultdict[tuple[str, int, int, str], _Merged] = defaultdict(_Merged)
    for rec in records:
        for ph in phases:
            if measured_from(ph) + skip_s + 1.0 <= rec["t"] <= ph["end_s"] + 0.5:
                for q in rec["queues"]:
                    a = acc[(rec["switch"], q["port"], q["qid"], ph["name"])]
                    a.pkts += q["pkts"]
                    a.sum_ns += q["sum_ns"]
                    a.max_ns = max(a.max_ns, q["max_ns"])
                    for i, c in q["buckets"].items():
                        a.buckets[int(i)] += c
    out: dict[str, Any] = {}
    for (sw, port, qid, phase), a in sorted(acc.items()):
        if not a.pkts:
            continue
        out.setdefault(sw, {}).setdefault(str(port), {}).setdefault(str(qid), {})[phase] = {
            "pkts": a.pkts,
            "p50_us": round(min(quantile_ns(a.buckets, a.pkts, 0.5), a.max_ns) / 1000, 2),
            "p99_us": round(min(quantile_ns(a.buckets, a.pkts, 0.99), a.max_ns) / 1000, 2),
            "max_us": round(a.max_ns / 1000, 2),
            "mean_us": round(a.sum_ns / a.pkts / 1000, 2),
        }
    return out

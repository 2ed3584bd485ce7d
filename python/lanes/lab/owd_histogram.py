"""Per-datagram one-way latency percentiles from iperf's per-second receive histograms.

iperf's own per-second lines give a second's mean; a percentile of those means hides what single
datagrams wait (a 99th percentile of 17 seconds is their maximum). The histograms count every
datagram, so merged over a phase they give the percentiles of the datagrams themselves."""

from __future__ import annotations

from collections.abc import Iterable


def merge(rows: Iterable[dict]) -> tuple[dict[int, int], int]:
    """Sum the histograms of series rows ({"owd_hist_us": {us: n}, "owd_beyond": n}); JSON keys
    may be strings. Rows without a histogram add nothing."""
    bins: dict[int, int] = {}
    beyond = 0
    for r in rows:
        for k, n in (r.get("owd_hist_us") or {}).items():
            bins[int(k)] = bins.get(int(k), 0) + int(n)
        beyond += int(r.get("owd_beyond") or 0)
    return bins, beyond


def percentile_ms(bins: dict[int, int], beyond: int, q: float) -> float | None:
    """The upper edge (ms) of the bin holding the q-quantile datagram; None without datagrams or
    when that datagram is beyond the histogram's range (its latency is not known)."""
    total = sum(bins.values()) + beyond
    if total == 0:
        return None
    rank = max(1, -(-q * total // 1))  # the ceil(q * total)-th datagram, counted from 1
    seen = 0
    for us in sorted(bins):
        seen += bins[us]
        if seen >= rank:
            return us / 1000.0
    return None


TAIL_QUANTILES = (("p50", 0.5), ("p99", 0.99), ("p999", 0.999))


def tail_ms(bins: dict[int, int], beyond: int) -> dict[str, float | None]:
    """The median, 99th and 99.9th percentiles (ms) as {"p50": .., "p99": .., "p999": ..}."""
    return {name: percentile_ms(bins, beyond, q) for name, q in TAIL_QUANTILES}

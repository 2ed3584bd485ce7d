"""Bin packing of VMs onto hypervisors ("bins") of a given number of cores.

Every packer takes the VMs in decreasing order of average utilisation over the training days, as
Paper VI does, and returns the bin index of each VM.

- `util`: the paper's baseline. A VM fits a bin if the bins' summed averages stay <= threshold x
  capacity; first bin that fits, else a new bin (the paper calls it best-fit decreasing; its steps
  are first-fit).
- `util-bf`: true best fit on averages: the fullest bin that still fits.
- `delay`: the paper's delay packing. A VM fits a bin if the bin's total delay over the training days,
  computed with capacity threshold x capacity, stays <= the accepted delay per day x training days;
  first bin that fits, else a new bin (a VM alone in a new bin stays even if over the limit).
- `delay-bf` (beyond the paper): the same delay test, but among the bins that pass it the VM goes to
  the one with the highest summed average, i.e. best fit on utilisation, feasible on delay. It fills
  bins harder than first-fit while keeping each bin's delay under the limit.
- `delay-corr` (beyond the paper, correlation-aware): among the bins that pass the delay test, the one
  where the VM adds the least delay, i.e. whose busy periods overlap the VM's demand the least; ties go
  to the fullest bin. Bins then reach the limit later, so fewer bins hold the same VMs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from lanes import _native

PACKERS = ("util", "util-bf", "delay", "delay-bf", "delay-corr")
DELAY_PACKERS = ("delay", "delay-bf", "delay-corr")
CHOICE = {"delay": "first", "delay-bf": "fullest", "delay-corr": "least-added"}
ENGINES = ("native", "numpy")


def _nz(mask: np.ndarray) -> np.ndarray:
    return mask.nonzero()[0]  # np.flatnonzero without its wrapper overhead (called per VM per bin)


@dataclass
class TrainSet:
    """What packers see of the training days.

    means: (M,) average utilisation per VM; series: (M, D, T) utilisation on each training day;
    dt_min: minutes per sample. Cumulative sums are computed once and shared by all delay packings.
    """

    means: np.ndarray
    series: np.ndarray
    dt_min: float

    def __post_init__(self) -> None:
        # Stable sort: equal averages keep trace order, so results do not depend on the sort algorithm.
        self.order = np.argsort(-self.means, kind="stable")
        self._bytes: bytes | None = None

    # Made on first use: only the numpy delay packer needs them.
    @cached_property
    def cum(self) -> np.ndarray:
        return np.cumsum(self.series, axis=2)  # (M, D, T)

    @cached_property
    def flat(self) -> np.ndarray:
        return self.series.reshape(len(self.means), -1)  # (M, D*T)

    @cached_property
    def cum_sum(self) -> np.ndarray:
        return self.cum.sum(axis=(1, 2))  # (M,)

    def series_bytes(self) -> bytes:
        """The (M, D, T) series as native float64 bytes, for the Rust packer (made once)."""
        if self._bytes is None:
            self._bytes = np.ascontiguousarray(self.series, dtype=np.float64).tobytes()
        return self._bytes


def pack_util(means: np.ndarray, order: np.ndarray, cap: float, best_fit: bool) -> np.ndarray:
    """Assign VMs (in `order`) to bins by summed average <= cap."""
    assign = np.empty(len(means), dtype=np.int64)
    loads = np.zeros(len(means))
    n_bins = 0
    for m in order:
        a = means[m]
        fits = _nz(loads[:n_bins] + a <= cap)
        if fits.size == 0:
            b = n_bins
            n_bins += 1
        elif best_fit:
            b = fits[np.argmax(loads[fits])]  # argmax returns the first (lowest index) among equals
        else:
            b = fits[0]
        loads[b] += a
        assign[m] = b
    return assign


class _DelayBins:
    """Open bins with the running sum S(t) of (demand - capacity) per training day.

    The total delay of a bin is (dt^2 / c) * sum_t L(t), with L = S - min(0, running min of S) the
    Lindley backlog in percent units; so sum L = sum S - sum min(0, running min S). Adding a VM adds its
    cumulative series to S, so only the running minimum needs recomputing for a candidate.

    A cheap lower bound rejects most bins without that: inside a busy period [t0, t1] of the bin
    (L > 0), added work v raises every later backlog of the period by at least what was added since
    t0, so sum L' >= sum L + sum_s v(s) * W(s), W(s) = samples from s to the end of its busy period.
    """

    def __init__(self, train: TrainSet, cap: float) -> None:
        _, d, t = train.series.shape
        self.train = train
        self.cap = cap
        self.scale = train.dt_min**2 / cap
        self.ramp = np.arange(t, dtype=np.float64)
        self.empty = -cap * np.broadcast_to(self.ramp + 1.0, (d, t))
        self.s = np.empty((8, d, t))
        self.w = np.zeros((8, d * t))
        self.s_sum = np.zeros(8)
        self.delay = np.zeros(8)
        self.load = np.zeros(8)
        self.n = 0

    def candidate_delays(self, bins: np.ndarray, m: int) -> np.ndarray:
        if bins.size == 1:  # a view, not a fancy-indexed copy
            b = int(bins[0])
            tmp = self.s[b : b + 1] + self.train.cum[m]
        else:
            tmp = self.s[bins] + self.train.cum[m]
        np.minimum.accumulate(tmp, axis=2, out=tmp)
        np.minimum(tmp, 0.0, out=tmp)
        low = tmp.sum(axis=(1, 2))
        return (self.s_sum[bins] + self.train.cum_sum[m] - low) * self.scale

    def lower_bounds(self, m: int) -> np.ndarray:
        """Lower bound of every open bin's delay with VM m added."""
        return self.delay[: self.n] + (self.w[: self.n] @ self.train.flat[m]) * self.scale

    def open_bin(self) -> int:
        if self.n == len(self.s):
            grow = len(self.s)
            self.s = np.concatenate([self.s, np.empty_like(self.s[:grow])])
            self.w = np.concatenate([self.w, np.zeros_like(self.w[:grow])])
            self.s_sum = np.concatenate([self.s_sum, np.zeros(grow)])
            self.delay = np.concatenate([self.delay, np.zeros(grow)])
            self.load = np.concatenate([self.load, np.zeros(grow)])
        b = self.n
        self.s[b] = self.empty
        self.s_sum[b] = self.empty.sum()
        self.delay[b] = 0.0
        self.load[b] = 0.0
        self.n += 1
        return b

    def add(self, b: int, m: int, delay: float) -> None:
        s = self.s[b]
        s += self.train.cum[m]
        self.s_sum[b] += self.train.cum_sum[m]
        changed = delay != self.delay[b]
        self.delay[b] = delay
        self.load[b] += self.train.means[m]
        # Same delay means the same backlog at every sample (it can only grow), so W is unchanged.
        if changed and delay > 0:
            backlog = s - np.minimum(np.minimum.accumulate(s, axis=1), 0.0)
            # Treating a tiny backlog as idle only weakens the bound; float noise must not count as busy.
            busy = backlog > 1e-6 * self.cap
            t = self.ramp
            next_idle = np.minimum.accumulate(np.where(busy, t.size, t)[:, ::-1], axis=1)[:, ::-1]
            self.w[b] = np.where(busy, next_idle - t, 0.0).ravel()


def pack_delay(
    train: TrainSet, cap: float, limit: float, choice: str = "first", chunk: int = 8
) -> np.ndarray:
    """Assign VMs to bins whose training delay (at capacity `cap`) stays <= `limit` minutes in total.

    choice: "first" bin that passes, the "fullest" (highest summed average) or the "least-added" delay.
    """
    bins = _DelayBins(train, cap)
    assign = np.empty(len(train.means), dtype=np.int64)
    slack = limit + 1e-9 * max(1.0, limit)  # the bound may exceed the exact value by rounding
    for m in train.order:
        # Candidates: bins whose lower bound with the VM is within the limit
        # (and the delay only grows as VMs are added, so a bin over the limit never takes another VM).
        live = _nz(bins.lower_bounds(m) <= slack) if bins.n else np.empty(0, dtype=np.int64)
        chosen = -1
        chosen_delay = 0.0
        if choice != "first" and live.size:
            q = bins.candidate_delays(live, m)
            ok = _nz(q <= limit)
            if ok.size:
                if choice == "fullest":
                    i = ok[np.argmax(bins.load[live[ok]])]
                else:
                    # Rounded so that equal added delays tie exactly despite float noise.
                    added = np.round(q[ok] - bins.delay[live[ok]], 9)
                    # lexsort: last key first; least added delay, then the fullest bin
                    i = ok[np.lexsort((-bins.load[live[ok]], added))[0]]
                chosen, chosen_delay = int(live[i]), float(q[i])
        else:
            # Most VMs fit the first candidate: try it alone, then the others in chunks.
            start, size = 0, 1
            while start < live.size:
                part = live[start : start + size]
                start, size = start + size, chunk
                q = bins.candidate_delays(part, m)
                ok = _nz(q <= limit)
                if ok.size:
                    chosen, chosen_delay = int(part[ok[0]]), float(q[ok[0]])
                    break
        if chosen < 0:
            chosen = bins.open_bin()
            chosen_delay = float(bins.candidate_delays(np.array([chosen]), m)[0])
        bins.add(chosen, m, chosen_delay)
        assign[m] = chosen
    return assign


def pack_delay_many(
    train: TrainSet, specs: Sequence[tuple[float, float, str]], engine: str = "native"
) -> list[np.ndarray]:
    """Several delay packings of one training set: (capacity x threshold, total limit, choice) each.

    engine "native" runs them in Rust (lanes-consolidate: same algorithm, plain loops, several times
    faster), "numpy" here (the reference the Rust packer is tested against).
    """
    if engine == "numpy" or not specs:
        return [pack_delay(train, cap, limit, choice) for cap, limit, choice in specs]
    m, d, t = train.series.shape
    out = _native.consolidate_pack_delay(
        train.series_bytes(),
        m,
        d,
        t,
        [int(i) for i in train.order],
        [float(x) for x in train.means],
        float(train.dt_min),
        [(float(c), float(lim), ch) for c, lim, ch in specs],
    )
    return [np.asarray(a, dtype=np.int64) for a in out]


def make_packer(name: str) -> Callable[[TrainSet, float, float, float], np.ndarray]:
    """A function (train, capacity_pct, threshold_fraction, limit_min_per_day) -> bin of each VM."""

    def run(train: TrainSet, capacity: float, threshold: float, limit_per_day: float) -> np.ndarray:
        cap = capacity * threshold
        if name == "util":
            return pack_util(train.means, train.order, cap, best_fit=False)
        if name == "util-bf":
            return pack_util(train.means, train.order, cap, best_fit=True)
        days = train.series.shape[1]
        return pack_delay(train, cap, limit_per_day * days, CHOICE[name])

    if name not in PACKERS:
        raise ValueError(name)
    return run

"""The workload-delay metric of Paper VI.

Utilisation samples u(t) are percent of one core, averaged over an interval of dt minutes; a machine
with C cores serves 100*C percent. The demand of interval t is u(t)*dt percent-minutes, the capacity
C*dt. Work that does not fit waits in a queue:

    q(t+1) = max(q(t) + d(t+1) - C*dt, 0)          (percent-minutes)

Unit choice for "minutes of delay": the current delay w(t) = q(t) / C is the wall-clock minutes that
newly arriving work waits until the backlog ahead of it is drained at full capacity (Fig. 3, case 2:
a 150 % spike on one core leaves 50 percent-minutes queued, so all later work waits 0.5 min). The
total delay Q sums w(t) once per minute of trace, Q = sum_t w(t) * dt / 1 min, so that a day has the
same weight with 1-minute samples (the paper's data) and 5-minute samples (PlanetLab): steady 0.5 min
of delay over a day is 720 minutes either way.

The recursion is Lindley's; its closed form q(t) = S(t) - min(0, min_{s<=t} S(s)), with S the
running sum of (d - C*dt), lets numpy evaluate many series at once along the last axis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Backlogs below this many percent-minutes are rounding noise from cumulative sums of floats.
_EPS = 1e-7


def backlog(util: np.ndarray, capacity_pct: float | np.ndarray, dt_min: float = 1.0) -> np.ndarray:
    """Queue q(t) in percent-minutes for each series along the last axis (queue empty before t=1).

    `capacity_pct` is 100 x cores (scalar, or one value per series broadcastable to util[..., None]).
    """
    util = np.asarray(util, dtype=np.float64)
    cap = np.asarray(capacity_pct, dtype=np.float64)
    if cap.ndim:
        cap = cap[..., None]
    s = np.cumsum(util - cap, axis=-1)
    low = np.minimum(np.minimum.accumulate(s, axis=-1), 0.0)
    q = (s - low) * dt_min
    q[q < _EPS] = 0.0
    return q


def current_delay(util: np.ndarray, capacity_pct: float | np.ndarray, dt_min: float = 1.0) -> np.ndarray:
    """Current delay w(t) = q(t)/C in minutes along the last axis."""
    cap = np.asarray(capacity_pct, dtype=np.float64)
    if cap.ndim:
        cap = cap[..., None]
    return backlog(util, capacity_pct, dt_min) / cap


def total_delay(util: np.ndarray, capacity_pct: float | np.ndarray, dt_min: float = 1.0) -> np.ndarray:
    """Total delay Q in minutes (sum of w(t) per minute of trace) along the last axis."""
    return current_delay(util, capacity_pct, dt_min).sum(axis=-1) * dt_min


@dataclass(frozen=True)
class BinStats:
    """Per-series statistics in the columns of Paper VI's Tables I and II (arrays over the series)."""

    delay_min: np.ndarray  # total delay Q (minutes)
    fill_pct: np.ndarray  # average demand / capacity (may exceed 100 %)
    delayed_pct: np.ndarray  # share of samples with a non-empty queue
    delay_when_delayed_min: np.ndarray  # mean w(t) over delayed samples, 0 if never delayed


def bin_stats(util: np.ndarray, capacity_pct: float | np.ndarray, dt_min: float = 1.0) -> BinStats:
    """Table statistics of each series along the last axis."""
    util = np.asarray(util, dtype=np.float64)
    cap = np.broadcast_to(np.asarray(capacity_pct, dtype=np.float64), util.shape[:-1])
    w = current_delay(util, cap, dt_min)
    delayed = w > 0
    n_delayed = delayed.sum(axis=-1)
    wsum = w.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        when = np.where(n_delayed > 0, wsum / np.maximum(n_delayed, 1), 0.0)
    return BinStats(
        delay_min=wsum * dt_min,
        fill_pct=100.0 * util.mean(axis=-1) / cap,
        delayed_pct=100.0 * n_delayed / util.shape[-1],
        delay_when_delayed_min=when,
    )

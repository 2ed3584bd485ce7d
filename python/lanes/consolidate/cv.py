"""Leave-one-day-out cross-validation of the packers (Paper VI, Sec. V-C).

For each test day the packers see the other days (averages and series), pack, and the resulting
bins are evaluated on the test day with the full capacity. Every bin of every fold is one point.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from dataclasses import dataclass

import numpy as np

from lanes.consolidate.delay import bin_stats
from lanes.consolidate.packers import (
    CHOICE,
    DELAY_PACKERS,
    TrainSet,
    make_packer,
    pack_delay_many,
)
from lanes.consolidate.trace import Trace

_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

Key = tuple[str, int, float, float | None]  # packer, cores, threshold (fraction), limit (min/day)


@dataclass(frozen=True)
class Grid:
    packers: tuple[str, ...]
    cores: tuple[int, ...]
    thresholds: tuple[float, ...]  # fractions, 0.3 = 30 %
    limits: tuple[float, ...]  # accepted delay per bin, minutes per day
    delay_thresholds: tuple[float, ...] | None = None  # for delay packers; None: same as thresholds
    engine: str = "native"  # delay packers in Rust ("native") or numpy ("numpy", the reference)

    def thresholds_for(self, packer: str) -> tuple[float, ...]:
        if packer in DELAY_PACKERS and self.delay_thresholds is not None:
            return self.delay_thresholds
        return self.thresholds

    def keys(self) -> list[Key]:
        out: list[Key] = []
        for p in self.packers:
            for c in self.cores:
                for th in self.thresholds_for(p):
                    if p in DELAY_PACKERS:
                        out.extend((p, c, th, lim) for lim in self.limits)
                    else:
                        out.append((p, c, th, None))
        return out


# Per-bin points of one fold: key -> (n_bins, delay, fill, delayed_pct, delay_when_delayed)
FoldPoints = dict[Key, tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]


def evaluate(assign: np.ndarray, test_util: np.ndarray, capacity: float, dt_min: float):
    """Statistics of each bin on the test day; test_util is (M, T)."""
    n_bins = int(assign.max()) + 1
    order = np.argsort(assign, kind="stable")
    starts = np.searchsorted(assign[order], np.arange(n_bins))
    # Every bin has at least one VM, so reduceat sums exactly each bin's members.
    sums = np.add.reduceat(test_util[order], starts, axis=0)
    return n_bins, bin_stats(sums, capacity, dt_min)


def run_fold(trace: Trace, test: int, grid: Grid) -> FoldPoints:
    train_idx = np.array([d for d in range(len(trace.days)) if d != test])
    train = TrainSet(
        means=trace.vm_means(train_idx),
        series=trace.train_series(train_idx),
        dt_min=trace.dt_min,
    )
    keys = grid.keys()
    assigns: dict[Key, np.ndarray] = {}
    # All delay packings of the fold in one call (the Rust packer reads the training set once).
    delay_keys = [k for k in keys if k[0] in DELAY_PACKERS]
    specs = [
        (100.0 * cores * th, (lim or 0.0) * len(train_idx), CHOICE[p]) for p, cores, th, lim in delay_keys
    ]
    assigns.update(zip(delay_keys, pack_delay_many(train, specs, grid.engine), strict=True))
    packers = {p: make_packer(p) for p in grid.packers if p not in DELAY_PACKERS}
    out: FoldPoints = {}
    for key in keys:
        p, cores, th, _ = key
        capacity = 100.0 * cores
        assign = assigns[key] if key in assigns else packers[p](train, capacity, th, 0.0)
        n_bins, st = evaluate(assign, trace.util[test], capacity, trace.dt_min)
        out[key] = (n_bins, st.delay_min, st.fill_pct, st.delayed_pct, st.delay_when_delayed_min)
    return out


_WORKER: dict = {}


def _init_worker(trace: Trace, grid: Grid) -> None:
    _WORKER["trace"], _WORKER["grid"] = trace, grid


def _timed_fold(trace: Trace, test: int, grid: Grid) -> tuple[int, FoldPoints, float]:
    t0 = time.perf_counter()
    return test, run_fold(trace, test, grid), time.perf_counter() - t0


def _fold_job(test: int) -> tuple[int, FoldPoints, float]:
    return _timed_fold(_WORKER["trace"], test, _WORKER["grid"])


def native_in_use(grid: Grid) -> bool:
    uses_delay = any(p in DELAY_PACKERS for p in grid.packers)
    return uses_delay and grid.engine == "native"


def _report(
    progress: Callable[[str], None] | None, done: int, total: int, day: str, secs: float, t0: float
) -> None:
    if progress:
        elapsed = time.perf_counter() - t0
        progress(f"cv: fold {done}/{total} (test day {day}) in {secs:.1f} s, {elapsed:.1f} s elapsed")


def run_cv(
    trace: Trace, grid: Grid, jobs: int | None = None, progress: Callable[[str], None] | None = None
) -> dict[Key, list[tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]]:
    """All folds, in worker threads (Rust packer) or processes (numpy); key -> per-fold points by test day."""
    n_days = len(trace.days)
    if n_days < 2:
        raise ValueError("cross-validation needs at least two days")
    jobs = max(1, min(jobs or os.cpu_count() or 1, n_days))
    results: dict[int, FoldPoints] = {}
    t0 = time.perf_counter()
    if jobs == 1:
        for test in range(n_days):
            t1 = time.perf_counter()
            results[test] = run_fold(trace, test, grid)
            _report(progress, len(results), n_days, trace.days[test], time.perf_counter() - t1, t0)
    elif native_in_use(grid):
        # The Rust packer releases the GIL and is most of the work: threads share the trace for free.
        with ThreadPoolExecutor(max_workers=jobs) as tpool:
            futures = [tpool.submit(_timed_fold, trace, test, grid) for test in range(n_days)]
            for fut in as_completed(futures):
                test, points, secs = fut.result()
                results[test] = points
                _report(progress, len(results), n_days, trace.days[test], secs, t0)
    else:
        # The hot loop is many small numpy calls; BLAS threads in every worker only fight each other, and
        # thread counts are read when numpy is imported, hence fresh (spawned) workers with one thread each.
        saved = {k: os.environ.get(k) for k in _THREAD_VARS}
        os.environ.update({k: "1" for k in _THREAD_VARS})
        try:
            pool = ProcessPoolExecutor(
                max_workers=jobs,
                mp_context=mp.get_context("spawn"),
                initializer=_init_worker,
                initargs=(trace, grid),
            )
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        try:
            for test, points, secs in pool.map(_fold_job, range(n_days)):
                results[test] = points
                _report(progress, len(results), n_days, trace.days[test], secs, t0)
        finally:
            pool.shutdown(cancel_futures=True)
    merged: dict[Key, list] = {k: [] for k in grid.keys()}  # noqa: SIM118
    for d in range(n_days):
        for key, point in results[d].items():
            merged[key].append(point)
    return merged


def _row(p: str, cores: int | str, th: float, lim: float | None, folds: list) -> dict:
    delay = np.concatenate([f[1] for f in folds])
    fill = np.concatenate([f[2] for f in folds])
    delayed = np.concatenate([f[3] for f in folds])
    when = np.concatenate([f[4] for f in folds])
    return {
        "packer": p,
        "cores": cores,
        "threshold_pct": round(100 * th, 6),
        "delay_limit_min_per_day": lim,
        "points": int(delay.size),
        "bins_per_fold": 0.0,
        "delay_avg_min": float(delay.mean()),
        "delay_median_min": float(np.median(delay)),
        "delay_max_min": float(delay.max()),
        "fill_avg_pct": float(fill.mean()),
        "fill_median_pct": float(np.median(fill)),
        "fill_max_pct": float(fill.max()),
        "delayed_time_avg_pct": float(delayed.mean()),
        "delay_when_delayed_avg_min": float(when.mean()),
    }


def summarise(merged: dict[Key, list], n_folds: int) -> list[dict]:
    """Rows with the columns of Paper VI's Tables I and II: one per key, then one per key with the core
    counts pooled (cores "all"), which is how the paper's tables are made."""
    rows = []
    pooled: dict[tuple[str, float, float | None], list] = {}
    for (p, cores, th, lim), folds in merged.items():
        row = _row(p, cores, th, lim, folds)
        row["bins_per_fold"] = row["points"] / n_folds
        rows.append(row)
        pooled.setdefault((p, th, lim), []).extend(folds)
    for (p, th, lim), folds in pooled.items():
        row = _row(p, "all", th, lim, folds)
        row["bins_per_fold"] = row["points"] / n_folds
        rows.append(row)
    return rows


def stderr_progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)

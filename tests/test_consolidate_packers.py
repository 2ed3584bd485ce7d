"""Packing results on small hand-made cases, and the delay packer against a plain reference."""

from __future__ import annotations

import numpy as np
import pytest
from lanes.consolidate.delay import total_delay
from lanes.consolidate.packers import TrainSet, make_packer, pack_delay, pack_util


def train_set(series: list[list[float]] | np.ndarray, dt: float = 1.0) -> TrainSet:
    arr = np.asarray(series, dtype=np.float64)
    if arr.ndim == 2:
        arr = arr[:, None, :]  # one training day
    return TrainSet(means=arr.mean(axis=(1, 2)), series=arr, dt_min=dt)


def test_util_first_fit_and_best_fit_differ_as_expected() -> None:
    means = np.array([8.0, 6.0, 3.0, 1.0, 1.0])
    order = np.arange(5)
    # First fit: 8->b0, 6->b1, 3->b1 (9), 1->b0 (9), 1->b0 (10).
    assert pack_util(means, order, 10.0, best_fit=False).tolist() == [0, 1, 1, 0, 0]
    # Best fit: the fourth VM goes to the fuller b1 (9 -> 10), the last to b0.
    assert pack_util(means, order, 10.0, best_fit=True).tolist() == [0, 1, 1, 1, 0]


def test_util_packer_sorts_by_average_and_applies_threshold() -> None:
    ts = train_set([[10, 10], [60, 60], [30, 30]])  # averages 10, 60, 30 on a 1-core bin
    # Threshold 100 %: 60 -> b0, 30 -> b0 (90), 10 -> b0 (100).
    assert make_packer("util")(ts, 100.0, 1.0, 0.0).tolist() == [0, 0, 0]
    # Threshold 70 %: 60 -> b0, 30 -> b1, 10 -> b0 (70).
    assert make_packer("util")(ts, 100.0, 0.7, 0.0).tolist() == [0, 0, 1]


# Three VMs with the same average (25 %): A and C spike together, B at another time.
SPIKES = [[100, 0, 0, 0], [0, 100, 0, 0], [100, 0, 0, 0]]


def test_delay_packer_separates_coinciding_spikes_that_util_packing_stacks() -> None:
    ts = train_set(SPIKES)
    assert make_packer("util")(ts, 100.0, 1.0, 0.0).tolist() == [0, 0, 0]
    # Stacked, the bin sees [200, 100, 0, 0] on one core: q = 100, 100 -> 1 + 1 = 2 minutes.
    assert total_delay(np.array([200.0, 100, 0, 0]), 100.0) == pytest.approx(2.0)
    assert pack_delay(ts, 100.0, 1.99).tolist() == [0, 0, 1]
    assert pack_delay(ts, 100.0, 2.0).tolist() == [0, 0, 0]


def test_delay_limit_is_per_training_day_and_threshold_shrinks_capacity() -> None:
    two_days = np.array([[s, s] for s in SPIKES], dtype=float)  # (VM, day, t): same pattern on 2 days
    ts = train_set(two_days)
    pack = make_packer("delay")
    # 2 minutes per day are accepted on each of the 2 days (4 in total): all in one bin.
    assert pack(ts, 100.0, 1.0, 2.0).tolist() == [0, 0, 0]
    assert pack(ts, 100.0, 1.0, 1.9).tolist() == [0, 0, 1]
    # At threshold 50 % a single 100 % spike already queues work: each VM sits alone.
    assert pack(ts, 100.0, 0.5, 0.1).tolist() == [0, 1, 2]


def test_vm_over_the_limit_alone_still_gets_a_bin() -> None:
    ts = train_set([[300, 0, 0], [10, 10, 10]])
    assign = pack_delay(ts, 100.0, 0.5)
    assert assign.tolist() == [0, 1]


def reference_delay_packing(ts: TrainSet, cap: float, limit: float, choice: str) -> list[int]:
    """Plain loops over bins, exact delay of every candidate, no bounds."""
    bins: list[list[int]] = []
    assign = [0] * len(ts.means)
    for m in ts.order:
        best, best_key = -1, None
        for b, members in enumerate(bins):
            base = ts.series[members].sum(axis=0)
            q_new = float(total_delay(base + ts.series[m], cap, ts.dt_min).sum())
            if q_new > limit:
                continue
            if choice == "first":
                best = b
                break
            load = float(ts.means[members].sum())
            q_old = float(total_delay(base, cap, ts.dt_min).sum())
            key = (-load,) if choice == "fullest" else (round(q_new - q_old, 9), -load)
            if best_key is None or key < best_key:
                best, best_key = b, key
        if best < 0:
            bins.append([])
            best = len(bins) - 1
        bins[best].append(int(m))
        assign[m] = best
    return assign


@pytest.mark.parametrize("choice", ["first", "fullest", "least-added"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_delay_packer_with_bounds_equals_plain_reference(choice: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    series = rng.integers(0, 100, size=(25, 3, 48)).astype(float) * (rng.random((25, 1, 1)) < 0.7)
    series[rng.random(series.shape) < 0.9] *= 0.1  # mostly idle, some spikes
    ts = train_set(series, dt=5.0)
    for cap, limit in [(300.0, 5.0), (400.0, 50.0), (250.0, 0.5)]:
        got = pack_delay(ts, cap, limit, choice).tolist()
        assert got == reference_delay_packing(ts, cap, limit, choice)


def test_absent_training_days_take_the_vms_average_day() -> None:
    from lanes.consolidate.trace import Trace

    util = np.zeros((3, 2, 2))
    util[0, 0] = [10, 30]
    util[2, 0] = [20, 50]  # VM 0 absent on day 1
    util[:, 1] = [[5, 5], [7, 7], [9, 9]]
    present = np.array([[True, True], [False, True], [True, True]])
    tr = Trace(days=["a", "b", "c"], vms=["x", "y"], util=util, present=present, step_s=43200.0)
    s = tr.train_series(np.array([0, 1, 2]))  # (VM, day, t)
    assert s[0].tolist() == [[10, 30], [15, 40], [20, 50]]
    assert s[1].tolist() == [[5, 5], [7, 7], [9, 9]]
    assert tr.vm_means(np.array([0, 1, 2])).tolist() == [27.5, 7.0]

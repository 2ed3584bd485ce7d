"""The Rust delay packer (lanes._native.consolidate_pack_delay) gives the numpy packer's bins."""

from __future__ import annotations

import numpy as np
import pytest
from lanes import _native
from lanes.consolidate.packers import TrainSet, pack_delay_many


def random_train(seed: int, vms: int, days: int, samples: int, dt: float) -> TrainSet:
    rng = np.random.default_rng(seed)
    series = rng.integers(0, 100, size=(vms, days, samples)).astype(float)
    series *= rng.random((vms, 1, 1)) < 0.6  # some VMs idle throughout
    series[rng.random(series.shape) < 0.92] *= 0.05  # mostly idle, with spikes
    series[:, 0, :] *= 0.1  # a quiet day: the idle-day shortcut is taken there
    return TrainSet(means=series.mean(axis=(1, 2)), series=series, dt_min=dt)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_native_equals_numpy_for_every_choice(seed: int) -> None:
    ts = random_train(seed, vms=40, days=3, samples=96, dt=5.0 if seed % 2 else 1.0)
    specs = [
        (cap, limit, choice)
        for choice in ("first", "fullest", "least-added")
        for cap in (150.0, 300.0, 600.0)
        for limit in (0.5, 2.0, 60.0, 3000.0)
    ]
    native = pack_delay_many(ts, specs, "native")
    numpy = pack_delay_many(ts, specs, "numpy")
    for spec, a, b in zip(specs, native, numpy, strict=True):
        assert a.tolist() == b.tolist(), spec


def test_native_keeps_every_multi_vm_bin_under_the_limit() -> None:
    ts = random_train(7, vms=60, days=2, samples=144, dt=1.0)
    cap, limit = 400.0, 5.0
    (assign,) = pack_delay_many(ts, [(cap, limit, "first")], "native")
    from lanes.consolidate.delay import total_delay

    for b in range(int(assign.max()) + 1):
        members = np.flatnonzero(assign == b)
        q = float(total_delay(ts.series[members].sum(axis=0), cap, ts.dt_min).sum())
        assert len(members) == 1 or q <= limit + 1e-9


def test_native_rejects_malformed_input() -> None:
    fn = _native.consolidate_pack_delay
    with pytest.raises(ValueError, match="series: 1 values, expected 2 x 1 x 1"):
        fn(b"\0" * 8, 2, 1, 1, [0, 1], [0.0, 0.0], 1.0, [(100.0, 1.0, "first")])
    with pytest.raises(ValueError, match="choice"):
        fn(b"\0" * 16, 2, 1, 1, [0, 1], [0.0, 0.0], 1.0, [(100.0, 1.0, "worst")])
    with pytest.raises(ValueError, match="every VM"):
        fn(b"\0" * 16, 2, 1, 1, [0, 5], [0.0, 0.0], 1.0, [(100.0, 1.0, "first")])

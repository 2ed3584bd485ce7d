"""The workload-delay metric of Paper VI on hand-computable series."""

from __future__ import annotations

import numpy as np
import pytest
from lanes.consolidate.delay import backlog, bin_stats, current_delay, total_delay


def loop_backlog(util: list[float], cap: float, dt: float) -> list[float]:
    """q(t+1) = max(q(t) + d(t+1) - C*dt, 0), written out as the paper states it."""
    q, out = 0.0, []
    for u in util:
        q = max(q + u * dt - cap * dt, 0.0)
        out.append(q)
    return out


def test_fig3_case1_steady_full_core_has_no_delay() -> None:
    util = np.full(60, 100.0)
    assert total_delay(util, 100.0) == 0.0
    assert bin_stats(util, 100.0).delayed_pct == 0.0


def test_fig3_case2_spike_delays_all_later_work_half_a_minute() -> None:
    util = np.array([150.0] + [100.0] * 59)
    w = current_delay(util, 100.0)
    assert np.allclose(w, 0.5)  # 50 percent-minutes queued on a 100 % core: half a minute
    assert total_delay(util, 100.0) == pytest.approx(0.5 * 60)
    st = bin_stats(util, 100.0)
    assert st.delayed_pct == 100.0
    assert st.delay_when_delayed_min == pytest.approx(0.5)


def test_delay_minutes_divide_backlog_by_all_cores() -> None:
    # 12 cores, one minute at 1800 %: 600 percent-minutes queued, drained at 1200 %/min -> 0.5 min.
    util = np.array([1800.0, 1200.0, 1200.0])
    assert np.allclose(backlog(util, 1200.0), 600.0)
    assert np.allclose(current_delay(util, 1200.0), 0.5)
    assert total_delay(util, 1200.0) == pytest.approx(1.5)


def test_backlog_drains_and_counts_delayed_share() -> None:
    util = np.array([200.0, 50.0, 50.0, 0.0])  # q = 100, 50, 0, 0 percent-minutes on one core
    assert backlog(util, 100.0).tolist() == [100.0, 50.0, 0.0, 0.0]
    st = bin_stats(util, 100.0)
    assert st.delay_min == pytest.approx(1.5)
    assert st.delayed_pct == 50.0
    assert st.delay_when_delayed_min == pytest.approx(0.75)
    assert st.fill_pct == pytest.approx(75.0)


def test_five_minute_samples_weigh_each_minute() -> None:
    # 5 minutes at 150 % leave 2.5 core-minutes: 2.5 min of delay, held for the next 5-minute sample too.
    util = np.array([150.0, 100.0])
    assert backlog(util, 100.0, dt_min=5.0).tolist() == [250.0, 250.0]
    assert total_delay(util, 100.0, dt_min=5.0) == pytest.approx(2.5 * 10)
    # The same work at 1-minute resolution gives the same total.
    fine = np.repeat(util, 5)
    assert total_delay(fine, 100.0) == pytest.approx(sum(loop_backlog(list(fine), 100.0, 1.0)) / 100.0)


@pytest.mark.parametrize("dt", [1.0, 5.0])
def test_closed_form_matches_the_recursion(dt: float) -> None:
    rng = np.random.default_rng(3)
    util = rng.gamma(2.0, 60.0, size=(5, 300)).round(1)
    q = backlog(util, 150.0, dt)
    for row, qrow in zip(util, q, strict=True):
        assert np.allclose(qrow, loop_backlog(list(row), 150.0, dt), atol=1e-6)
    # Per-series capacities broadcast along the leading axis.
    caps = np.array([100.0, 150.0, 200.0, 300.0, 1200.0])
    q2 = backlog(util, caps, dt)
    for row, cap, qrow in zip(util, caps, q2, strict=True):
        assert np.allclose(qrow, loop_backlog(list(row), cap, dt), atol=1e-6)


def test_fill_can_exceed_capacity() -> None:
    st = bin_stats(np.array([[150.0, 130.0], [10.0, 30.0]]), 100.0)
    assert st.fill_pct.tolist() == pytest.approx([140.0, 20.0])
    assert st.delay_min[1] == 0.0 and st.delay_when_delayed_min[1] == 0.0

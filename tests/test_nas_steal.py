"""lanes.nas.summary.steal_pct: the share of the machine's CPU time stolen over a phase's window,
from the run's half-second (t, stolen, total) samples nearest to the window's ends."""

from __future__ import annotations

from lanes.nas.summary import steal_pct

# 2 CPUs at 100 jiffies a second: 100 jiffies each half second, 10 of them stolen from 4 s on
CPU = [(t / 2, max(0, t - 8) * 10, t * 100) for t in range(0, 21)]


def test_the_window_takes_the_nearest_samples_and_the_share_of_their_difference() -> None:
    assert steal_pct(CPU, 0.0, 4.0) == 0.0
    assert steal_pct(CPU, 4.0, 8.0) == 10.0
    # 2.1 is nearest the 2.0 sample, 6.2 the 6.0 one: 40 of 800 jiffies
    assert steal_pct(CPU, 2.1, 6.2) == 5.0


def test_no_samples_or_one_give_no_figure() -> None:
    assert steal_pct([], 0.0, 4.0) is None
    assert steal_pct([(0.0, 5, 100)], 0.0, 4.0) is None

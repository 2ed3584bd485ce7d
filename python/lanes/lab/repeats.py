"""Runs repeated: the mean of a measure and its 95 % confidence interval (Student t), used by
the sweep's report and by nas's aggregate of repeats."""

from __future__ import annotations

import math
from collections.abc import Iterable

# two-sided 95 % Student t quantiles by degrees of freedom
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
        10: 2.228, 15: 2.131, 20: 2.086, 30: 2.042}  # fmt: skip


def mean_ci(values: Iterable[float | None]) -> dict[str, float | None] | None:
    """n, mean, the half-width of the two-sided 95 % confidence interval, min and max of the
    values given (None ones left out); None if there are none."""
    xs = [x for x in values if x is not None]
    if not xs:
        return None
    n, m = len(xs), sum(xs) / len(xs)
    if n == 1:
        return {"n": 1, "mean": m, "ci95": None, "min": m, "max": m}
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    t = _T95[max(k for k in _T95 if k <= n - 1)]
    return {"n": n, "mean": m, "ci95": t * sd / math.sqrt(n), "min": min(xs), "max": max(xs)}

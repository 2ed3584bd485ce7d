"""Published values of Paper VI (Tables I and II), cross-validated over 13 days, 12/16/32-core bins pooled.

Columns: avg, median, max total delay per bin per test day (minutes); avg, median, max bin fill (%);
average share of time delayed (%); average delay when delayed (minutes).
"""

from __future__ import annotations

COLUMNS = (
    "delay_avg_min",
    "delay_median_min",
    "delay_max_min",
    "fill_avg_pct",
    "fill_median_pct",
    "fill_max_pct",
    "delayed_time_avg_pct",
    "delay_when_delayed_avg_min",
)

# Table I, utilisation packing: threshold (%) -> columns.
TABLE_I: dict[int, tuple[float, ...]] = {
    30: (7.05, 0.00, 1923.19, 29.20, 29.67, 65.50, 0.14, 0.06),
    40: (32.81, 0.00, 4332.07, 38.19, 39.46, 70.59, 0.36, 0.24),
    50: (78.58, 0.06, 5770.64, 46.10, 49.27, 80.21, 0.94, 0.48),
    60: (191.35, 3.58, 9044.37, 58.41, 58.75, 88.90, 2.43, 1.01),
    70: (783.49, 18.45, 46706.97, 63.90, 68.75, 99.80, 9.77, 2.02),
    80: (2265.91, 140.32, 118346.79, 70.92, 77.72, 110.45, 23.08, 3.39),
    90: (8417.15, 1046.43, 178980.07, 82.74, 87.99, 119.21, 48.37, 8.24),
    100: (33891.16, 9798.13, 293550.53, 90.26, 95.97, 130.18, 65.77, 25.51),
}

# Table II, delay packing: (accepted delay, minutes per day; threshold %) -> columns.
TABLE_II: dict[tuple[int, int], tuple[float, ...]] = {
    (1, 70): (0.06, 0.00, 21.91, 27.52, 28.92, 54.50, 0.01, 0.01),
    (1, 80): (0.15, 0.00, 21.35, 31.64, 33.07, 63.45, 0.03, 0.02),
    (1, 90): (1.14, 0.00, 290.55, 36.98, 37.96, 66.86, 0.09, 0.06),
    (1, 100): (8.34, 0.10, 776.45, 43.46, 45.62, 81.41, 0.48, 0.16),
    (10, 70): (0.22, 0.00, 23.43, 34.33, 37.02, 58.13, 0.06, 0.05),
    (10, 80): (0.65, 0.00, 69.21, 39.59, 42.73, 62.44, 0.12, 0.09),
    (10, 90): (1.97, 0.01, 94.91, 43.46, 49.19, 72.84, 0.34, 0.13),
    (10, 100): (28.84, 2.67, 1242.55, 54.93, 59.91, 83.69, 1.83, 0.31),
    (100, 70): (1.13, 0.00, 81.32, 41.37, 45.38, 64.47, 0.20, 0.11),
    (100, 80): (2.04, 0.02, 47.34, 43.61, 50.77, 68.97, 0.48, 0.13),
    (100, 90): (8.86, 2.09, 393.87, 55.16, 59.09, 77.69, 1.73, 0.21),
    (100, 100): (118.82, 31.02, 3103.94, 58.94, 68.71, 87.80, 12.07, 0.51),
    (1000, 70): (5.14, 0.03, 248.11, 47.28, 52.46, 67.47, 1.28, 0.14),
    (1000, 80): (19.89, 1.02, 942.61, 54.23, 60.16, 73.98, 4.67, 0.21),
    (1000, 90): (88.04, 6.37, 2732.73, 59.76, 69.50, 83.62, 9.74, 0.42),
    (1000, 100): (783.87, 306.67, 11596.53, 69.40, 81.50, 98.31, 27.39, 1.69),
}


def paper_row(packer: str, threshold_pct: float, limit: float | None) -> dict[str, float] | None:
    """The published row for our paper-faithful packers (`util`, `delay`), else None."""
    th = round(threshold_pct)
    if packer == "util" and abs(threshold_pct - th) < 1e-9:
        vals = TABLE_I.get(th)
    elif packer == "delay" and limit is not None and float(limit).is_integer():
        vals = TABLE_II.get((int(limit), th))
    else:
        vals = None
    return dict(zip(COLUMNS, vals, strict=True)) if vals else None

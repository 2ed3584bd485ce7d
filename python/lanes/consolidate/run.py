"""One cross-validation run from a data directory to OUT/summary.json, OUT/report.md and plots."""

from __future__ import annotations

import time
from pathlib import Path

from lanes.consolidate import cv, report
from lanes.consolidate.cv import Grid
from lanes.consolidate.loader import load_trace
from lanes.errors import LanesError


def run_cv_to_dir(
    data: Path,
    out: Path,
    grid: Grid,
    min_days: int,
    step_s: float | None,
    jobs: int | None,
    title: str,
    plots: bool = True,
) -> tuple[dict, list[dict]]:
    """Load, cross-validate, write OUT/summary.json, OUT/report.md and plots; returns the rows."""
    t0 = time.perf_counter()
    trace = load_trace(data, step_s).select_vms(min_days)
    if len(trace.days) < 2:
        raise LanesError(f"{data}: cross-validation needs at least two days")
    if not trace.vms:
        raise LanesError(f"{data}: no VM is present on {min_days} or more days")
    engine = "Rust" if cv.native_in_use(grid) else "numpy"
    cv.stderr_progress(
        f"cv: {data}: {len(trace.days)} days, {len(trace.vms)} VMs, {trace.step_s:g} s samples, "
        f"{len(grid.keys())} packings per fold, delay packers in {engine}"
    )
    merged = cv.run_cv(trace, grid, jobs=jobs, progress=cv.stderr_progress)
    rows = cv.summarise(merged, len(trace.days))
    elapsed = time.perf_counter() - t0
    meta = {
        "title": title,
        "data": str(data),
        "days": len(trace.days),
        "vms": len(trace.vms),
        "min_days": min_days,
        "step_s": trace.step_s,
        "packers": list(grid.packers),
        "cores": list(grid.cores),
        "thresholds": [round(t * 100, 6) for t in grid.thresholds],
        "limits": list(grid.limits),
        "delay_thresholds": [round(t * 100, 6) for t in grid.delay_thresholds]
        if grid.delay_thresholds
        else None,
        "elapsed_s": elapsed,
        "engine": engine,
    }
    try:
        out.mkdir(parents=True, exist_ok=True)
        report.write_summary(out / "summary.json", meta, rows)
        names: dict[str, str] = {}
        if plots:
            for p in grid.packers:
                names[p] = f"fill_vs_delay_{p}.png"
                report.plot_packer(merged, grid, p, out / names[p], title)
        (out / "report.md").write_text(report.render(meta, rows, names), encoding="utf-8")
    except OSError as e:
        raise LanesError(f"{out}: {e}") from None
    extra = time.perf_counter() - t0 - elapsed
    cv.stderr_progress(f"cv: done in {elapsed:.1f} s (+ report {extra:.1f} s) -> {out}")
    return meta, rows

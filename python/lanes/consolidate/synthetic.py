"""Synthetic trace in the pattern Paper VI describes for its (non-public) University of Oslo data.

Mostly idle VMs of one or two vCores (a few with 4, 8 or 12); a configuration-management daemon that
runs every five minutes on every VM, mostly in step, giving a one-minute burst and the fleet-wide
saw-tooth of the paper's Fig. 1; a few heavily used VMs with a daily cycle; daily jobs at fixed
times (backups, reports) on a third of the VMs; now and then an unplanned batch job of tens of
minutes, which differs from day to day (so training days do not foresee test days exactly). Samples are one minute, values percent of one core (a VM with k vCores
may reach 100*k).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lanes.consolidate.trace import Trace


@dataclass(frozen=True)
class SynthParams:
    days: int = 13
    vms: int = 405
    samples_per_day: int = 1440
    busy_share: float = 0.04  # share of heavily used VMs
    busy_level: tuple[float, float] = (0.3, 0.7)  # their load in working hours, share of their vCores
    busy_off: float = 0.15  # their load outside working hours, share of the working-hours level
    work_start_h: tuple[float, float] = (7.0, 10.0)  # working hours start (hour of day) ...
    work_hours: tuple[float, float] = (6.0, 10.0)  # ... and last this long
    cm_period: int = 5  # minutes between configuration-management runs
    cm_in_step: float = 0.8  # share of VMs whose runs start on the common schedule
    cm_burst_median: float = 12.0  # burst height, percent of one core (log-normal across VMs)
    idle_pct: tuple[float, float] = (0.5, 3.0)  # idle load range per vCore
    cron_share: float = 0.2  # share of VMs with a daily job at a fixed time (backups, reports)
    cron_minutes: tuple[int, int] = (20, 60)
    jobs_per_day: float = 0.0  # mean unplanned batch jobs per VM per day (unforeseeable from training days)
    job_minutes: tuple[int, int] = (10, 60)
    seed: int = 1


def generate(p: SynthParams = SynthParams()) -> Trace:
    rng = np.random.default_rng(p.seed)
    n, d, t = p.vms, p.days, p.samples_per_day
    vcores = rng.choice([1, 2, 4, 8, 12], size=n, p=[0.45, 0.4, 0.1, 0.035, 0.015])
    busy = rng.random(n) < p.busy_share
    minute = np.arange(t)
    per_min = t / 1440.0  # samples per minute, for generating at other resolutions

    # Idle floor with small noise.
    idle = rng.uniform(*p.idle_pct, size=n) * vcores
    util = idle[None, :, None] * rng.gamma(4.0, 0.25, size=(d, n, t))

    # Configuration management: a one-minute burst every cm_period minutes, heavy-tailed in size.
    phase = np.where(rng.random(n) < p.cm_in_step, 0, rng.integers(0, p.cm_period, size=n))
    burst = np.minimum(p.cm_burst_median * rng.lognormal(0.0, 0.8, size=n), 100.0)
    on = ((minute[None, :] / per_min - phase[:, None]) % p.cm_period) < 1.0  # (n, t)
    util += (on * burst[:, None])[None, :, :] * rng.uniform(0.7, 1.3, size=(d, n, 1))

    # Busy VMs: several vCores, busy in working hours (start and length fixed per VM, a few minutes'
    # jitter per day) at a per-VM level, a low background otherwise, minute-scale noise. Their averages
    # hide that they peak together, which is what utilisation packing cannot see.
    busy_vc = rng.choice([2, 4, 8], size=n, p=[0.4, 0.4, 0.2])
    vcores = np.where(busy, np.maximum(vcores, busy_vc), vcores)
    level = rng.uniform(*p.busy_level, size=n) * vcores * 100.0
    work_start = rng.uniform(*p.work_start_h, size=n) * 60.0
    work_len = rng.uniform(*p.work_hours, size=n) * 60.0
    jitter = rng.normal(0.0, 10.0, size=(d, n, 1))
    rel = minute[None, None, :] / per_min - work_start[None, :, None] - jitter  # minutes into working hours
    working = (rel >= 0) & (rel < work_len[None, :, None])
    shape = np.where(working, 1.0, p.busy_off)
    day_scale = rng.uniform(0.85, 1.15, size=(d, n, 1))
    noise = rng.normal(1.0, 0.15, size=(d, n, t))
    util += busy[None, :, None] * level[None, :, None] * shape * day_scale * noise

    # Daily jobs at a fixed time of day (a few common cron slots), same every day give or take minutes:
    # invisible in averages, foreseeable from the training days.
    slots = np.array([0, 120, 240]) * per_min
    for m in np.flatnonzero(rng.random(n) < p.cron_share):
        start0 = int(rng.choice(slots) + rng.integers(0, 10) * per_min)
        length = int(rng.integers(*p.cron_minutes) * per_min) or 1
        cores = rng.integers(1, vcores[m] + 1)
        for dd in range(d):
            s0 = max(0, start0 + int(rng.integers(-2, 3) * per_min))
            util[dd, m, s0 : s0 + length] += 100.0 * cores * rng.uniform(0.7, 1.0)

    # Unplanned batch jobs: full use of some vCores for tens of minutes at random times.
    jobs = rng.poisson(p.jobs_per_day, size=(d, n))
    for dd, m in zip(*np.nonzero(jobs), strict=True):
        for _ in range(jobs[dd, m]):
            start = rng.integers(0, t)
            length = int(rng.integers(*p.job_minutes) * per_min) or 1
            util[dd, m, start : start + length] += 100.0 * rng.integers(1, vcores[m] + 1)

    np.clip(util, 0.0, 100.0 * vcores[None, :, None], out=util)
    return Trace(
        days=[f"day{i + 1:02d}" for i in range(d)],
        vms=[f"vm{i + 1:04d}" for i in range(n)],
        util=np.round(util, 1),
        present=np.ones((d, n), dtype=bool),
        step_s=86400.0 / t,
    )


def resample(trace: Trace, factor: int) -> Trace:
    """Average every `factor` samples (e.g. 5 turns 1-minute data into PlanetLab's 5-minute data)."""
    d, n, t = trace.util.shape
    if factor < 1 or t % factor:
        raise ValueError(f"cannot average {t} samples in groups of {factor}")
    util = trace.util.reshape(d, n, t // factor, factor).mean(axis=3)
    return Trace(list(trace.days), list(trace.vms), util, trace.present.copy(), trace.step_s * factor)

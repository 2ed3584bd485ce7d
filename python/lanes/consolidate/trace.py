"""A utilisation trace: one series per VM per day, on a common VM list."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Trace:
    """util[d, m, t]: VM m's CPU utilisation (percent of one core) on day d, sample t.

    A VM absent on a day has present[d, m] False and zeros there (it demanded nothing).
    """

    days: list[str]
    vms: list[str]
    util: np.ndarray
    present: np.ndarray
    step_s: float

    @property
    def dt_min(self) -> float:
        return self.step_s / 60.0

    def select_vms(self, min_days: int) -> Trace:
        """Keep the VMs present on at least `min_days` days."""
        keep = self.present.sum(axis=0) >= min_days
        return Trace(
            days=list(self.days),
            vms=[v for v, k in zip(self.vms, keep, strict=True) if k],
            util=self.util[:, keep, :],
            present=self.present[:, keep],
            step_s=self.step_s,
        )

    def vm_means(self, day_idx: np.ndarray) -> np.ndarray:
        """Average utilisation of each VM over the given days, counting only days it was present.

        A VM is sized by what it uses while running, not diluted by days it was switched off.
        """
        pres = self.present[day_idx]  # (D, M)
        sums = self.util[day_idx].sum(axis=2)  # (D, M)
        n = pres.sum(axis=0) * self.util.shape[2]
        return np.where(n > 0, sums.sum(axis=0) / np.maximum(n, 1), 0.0)

    def train_series(self, day_idx: np.ndarray) -> np.ndarray:
        """(M, D, T) series of the given days for packing, a VM's absent days filled with its average
        daily profile over the days it was present (as `vm_means`: a VM is sized by what it uses while
        running; zeros would let a delay packer squeeze it in where it does not fit)."""
        u = self.util[day_idx]  # (D, M, T)
        pres = self.present[day_idx]  # (D, M)
        n = pres.sum(axis=0)
        profile = u.sum(axis=0) / np.maximum(n, 1)[:, None]  # absent days hold zeros
        filled = np.where(pres[:, :, None], u, profile[None])
        return np.ascontiguousarray(filled.transpose(1, 0, 2))

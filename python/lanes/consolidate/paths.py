"""Where the PlanetLab trace is found when no directory is given.

The trace ships with the repository, in `data/planetlab` (see data/README.md for where it comes from),
found relative to the repository this package was loaded from, so any working directory works;
`LANES_PLANETLAB` overrides it.
"""

from __future__ import annotations

import os
from pathlib import Path

from lanes.errors import LanesError

ENV = "LANES_PLANETLAB"
RELATIVE = Path("data") / "planetlab"


def candidates() -> list[Path]:
    env = os.environ.get(ENV)
    if env:
        return [Path(env)]
    repo = Path(__file__).resolve().parents[3]  # python/lanes/consolidate/paths.py -> repository
    return [(repo / RELATIVE).resolve()]


def _has_days(d: Path) -> bool:
    return d.is_dir() and any(p.name.endswith((".csv", ".csv.gz")) for p in d.iterdir())


def planetlab_dir() -> Path:
    """The first candidate directory holding day CSVs, else a one-line LanesError."""
    tried = candidates()
    for d in tried:
        if _has_days(d):
            return d
    where = ", ".join(str(d) for d in tried)
    hint = f"set {ENV}" if os.environ.get(ENV) is None else f"fix {ENV}"
    raise LanesError(f"PlanetLab data not found (looked in {where}); give the directory or {hint}")

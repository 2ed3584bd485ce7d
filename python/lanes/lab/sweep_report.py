"""Tables and report of a sweep (filled in below)."""

from __future__ import annotations

from pathlib import Path


def write_all(out: Path, cells: list, repeats: int, preset: object) -> None:
    print(f"sweep: {out}")

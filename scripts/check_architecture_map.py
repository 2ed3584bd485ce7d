#!/usr/bin/env python3
"""docs/ARCHITECTURE.md's Layout names every crate (crates/*) and every Python subpackage
(python/lanes/*/), and everything it names there exists. One line per difference; exit 1 if any.

    scripts/check_architecture_map.py [REPO]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def layout_block(text: str) -> str:
    m = re.search(r"^## Layout\n+```\n(.*?)^```", text, re.M | re.S)
    if not m:
        raise SystemExit("check_architecture_map: docs/ARCHITECTURE.md has no Layout code block")
    return m.group(1)


def named(block: str, prefix: str) -> set[str]:
    """Paths under `prefix` that start a line of the block."""
    return {m.group(1) for m in re.finditer(rf"^{re.escape(prefix)}([\w-]+)\b", block, re.M)}


def main() -> int:
    repo = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO
    block = layout_block((repo / "docs" / "ARCHITECTURE.md").read_text())
    problems = []
    for prefix, present in (
        ("crates/", {p.name for p in (repo / "crates").iterdir() if (p / "Cargo.toml").exists()}),
        ("python/lanes/", {p.parent.name for p in (repo / "python" / "lanes").glob("*/__init__.py")}),
    ):
        names = named(block, prefix)
        problems += [f"{prefix}{n}: named in ARCHITECTURE.md's Layout, not in the repo" for n in sorted(names - present)]
        problems += [f"{prefix}{n}: in the repo, not named in ARCHITECTURE.md's Layout" for n in sorted(present - names)]
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

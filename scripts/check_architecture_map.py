#!/usr/bin/env python3
"""docs/ARCHITECTURE.md's Layout names every crate (crates/*) and every Python subpackage
(python/lanes/*/), and everything it names there exists; its crate graph (the `crate-graph`
block: a crate, then the lanes crates its [dependencies] name) is each Cargo.toml's. One line per
difference; exit 1 if any.

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


def crate_graph(text: str) -> dict[str, set[str]]:
    m = re.search(r"^```crate-graph\n(.*?)^```", text, re.M | re.S)
    if not m:
        raise SystemExit("check_architecture_map: docs/ARCHITECTURE.md has no crate-graph block")
    graph = {}
    for line in m.group(1).splitlines():
        crate, *deps = line.split()
        graph[crate] = set() if deps == ["(none)"] else set(deps)
    return graph


def cargo_deps(cargo_toml: Path) -> set[str]:
    """The workspace crates (without the lanes- prefix) a Cargo.toml's [dependencies] name."""
    m = re.search(r"^\[dependencies\]\n(.*?)(?=^\[|\Z)", cargo_toml.read_text(), re.M | re.S)
    return set(re.findall(r"^lanes-([\w-]+)\s*=", m.group(1), re.M)) if m else set()


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
    drawn = crate_graph((repo / "docs" / "ARCHITECTURE.md").read_text())
    for toml in sorted((repo / "crates").glob("*/Cargo.toml")):
        crate, real = toml.parent.name, cargo_deps(toml)
        if crate not in drawn:
            problems.append(f"crates/{crate}: not in ARCHITECTURE.md's crate graph")
        elif drawn[crate] != real:
            problems.append(
                f"crates/{crate}: the crate graph says it uses {sorted(drawn[crate]) or 'none'}, "
                f"its Cargo.toml {sorted(real) or 'none'}"
            )
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""docs/ARCHITECTURE.md's Layout names every crate (crates/*) and every Python subpackage
(python/lanes/*/), and everything it names there exists; its crate graph (the `crate-graph`
block: a crate, then the lanes crates its [dependencies] name) is each Cargo.toml's; its package
graph (the `package-graph` block: a part of python/lanes, then the parts it imports) is the one
the imports make (check_import_loops.graphs), and each part imports only parts drawn above it.
One line per difference; exit 1 if any.

    scripts/check_architecture_map.py [REPO]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from check_import_loops import graphs, module_name

REPO = Path(__file__).resolve().parents[1]


def layout_block(text: str) -> str:
    m = re.search(r"^## Layout\n+```\n(.*?)^```", text, re.M | re.S)
    if not m:
        raise SystemExit("check_architecture_map: docs/ARCHITECTURE.md has no Layout code block")
    return m.group(1)


def named(block: str, prefix: str) -> set[str]:
    """Paths under `prefix` that start a line of the block."""
    return {m.group(1) for m in re.finditer(rf"^{re.escape(prefix)}([\w-]+)\b", block, re.M)}


def drawn_graph(text: str, kind: str) -> dict[str, set[str]]:
    """The `kind` block (crate-graph, package-graph): each line a node, then the nodes it uses;
    the dict keeps the lines' order."""
    m = re.search(rf"^```{kind}\n(.*?)^```", text, re.M | re.S)
    if not m:
        raise SystemExit(f"check_architecture_map: docs/ARCHITECTURE.md has no {kind} block")
    graph = {}
    for line in m.group(1).splitlines():
        node, *deps = line.split()
        graph[node] = set() if deps == ["(none)"] else set(deps)
    return graph


def package_problems(drawn: dict[str, set[str]], pkg: Path) -> list[str]:
    """Where the package graph drawn differs from the imports, or draws a part using one below it."""
    top, _ = graphs(pkg)
    short = {a.partition(".")[2]: {b.partition(".")[2] for b in uses} for a, uses in top.items()}
    parts = {module_name(pkg, f).split(".")[1] for f in pkg.glob("*.py") if f.name != "__init__.py"}
    parts |= {p.parent.name for p in pkg.glob("*/__init__.py")}
    problems = [f"python/lanes: {p}: not in ARCHITECTURE.md's package graph" for p in sorted(parts - set(drawn))]
    problems += [f"python/lanes: {p}: in the package graph, not in the package" for p in drawn if p not in parts]
    for part, uses in drawn.items():
        real = short.get(part, set())
        if part in parts and uses != real:
            problems.append(
                f"python/lanes: {part}: the package graph says it imports {sorted(uses) or 'none'}, "
                f"its code {sorted(real) or 'none'}"
            )
    above: set[str] = set()
    for part, uses in drawn.items():
        if uses - above:
            problems.append(f"python/lanes: {part}: drawn above what it imports ({', '.join(sorted(uses - above))})")
        above.add(part)
    return problems


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
    doc = (repo / "docs" / "ARCHITECTURE.md").read_text()
    drawn = drawn_graph(doc, "crate-graph")
    for toml in sorted((repo / "crates").glob("*/Cargo.toml")):
        crate, real = toml.parent.name, cargo_deps(toml)
        if crate not in drawn:
            problems.append(f"crates/{crate}: not in ARCHITECTURE.md's crate graph")
        elif drawn[crate] != real:
            problems.append(
                f"crates/{crate}: the crate graph says it uses {sorted(drawn[crate]) or 'none'}, "
                f"its Cargo.toml {sorted(real) or 'none'}"
            )
    problems += package_problems(drawn_graph(doc, "package-graph"), repo / "python" / "lanes")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

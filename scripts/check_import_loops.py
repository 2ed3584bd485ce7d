#!/usr/bin/env python3
"""Import loops in the Python package (python/lanes). Every import counts, also those inside a
function (a lazy import still ties two modules together). Two graphs are checked:

- between the parts of the package: lanes.emu, lanes.lab, lanes.nas, lanes.fabric, ... and the
  top-level modules (lanes.cli, lanes.errors, ...); a module belongs to its first subpackage;
- between the modules inside each part (lanes.fabric.cli -> lanes.fabric.cli_ops -> ...).

A package's own `__init__` is not counted as imported by its submodules' imports. Prints each
loop with the file and line of every step; exit 1 if there is one.

    scripts/check_import_loops.py [PACKAGE_DIR]   (default: python/lanes)
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from graph_loops import Graph, loops_in

REPO = Path(__file__).resolve().parents[1]


def module_name(pkg: Path, f: Path) -> str:
    parts = [pkg.name, *f.relative_to(pkg).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(tree: ast.AST, me: str, is_package: bool, known: set[str]) -> list[tuple[str, int]]:
    """(module, line) of every import in the tree that names a module of the package."""
    out = []
    here = me if is_package else me.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = here.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.append((sub if sub in known else base, node.lineno))
    found = []
    for name, line in out:
        # `import lanes.lab.sweep.matrix` names the module; a name inside a module names it too
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name:
            found.append((name, line))
    return found


def graphs(pkg: Path) -> tuple[Graph, dict[str, Graph]]:
    """The graph between the parts of the package, and each part's graph between its modules."""
    files = {module_name(pkg, f): f for f in sorted(pkg.rglob("*.py"))}
    known = set(files)
    top: Graph = {}
    inner: dict[str, Graph] = {}

    def part(m: str) -> str:
        return ".".join(m.split(".")[:2])

    for me, f in files.items():
        tree = ast.parse(f.read_text(), filename=str(f))
        where_file = f.relative_to(pkg.parent.parent)
        for target, line in imported(tree, me, f.name == "__init__.py", known):
            if me.startswith(target + ".") or target == pkg.name:
                continue  # a package's __init__ runs before its submodules anyway
            where = f"{where_file}:{line}"
            a, b = part(me), part(target)
            if a != b:
                top.setdefault(a, {}).setdefault(b, where)
            elif me != target:
                inner.setdefault(a, {}).setdefault(me, {}).setdefault(target, where)
    return top, inner


def loops(pkg: Path) -> list[str]:
    top, inner = graphs(pkg)
    found = [f"between parts: {line}" for line in loops_in(top)]
    for name in sorted(inner):
        found += [f"inside {name}: {line}" for line in loops_in(inner[name])]
    return found


def main(argv: list[str]) -> int:
    pkg = Path(argv[0]) if argv else REPO / "python" / "lanes"
    found = loops(pkg.resolve())
    for line in found:
        print(f"import loop {line}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

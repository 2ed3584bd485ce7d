#!/usr/bin/env python3
"""Import loops between the top-level modules of a Rust crate. A module's edges are the
`crate::NAME` paths in its files (`use` lines and paths written inline, grouped `crate::{a, b}`
too); a name the crate root re-exports (`pub use program::Program`) counts as the module it comes
from. Submodules belong to their top-level module (`lower/expr.rs` is `lower`), so a family in
one folder is one node. Test-only code (items under `#[cfg(test)]`, in place or in a file of
their own) is left out: tests may use anything.

Prints each loop as `CRATE: a -> b -> a` with the file and line of every step; exit 1 if there
is one (with --report, always 0).

    scripts/check_rust_module_loops.py [--report] [CRATE_DIR ...]   (default: every crate in crates/)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from graph_loops import loops_in

REPO = Path(__file__).resolve().parents[1]

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
CRATE_PATH = re.compile(rf"\bcrate::(\{{|{IDENT})")
PUB_USE = re.compile(rf"^pub use ({IDENT})::(\{{[^}}]*\}}|{IDENT})", re.M | re.S)


def code_of(text: str) -> tuple[list[str], set[str]]:
    """The file's lines without comments and test-only items (an item under `#[cfg(test)]` is
    blanked), and the names of the test-only submodules it declares in files of their own."""
    lines, test_mods = [], set()
    skipping, depth = False, 0
    for raw in text.splitlines():
        line = re.sub(r"//.*", "", raw)
        if line.strip().startswith("#[cfg(test)]"):
            skipping, depth = True, 0
            lines.append("")
            continue
        if skipping:
            m = re.match(rf"\s*(?:pub(?:\([^)]*\))?\s+)?mod ({IDENT});", line)
            if m:
                test_mods.add(m.group(1))
            depth += line.count("{") - line.count("}")
            if depth <= 0 and ("}" in line or line.rstrip().endswith(";")):
                skipping = False
            lines.append("")
            continue
        lines.append(line)
    return lines, test_mods


def top_module(src: Path, f: Path) -> str | None:
    rel = f.relative_to(src)
    if len(rel.parts) == 1:
        return None if rel.stem in ("lib", "main") else rel.stem
    return rel.parts[0]


def group_heads(text: str, start: int) -> list[str]:
    """First path segments of the items in the brace group that opens at `start`."""
    depth, i, item, heads = 0, start, "", []
    while i < len(text):
        c = text[i]
        if c == "{":
            depth += 1
            if depth == 1:
                i += 1
                continue
        elif c == "}":
            depth -= 1
            if depth == 0:
                break
        if depth == 1 and c == ",":
            heads.append(item)
            item = ""
        else:
            item += c
        i += 1
    heads.append(item)
    out = []
    for h in heads:
        m = re.match(rf"\s*({IDENT})", h)
        if m:
            out.append(m.group(1))
    return out


def root_reexports(lib: str) -> dict[str, str]:
    """Names the crate root re-exports -> the top-level module they come from."""
    names = {}
    for m in PUB_USE.finditer(lib):
        module, what = m.group(1), m.group(2)
        for name in group_heads(what, 0) if what.startswith("{") else [what]:
            names[name] = module
    return names


def edges_of(crate: Path) -> tuple[dict[str, dict[str, tuple[str, int]]], set[str]]:
    """module -> {module it uses -> (first file, line)} and the set of modules."""
    src = crate / "src"
    files = sorted(src.rglob("*.rs"))
    modules = {m for f in files if (m := top_module(src, f))}
    lib = src / "lib.rs"
    reexports = root_reexports("\n".join(code_of(lib.read_text())[0])) if lib.exists() else {}
    edges: dict[str, dict[str, tuple[str, int]]] = {m: {} for m in modules}
    code = {f: code_of(f.read_text()) for f in files}
    test_files = set()
    for f, (_, test_mods) in code.items():
        here = f.parent if f.name in ("lib.rs", "mod.rs") else f.parent / f.stem
        for t in test_mods:
            test_files |= {here / f"{t}.rs", here / t / "mod.rs"}
    for f in files:
        me = top_module(src, f)
        if me is None or f in test_files:
            continue
        text = "\n".join(code[f][0])
        for m in CRATE_PATH.finditer(text):
            heads = group_heads(text, m.start(1)) if m.group(1) == "{" else [m.group(1)]
            line = text.count("\n", 0, m.start()) + 1
            for h in heads:
                target = h if h in modules else reexports.get(h)
                if target and target != me:
                    edges[me].setdefault(target, (str(f.relative_to(crate)), line))
    return edges, modules


def loops(crate: Path) -> list[str]:
    edges, _ = edges_of(crate)
    graph = {a: {b: f"{f}:{n}" for b, (f, n) in targets.items()} for a, targets in edges.items()}
    return [f"{crate.name}: {line}" for line in loops_in(graph)]


def main(argv: list[str]) -> int:
    report = "--report" in argv
    dirs = [Path(a) for a in argv if a != "--report"] or sorted(d for d in (REPO / "crates").iterdir() if (d / "Cargo.toml").is_file())
    found = [line for d in dirs for line in loops(d)]
    for line in found:
        print(line)
    if not found:
        print("no module loops in " + ", ".join(d.name for d in dirs))
    return 0 if report or not found else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Loops in a dependency graph, for the import-loop checks (check_import_loops.py for Python,
check_rust_module_loops.py for Rust): each strongly connected group of nodes, shown as one
shortest loop through it with where each step is written."""

from __future__ import annotations

import sys
from collections import deque

# node -> {node it depends on -> where that is written ("file:line")}
Graph = dict[str, dict[str, str]]


def strongly_connected(edges: Graph) -> list[list[str]]:
    """Tarjan's components of more than one node, each sorted, in name order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def shortest_cycle(edges: Graph, comp: list[str]) -> list[str]:
    """A shortest loop through the component's first node (breadth-first, inside it), the first
    node repeated at the end."""
    start, inside = comp[0], set(comp)
    prev: dict[str, str] = {}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(edges.get(v, {})):
            if w not in inside:
                continue
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return [*reversed(path), start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    raise AssertionError("a strongly connected component always has a loop")


def loops_in(edges: Graph) -> list[str]:
    """One line per loop: `a -> b -> a  (a: where; b: where)`, and the other nodes tied into
    the same loop when there are more."""
    out = []
    for comp in strongly_connected(edges):
        cycle = shortest_cycle(edges, comp)
        steps = "; ".join(f"{a}: {edges[a][b]}" for a, b in zip(cycle, cycle[1:], strict=False))
        line = f"{' -> '.join(cycle)}  ({steps})"
        if len(comp) > len(cycle) - 1:
            line += f"; tied into the same loop: {', '.join(c for c in comp if c not in cycle)}"
        out.append(line)
    return out

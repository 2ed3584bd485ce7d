"""Machines in a sweep's report. Each run records its machine in cell.json (lanes.lab.machine); a
sweep on a cluster may spread the cells of one comparison (the algorithms of one topology, case,
protocol and link rate) over several nodes. The report names the machines, says where one
comparison's cells ran on different nodes, and does not compare latencies across machine kinds
(CPU model and count): a latency is a property of the machine as much as of the algorithm. Asked
explicitly (--compare-across-machines), it compares them and says so."""

from __future__ import annotations

from lanes.lab.machine import kind

UNKNOWN = "?"  # runs recorded before machines were


def is_latency(metric: str) -> bool:
    return metric.endswith("_ms")


def cell_machines(metas: list[dict]) -> dict:
    """The nodes, machine kinds and kernels of one cell's runs (from their cell.json records)."""
    ms = [m.get("machine") for m in metas]
    return {
        "nodes": sorted({m.get("node", UNKNOWN) for m in ms if m} or {UNKNOWN}),
        "machine_kinds": sorted({kind(m) for m in ms if m} or {UNKNOWN}),
        "kernels": sorted({m.get("kernel", UNKNOWN) for m in ms if m} or {UNKNOWN}),
    }


def _known(kinds: list[str]) -> set[str]:
    return {k for k in kinds if k != UNKNOWN}


def group_key(row: dict) -> tuple:
    return row["topo"], row["case"], row["proto"], row["link_mbps"]


def mark(rows: list[dict], across: bool) -> list[str]:
    """Notes for the report, and on each row `latency_withheld` (why its latencies are not shown
    beside its group's, or "") . A cell whose own repeats ran on different kinds loses its latency
    means (a mean over two machines measures neither); a group whose cells ran on different
    kinds keeps each cell's numbers but is not compared across its algorithms."""
    notes = []
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        r.setdefault("latency_withheld", "")
        groups.setdefault(group_key(r), []).append(r)
    for r in rows:
        kinds = _known(r.get("machine_kinds", []))
        if len(kinds) > 1:
            name = f"{r['topo']}-{r['case']}-{r['alg']}-{r['proto']}"
            if across:
                notes.append(f"{name}: its runs ran on different kinds of machine ({'; '.join(sorted(kinds))}); "
                             "latencies averaged over them as asked (--compare-across-machines)")  # fmt: skip
            else:
                for k in [k for k in r if is_latency(k)]:
                    r[k] = None
                for size in r.get("mpi", {}).values():
                    size.pop("latency_us", None)
                    size.pop("idle_latency_us", None)
                r["latency_withheld"] = "its runs ran on different kinds of machine"
                notes.append(f"{name}: its runs ran on different kinds of machine ({'; '.join(sorted(kinds))}); its "
                             "latencies are not averaged over them (--compare-across-machines to do so)")  # fmt: skip
    for (topo, case, proto, mbps), rs in groups.items():
        where = f"{topo} {case} {proto.upper()} at {mbps:g} Mb/s"
        nodes = {n for r in rs for n in r.get("nodes", []) if n != UNKNOWN}
        kinds = {k for r in rs for k in _known(r.get("machine_kinds", []))}
        by = "; ".join(f"{r['alg']} on {', '.join(r.get('nodes', [UNKNOWN]))}" for r in rs)
        if len(kinds) > 1 and not across:
            for r in rs:
                r["latency_withheld"] = r["latency_withheld"] or "its comparison ran on different kinds of machine"
            notes.append(f"{where}: cells ran on different kinds of machine ({by}); latencies are not compared "
                         "across them (--compare-across-machines to compare them)")  # fmt: skip
        elif len(kinds) > 1:
            notes.append(f"{where}: cells ran on different kinds of machine ({by}); latencies compared as asked "
                         "(--compare-across-machines)")  # fmt: skip
        elif len(nodes) > 1:
            notes.append(f"{where}: cells ran on different machines of one kind ({by})")
    return notes


def machines_table(rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    """Per machine kind: its nodes, kernels and how many cells ran there."""
    by: dict[str, dict] = {}
    for r in rows:
        for k in r.get("machine_kinds", [UNKNOWN]):
            e = by.setdefault(k, {"nodes": set(), "kernels": set(), "cells": 0})
            e["nodes"] |= set(r.get("nodes", []))
            e["kernels"] |= set(r.get("kernels", []))
            e["cells"] += 1
    body = [[k, ", ".join(sorted(e["nodes"])), ", ".join(sorted(e["kernels"])), str(e["cells"])]
            for k, e in sorted(by.items())]  # fmt: skip
    return ["machine kind (CPU x count)", "nodes", "kernels", "cells"], body

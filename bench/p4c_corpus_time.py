"""Compile time of `lanes p4c` over a directory of P4 programs, in one process (no interpreter
start per program): every *-bmv2.p4 under DIR compiled once, refusals included, and the total,
the median and the slowest written as JSON.

    .venv/bin/python bench/p4c_corpus_time.py DIR [--corpus-commit SHA] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from lanes import _native


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--corpus-commit", help="the commit of the corpus DIR comes from (recorded)")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    programs = sorted(a.dir.glob("*-bmv2.p4"))
    if not programs:
        print(f"p4c_corpus_time: no *-bmv2.p4 in {a.dir}", file=sys.stderr)
        return 1
    times: dict[str, float] = {}
    compiled = 0
    for i, p in enumerate(programs, 1):
        start = time.perf_counter()
        try:
            _native.p4c_compile(str(p), [], [])
            compiled += 1
        except ValueError:  # a refusal (one-line error) is timed too
            pass
        times[p.name] = time.perf_counter() - start
        if i % 50 == 0:
            print(f"[{i}/{len(programs)}]", file=sys.stderr, flush=True)
    slowest = max(times, key=times.__getitem__)
    result = {
        "corpus_commit": a.corpus_commit,
        "programs": len(programs),
        "compiled": compiled,
        "total_s": round(sum(times.values()), 3),
        "median_ms": round(statistics.median(times.values()) * 1e3, 2),
        "slowest": {"program": slowest, "ms": round(times[slowest] * 1e3, 2)},
    }
    print(json.dumps(result, indent=1))
    if a.out:
        a.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The rounds of one or more bench/write_rates_pair.py runs taken together: per figure, each side's
median and range over all rounds, the change of the median, and how often a round of the
after build beat a round of the before build (the Mann-Whitney U over the product of the two
sides' rounds: 0.5 when neither side tends higher, 1.0 when every after round is above every
before round).

    .venv/bin/python bench/write_rates_pool.py RUN.json [RUN.json ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path


def figures(r: dict) -> dict[str, float]:
    out = {f"P4Runtime batch {w['batch']} writes/s": w["writes_per_s"] for w in r["p4runtime_writes"]}
    out.update({f"table_add, {k} /s": v for k, v in r["thrift_table_add"]["per_s"].items()})
    return out


def after_beats_before(after: list[float], before: list[float]) -> float:
    wins = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in after for b in before)
    return wins / (len(after) * len(before))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", type=Path, nargs="+")
    a = ap.parse_args()
    rounds: list[dict] = []
    commits: set[tuple[str, str]] = set()
    for path in a.runs:
        try:
            run = json.loads(path.read_text())
            rounds += run["rounds"]
            commits.add((run["commits"]["before"], run["commits"]["after"]))
        except (OSError, ValueError, KeyError) as e:
            sys.exit(f"write_rates_pool: {path}: not a write_rates_pair.py run ({e})")
    if len(commits) != 1:
        sys.exit(f"write_rates_pool: the runs compare different builds: {sorted(commits)}")
    before, after = commits.pop()
    sides = {s: [figures(r) for r in rounds if r["side"] == s] for s in ("before", "after")}
    print(f"| figure | before {before} (median, range) | after {after} | change | after beats before |")
    print("|---|---|---|---|---|")
    for k in sides["before"][0]:
        b = [f[k] for f in sides["before"]]
        af = [f[k] for f in sides["after"]]
        mb, ma = statistics.median(b), statistics.median(af)
        print(f"| {k} | {mb:,.0f} ({min(b):,.0f}-{max(b):,.0f}) | {ma:,.0f} ({min(af):,.0f}-{max(af):,.0f}) "
              f"| {100 * (ma / mb - 1):+.0f} % | {after_beats_before(af, b):.2f} |")  # fmt: skip
    print(f"\n{len(sides['before'])} rounds before, {len(sides['after'])} after, from {len(a.runs)} run(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

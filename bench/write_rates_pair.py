"""Table-write rates of two builds side by side: P4Runtime batched writes (bench/p4runtime_writes.py)
and `table_add` through bmv2's Thrift API (bench/thrift_table_add.py), each run from its own
checkout (its own .venv, extension module and scripts), rounds interleaved before, after, after,
before, ... so the machine's drift falls on both sides alike. Each round holds the timing lock
(flock on --lock) so no other timing run shares the machine with it.

    .venv/bin/python bench/write_rates_pair.py BEFORE_CHECKOUT AFTER_CHECKOUT --rounds 4 --out FILE

Both checkouts must have run `make setup`, and neither may change while this runs (use a
worktree for each, not the one being edited). FILE gets every round (commit, time, load average,
the two scripts' output) and the medians per side.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from write_rates_pool import figures  # one naming of the figures for both scripts

BATCHES = [100, 500, 1000]


def commit_of(checkout: Path) -> str:
    r = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True, check=False)  # fmt: skip
    if r.returncode != 0:
        sys.exit(f"write_rates_pair: {checkout} is not a git checkout")
    return r.stdout.strip()


def run_script(checkout: Path, args: list[str]) -> str:
    py = checkout / ".venv" / "bin" / "python"
    r = subprocess.run([str(py), *args], cwd=checkout, capture_output=True, text=True, timeout=1800, check=False)
    if r.returncode != 0:
        sys.exit(f"write_rates_pair: {args[0]} in {checkout} failed: {r.stderr.strip()[-300:]}")
    return r.stdout


def one_round(checkout: Path) -> dict:
    batch_args = [a for b in BATCHES for a in ("--batch", str(b))]
    writes = [json.loads(line) for line in run_script(checkout, ["bench/p4runtime_writes.py", *batch_args]).splitlines()
              if line.startswith("{")]  # fmt: skip
    table_add = json.loads(run_script(checkout, ["bench/thrift_table_add.py", "--entries", "2000", "--runs", "3"]))
    return {"p4runtime_writes": writes, "thrift_table_add": table_add}


def medians(rounds: list[dict], side: str) -> dict[str, float]:
    per = [figures(r) for r in rounds if r["side"] == side]
    return {k: statistics.median(f[k] for f in per) for k in per[0]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--rounds", type=int, default=4, help="rounds per side (default 4)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--lock", type=Path, default=Path("/work/timing.lock"))
    a = ap.parse_args()
    if a.rounds < 1:
        sys.exit("write_rates_pair: --rounds must be at least 1")
    sides = {"before": a.before.resolve(), "after": a.after.resolve()}
    for path in sides.values():
        if not (path / ".venv" / "bin" / "lanes").exists():
            sys.exit(f"write_rates_pair: {path} has no .venv/bin/lanes (run make setup there)")
    commits = {side: commit_of(path) for side, path in sides.items()}
    # before, after, after, before, ...: each side goes first in half the pairs
    order = [s for i in range(a.rounds) for s in (("before", "after") if i % 2 == 0 else ("after", "before"))]
    rounds: list[dict] = []
    for n, side in enumerate(order, 1):
        print(f"write_rates_pair: round {n}/{len(order)}: {side} ({commits[side]})", file=sys.stderr, flush=True)
        with open(a.lock, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            start = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "loadavg_start": os.getloadavg()}
            result = one_round(sides[side])
        rounds.append({"side": side, "commit": commits[side], **start, "loadavg_end": os.getloadavg(), **result})
        write(a.out, commits, rounds)  # after every round: a failed round keeps those before it
    out = write(a.out, commits, rounds)
    for side in sides:
        print(side, commits[side], json.dumps(out["medians"][side]))
    return 0


def write(path: Path, commits: dict[str, str], rounds: list[dict]) -> dict:
    out = {
        "what": "P4Runtime batched table writes and Thrift table_add, two builds, rounds interleaved",
        "commands": [
            "python bench/p4runtime_writes.py --batch 100 --batch 500 --batch 1000",
            "python bench/thrift_table_add.py --entries 2000 --runs 3",
        ],
        "commits": commits,
        "medians": {side: medians(rounds, side) for side in commits if any(r["side"] == side for r in rounds)},
        "rounds": rounds,
    }
    path.write_text(json.dumps(out, indent=1) + "\n")
    return out


if __name__ == "__main__":
    raise SystemExit(main())

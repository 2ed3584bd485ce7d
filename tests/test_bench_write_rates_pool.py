"""bench/write_rates_pool.py: the rounds of several write_rates_pair.py runs pooled per side, the
share of (after, before) round pairs the after build wins, and a refusal to pool runs that
compare different builds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "write_rates_pool.py"


def round_(side: str, batch1000: int, client: int) -> dict:
    return {
        "side": side,
        "p4runtime_writes": [{"batch": 1000, "writes_per_s": batch1000}],
        "thrift_table_add": {"per_s": {"Thrift client": client}},
    }


def run_file(path: Path, before: str, after: str, rounds: list[dict]) -> Path:
    path.write_text(json.dumps({"commits": {"before": before, "after": after}, "rounds": rounds}))
    return path


def pool(*paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, paths)], capture_output=True, text=True, check=False)


def test_rounds_of_two_runs_are_pooled_per_side(tmp_path: Path) -> None:
    one = run_file(tmp_path / "1.json", "aaa", "bbb", [round_("before", 100, 50), round_("after", 300, 40)])
    two = run_file(tmp_path / "2.json", "aaa", "bbb", [round_("after", 200, 60), round_("before", 150, 50)])
    r = pool(one, two)
    assert r.returncode == 0, r.stderr
    rows = {line.split(" | ")[0].lstrip("| "): line for line in r.stdout.splitlines() if line.startswith("| ")}
    # batch 1000: before 100, 150 (median 125); after 300, 200 (250); every after round wins
    assert rows["P4Runtime batch 1000 writes/s"].endswith("| 125 (100-150) | 250 (200-300) | +100 % | 1.00 |")
    # the client: after 40 loses to both 50s, after 60 beats both: half the pairs
    assert rows["table_add, Thrift client /s"].endswith("| 50 (50-50) | 50 (40-60) | +0 % | 0.50 |")
    assert "2 rounds before, 2 after, from 2 run(s)" in r.stdout


def test_runs_of_different_builds_are_not_pooled(tmp_path: Path) -> None:
    one = run_file(tmp_path / "1.json", "aaa", "bbb", [round_("before", 100, 50), round_("after", 300, 40)])
    two = run_file(tmp_path / "2.json", "aaa", "ccc", [round_("before", 100, 50), round_("after", 300, 40)])
    r = pool(one, two)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.strip().startswith("write_rates_pool: the runs compare different builds")
    assert pool(tmp_path / "missing.json").stderr.count("\n") == 1

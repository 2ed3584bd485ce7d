"""Two-phase drop-first updates (`lanes fabric phases`): a cycle that only mixes of old and new
tables close is broken by dropping its entries first; each phase loads into OpenSM (-R file -U,
re-read on SIGHUP) on ibsim, which then writes exactly the LFT blocks lanes counted."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from lanes.cli import main
from lanes.fabric import opensm

# Channels A = s1-0>s2-0, B = s2-0>s1-1, C = s1-1>s2-1, D = s2-1>s1-0 of a 4-ary-2-tree. The old
# tables turn h-8's routes at s1-1 (A>B>C), the new ones h-12's at s1-0 (C>D>A).
OLD_TURN = [("s1-0", "h-8", 5), ("s2-0", "h-8", 2), ("s1-1", "h-8", 6), ("s2-1", "h-8", 3)]
NEW_TURN = [("s1-1", "h-12", 6), ("s2-1", "h-12", 1), ("s1-0", "h-12", 5), ("s2-0", "h-12", 4)]


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    rc = main([*argv, "--json"])
    return rc, json.loads(capsys.readouterr().out)


def _edit(src: Path, dst: Path, changes: list[tuple[str, str, int]]) -> None:
    """Copies an opensm-lfts.dump with some (switch, destination) entries set to other ports."""
    text = src.read_text()
    lids = {
        m.group(2): int(m.group(1), 16)
        for m in re.finditer(r"^0x([0-9a-f]+) \d+ # .*'(.*)'$", text, re.MULTILINE)
    }
    out, switch = [], ""
    for line in text.splitlines(keepends=True):
        if line.startswith("Unicast"):
            switch = re.search(r"\('(.*)'\)", line).group(1)
        elif line.startswith("0x"):
            for sw, dst_name, port in changes:
                if sw == switch and int(line.split()[0], 16) == lids[dst_name]:
                    line = f"{line[:7]}{port:03d}{line[10:]}"
        out.append(line)
    dst.write_text("".join(out))


@pytest.fixture
def tables(tmp_path: Path, capsys) -> tuple[str, str, str]:
    net, base = tmp_path / "f.net", tmp_path / "base.dump"
    assert main(["fabric", "gen", "kary", "--k", "4", "--n", "2", "--out", str(net)]) == 0
    assert main(["fabric", "route", str(net), "--out", str(base)]) == 0
    capsys.readouterr()
    _edit(base, tmp_path / "old.dump", OLD_TURN)
    _edit(base, tmp_path / "new.dump", NEW_TURN)
    return str(net), str(tmp_path / "old.dump"), str(tmp_path / "new.dump")


def test_phases_drop_the_entries_of_the_mixed_cycle_first(tables, tmp_path: Path, capsys) -> None:
    net, old, new = tables
    for dump in (old, new):
        rc, c = _json(capsys, "fabric", "check", net, dump)
        assert rc == 0 and c["deadlock_free"] and c["unreachable"] == 0
    rc, r = _json(capsys, "fabric", "phases", net, old, new, "--out", str(tmp_path / "ph"))
    assert rc == 0 and r["old_acyclic"] and r["new_acyclic"] and not r["any_order"]
    assert (r["changed_entries"], r["dropped_entries"], r["direct_entries"]) == (4, 3, 1)
    assert (r["phase1_smps"], r["phase1_switches"], r["phase2_smps"], r["phase2_switches"]) == (3, 3, 2, 2)
    assert r["old_to_phase1_acyclic"] and r["phase1_to_new_acyclic"]
    # Phase 1 is deadlock free; while it stands, two (leaf, node) pairs are dropped (check: rc 1).
    rc, c = _json(capsys, "fabric", "check", net, r["phase1"])
    assert rc == 1 and c["deadlock_free"] and c["unreachable"] == 2
    rc, d = _json(capsys, "fabric", "diff", r["phase2"], new)
    assert rc == 0 and d["entries"] == 0


@pytest.mark.skipif(bool(opensm.missing_tools()), reason="OpenSM/ibsim missing (run make setup)")
def test_opensm_loads_each_phase_and_writes_the_blocks_lanes_counted(tables, tmp_path: Path, capsys) -> None:
    net, old, new = tables
    rc, r = _json(capsys, "fabric", "phases", net, old, new, "--out", str(tmp_path / "ph"), "--live")
    assert rc == 0
    live = r["live"]
    assert [x["phase"] for x in live] == ["in place", "phase 1", "phase 2"]
    assert all(x["entries_differing"] == 0 for x in live), live
    assert [x["lft_blocks_written"] for x in live[1:]] == [r["phase1_smps"], r["phase2_smps"]] == [3, 2]
    # The first sweep programs every block of every switch: a full reconfiguration.
    rc, full = _json(capsys, "fabric", "diff", old, old)
    assert rc == 0 and live[0]["lft_blocks_written"] == full["full_blocks"] > 0
    assert [x["check"]["unreachable"] for x in live] == [0, 2, 0]
    assert all(x["check"]["deadlock_free"] for x in live)

"""lanes fabric: generators, routing, checks and diffs through the CLI (no OpenSM needed)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from lanes.cli import main


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    rc = main([*argv, "--json"])
    return rc, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    "name,nodes,switches,lids,blocks,smps",
    [
        ("18-2-1-half", 324, 36, 360, 6, 216),
        ("18-2-1-full", 648, 54, 702, 11, 594),
        ("18-3-1-half", 5832, 972, 6804, 107, 104_004),
        ("18-3-1-full", 11664, 1620, 13284, 208, 336_960),
    ],
)
def test_paper_ii_table_i_numbers(capsys, name, nodes, switches, lids, blocks, smps) -> None:
    rc, r = run_json(capsys, "fabric", "gen", "named", "--name", name)
    assert rc == 0
    assert (r["nodes"], r["switches"], r["lids"]) == (nodes, switches, lids)
    assert (r["lft_blocks_per_switch"], r["full_reconfiguration_smps"]) == (blocks, smps)
    assert r["lid_swap_copy_max_smps"] == 2 * switches


def test_spanning_trees_of_paper_iv_example(capsys) -> None:
    rc, r = run_json(capsys, "fabric", "gen", "xgft", "--h", "3", "--m", "4,4,3", "--w", "1,2,3")
    assert rc == 0
    assert (r["spanning_trees_different"], r["spanning_trees_disjoint"]) == (6, 2)


def test_gen_route_check_balance_diff(tmp_path: Path, capsys) -> None:
    net, dump = str(tmp_path / "f.net"), str(tmp_path / "lfts.dump")
    assert main(["fabric", "gen", "pgft", "--m", "4,2,3", "--w", "1,2,2", "--p", "1,2,1", "--out", net]) == 0
    capsys.readouterr()
    rc, r = run_json(capsys, "fabric", "route", net, "--engine", "ftree", "--out", dump)
    assert rc == 0
    assert r["check"]["deadlock_free"] and r["check"]["unreachable"] == 0
    assert (r["compute_nodes"], r["switches"]) == (24, 16)
    rc, b = run_json(capsys, "fabric", "balance", net, dump)
    assert b["broken_routes"] == 0
    # Leaf up ports: 4 ports (2 groups x 2 parallel links) share the 20 remote destinations.
    leaf_up = next(x for x in b["levels"] if x["level"] == 2 and x["dir"] == "up")
    assert (leaf_up["min"], leaf_up["max"]) == (5, 5)
    rc, c = run_json(capsys, "fabric", "check", net, dump)
    assert rc == 0 and c["cdg_acyclic"]
    # Change one entry in one switch: one entry, one block (one SMP), one switch.
    text = Path(dump).read_text().splitlines()
    i = next(i for i, x in enumerate(text) if re.match(r"0x0020 00[1-9]", x))
    text[i] = re.sub(r"^0x0020 (\d+)", lambda m: f"0x0020 {int(m.group(1)) % 4 + 1:03}", text[i])
    changed = tmp_path / "changed.dump"
    changed.write_text("\n".join(text) + "\n")
    rc, d = run_json(capsys, "fabric", "diff", dump, str(changed))
    assert (d["entries"], d["blocks"], d["switches"], d["total_switches"]) == (1, 1, 1, 16)


def test_bad_inputs_are_one_line_errors(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.net"
    bad.write_text('Switch 4 "a"\n[1] "nowhere"[1]\n')
    assert main(["fabric", "route", str(bad), "--out", str(tmp_path / "x.dump")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("lanes: error: ") and "unknown node" in err[-1]
    assert main(["fabric", "gen", "xgft", "--m", "4,4", "--w", "2,2"]) == 2
    assert "multi-port" in capsys.readouterr().err
    assert main(["fabric", "diff", str(tmp_path / "none.dump"), str(tmp_path / "none.dump")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_order_study_shapes_of_paper_iv(tmp_path: Path, capsys) -> None:
    net = str(tmp_path / "k.net")
    assert main(["fabric", "gen", "kary", "--k", "6", "--n", "3", "--out", net]) == 0
    capsys.readouterr()
    rc, r = run_json(capsys, "fabric", "order-study", net, "--pattern", "bruck", "--runs", "20")
    assert rc == 0 and r["broken_routes"] == 0 and r["nodes"] == 216
    assert r["slimupdate_by_order"]["bandwidth_min"] == 1.0
    assert r["ftree"]["bandwidth_mean"] < 0.9


def test_vswitch_gen_and_errors(tmp_path: Path, capsys) -> None:
    net = str(tmp_path / "v.net")
    rc, r = run_json(
        capsys, "fabric", "gen", "kary", "--k", "2", "--n", "2", "--vfs", "2", "--vms", "1,2", "--out", net
    )
    assert rc == 0 and r["vswitch"]["hypervisors"] == 4 and r["vswitch"]["vms"] == 6
    assert main(["fabric", "gen", "kary", "--k", "2", "--n", "2", "--vfs", "2", "--vms", "3"]) == 2
    assert "do not fit" in capsys.readouterr().err
    dump = str(tmp_path / "v.dump")
    assert main(["fabric", "route", net, "--engine", "vswitch-ftree", "--out", dump]) == 0
    assert main(["fabric", "migrate", net, dump, "--vm", "hv-0-vm-0", "--to", "nowhere"]) == 2
    assert "unknown destination" in capsys.readouterr().err

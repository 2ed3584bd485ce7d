"""OpenSM's LASH and DFSSSP on ibsim (`lanes fabric opensm-sl`): their LFTs, the SL of every
compute-node pair from the SA and the SL-to-VL tables OpenSM programs with QoS on, judged by lanes's
per-VL deadlock check. On a 4 x 4 torus both need more than one VL: per VL their channel dependency
graphs are acyclic, while the same tables checked VL-blind have a cycle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lanes.cli import main
from lanes.fabric import opensm

pytestmark = pytest.mark.skipif(bool(opensm.missing_tools()), reason="OpenSM/ibsim missing (run make setup)")


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    rc = main([*argv, "--json"])
    return rc, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("engine", "sls"), [("lash", [0, 1]), ("dfsssp", list(range(8)))])
def test_sl_engines_on_a_torus_are_deadlock_free_only_per_vl(tmp_path: Path, capsys, engine, sls) -> None:
    rc, r = _json(capsys, "fabric", "opensm-sl", "--torus", "4x4", "--engine", engine, "--out", str(tmp_path))
    assert rc == 0
    assert r["pairs"] == 16 * 15 and r["path_sls"] == 16 * 15 and r["sls_used"] == sls
    vl, blind = r["vl"], r["vl_blind"]
    assert vl["deadlock_free"] and (vl["unreachable"], vl["loops"]) == (0, 0)
    assert [v for v, _, ok in vl["vls"] if ok] == sls  # every VL in use, each acyclic
    assert vl["cross_vl_dependencies"] == 0  # QoS's SL2VL keeps a path on one VL
    assert not blind["deadlock_free"] and blind["vls"][0][2] is False
    assert "not a fat tree" in r["not_a_fat_tree"]
    # The same check from the files OpenSM wrote, through `lanes fabric check`.
    rc, c = _json(
        capsys,
        "fabric",
        "check",
        str(tmp_path / "fabric.net"),
        r["lfts_dump"],
        "--path-sl",
        r["path_sl"],
        "--sl2vl-dump",
        r["sl2vl_dump"],
    )
    assert rc == 0 and c["vl"] == vl


def test_lash_on_a_fat_tree_needs_one_lane(tmp_path: Path, capsys) -> None:
    net = str(tmp_path / "f.net")
    assert main(["fabric", "gen", "kary", "--k", "4", "--n", "2", "--out", net]) == 0
    capsys.readouterr()
    rc, r = _json(capsys, "fabric", "opensm-sl", net, "--engine", "lash", "--out", str(tmp_path / "o"))
    assert rc == 0 and r["sls_used"] == [0] and "Lanes needed: 1" in r["opensm_lanes_line"]
    assert r["vl"]["deadlock_free"] and r["vl_blind"]["deadlock_free"] and r["single_vl"]["deadlock_free"]

"""lanes fabric against the real OpenSM on ibsim: our ftree is as balanced as OpenSM's ftree, and
OpenSM loads our LFTs (-R file -U) unchanged, with ibtracert following them. Skipped when the
Debian packages opensm, ibsim-utils, libumad2sim0, infiniband-diags are missing (make setup)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from lanes.cli import main
from lanes.fabric import opensm

pytestmark = pytest.mark.skipif(
    bool(opensm.missing_tools()),
    reason=f"OpenSM/ibsim tools not installed: {', '.join(opensm.missing_tools())} (run make setup)",
)

# Small trees, none of them in the repo: a k-ary-n-tree, an XGFT with unequal w and a PGFT with
# parallel links.
TREES = [
    ["kary", "--k", "4", "--n", "3"],
    ["xgft", "--m", "4,4,3", "--w", "1,2,3"],
    ["pgft", "--m", "4,2,4", "--w", "1,2,2", "--p", "1,2,1"],
]


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, dict]:
    rc = main([*argv, "--json"])
    return rc, json.loads(capsys.readouterr().out)


def _no_leftover(sock: str) -> None:
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=False).stdout
    assert sock not in ps


@pytest.mark.parametrize("tree", TREES, ids=lambda t: t[0])
def test_ftree_balance_equals_opensm_and_opensm_loads_our_lfts(tmp_path: Path, capsys, tree) -> None:
    net, ours = str(tmp_path / "f.net"), str(tmp_path / "ours.dump")
    assert main(["fabric", "gen", *tree, "--out", net]) == 0
    capsys.readouterr()
    rc, routed = _json(capsys, ["fabric", "route", net, "--engine", "ftree", "--out", ours])
    assert rc == 0 and routed["check"]["deadlock_free"]

    rc, theirs = _json(
        capsys,
        ["fabric", "opensm", net, "--engine", "ftree", "--out", str(tmp_path / "osm"), "--timeout", "60"],
    )
    assert rc == 0, theirs.get("log_errors")
    assert not any("ftree" in e for e in theirs["log_errors"]), theirs["log_errors"]
    rc, ours_balance = _json(capsys, ["fabric", "balance", net, ours])
    # Same distribution of destinations per port at every level and direction.
    assert ours_balance["levels"] == theirs["balance"]["levels"]
    assert theirs["check"]["deadlock_free"]
    assert all(t["ok"] for t in theirs["traces"])

    rc, loaded = _json(
        capsys,
        [
            "fabric",
            "opensm",
            net,
            "--lfts",
            ours,
            "--out",
            str(tmp_path / "file"),
            "--timeout",
            "60",
            "--traces",
            "12",
        ],
    )
    assert rc == 0
    # OpenSM programmed exactly our tables, and ibtracert follows them.
    assert loaded["loaded_vs_ours"]["entries"] == 0
    assert len(loaded["traces"]) >= 10 and all(t["ok"] for t in loaded["traces"])
    _no_leftover(theirs["ibsim_socket"])
    _no_leftover(loaded["ibsim_socket"])


def test_missing_lfts_file_is_an_error(tmp_path: Path, capsys) -> None:
    net = str(tmp_path / "f.net")
    assert main(["fabric", "gen", "kary", "--k", "2", "--n", "2", "--out", net]) == 0
    assert main(["fabric", "opensm", net, "--lfts", str(tmp_path / "none.dump"), "--out", str(tmp_path)]) == 2
    assert "cannot read" in capsys.readouterr().err

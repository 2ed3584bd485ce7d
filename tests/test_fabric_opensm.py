"""lanes fabric against the real OpenSM on ibsim: our ftree is as balanced as OpenSM's ftree, and
OpenSM loads our LFTs (-R file -U) unchanged, with ibtracert following them. Skipped when the
Debian packages opensm, ibsim-utils, libumad2sim0, infiniband-diags are missing (make setup)."""

from __future__ import annotations

import json
import random
import re
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


# Fabrics of other shapes, written as a foreign tool might: switch ports renumbered at random and
# one compute node in seven removed (partially populated leaves need OpenSM's dummy routing).
FOREIGN = [
    ["xgft", "--m", "12,6", "--w", "1,3"],  # 2-level, 2:1 oversubscribed
    ["pgft", "--m", "6,3,2", "--w", "1,3,2", "--p", "1,1,2"],  # 3-level, parallel links
    ["named", "--name", "8-2-1-half"],
    ["xgft", "--m", "8,4,4", "--w", "1,4,2"],  # 3-level, unequal w
]


def _mangle(src: Path, dst: Path, seed: int, renumber: bool, drop_every: int) -> None:
    """Renumber every switch's ports at random and list the nodes in random order, and/or drop
    every n-th compute node."""
    rng = random.Random(seed)
    blocks = [b for b in src.read_text().split("\n\n") if re.search(r"^(Switch|Ca)\t", b, re.MULTILINE)]
    parsed = []
    for b in blocks:
        m = re.search(r'^(Switch|Ca)\t(\d+) "([^"]+)"', b, re.MULTILINE)
        assert m
        links = re.findall(r'^\[(\d+)\](?:\(\w+\))?\t"([^"]+)"\[(\d+)\]', b, re.MULTILINE)
        parsed.append((m.group(1), int(m.group(2)), m.group(3), [(int(p), r, int(rp)) for p, r, rp in links]))
    cas = [name for kind, _, name, _ in parsed if kind == "Ca"]
    drop = set(cas[::drop_every]) if drop_every else set()
    perm: dict[str, dict[int, int]] = {}
    for kind, n, name, _ in parsed:
        ports = list(range(1, n + 1))
        if kind == "Switch" and renumber:
            rng.shuffle(ports)
        perm[name] = {i + 1: ports[i] for i in range(n)}
    if renumber:
        rng.shuffle(parsed)
    out = []
    for kind, n, name, links in parsed:
        if name in drop:
            continue
        lines = [f'{kind}\t{n} "{name}"']
        lines += [f'[{perm[name][p]}]\t"{r}"[{perm[r][rp]}]' for p, r, rp in links if r not in drop]
        out.append("\n".join(lines))
    dst.write_text("\n\n".join(out) + "\n")


@pytest.mark.parametrize(
    "renumber,drop_every", [(True, 0), (False, 7), (True, 5)], ids=["renumbered", "partial", "both"]
)
@pytest.mark.parametrize("tree", FOREIGN, ids=lambda t: t[0] + "-" + t[2])
def test_foreign_netlists_balance_like_opensm_and_load(
    tmp_path: Path, capsys, tree, renumber: bool, drop_every: int
) -> None:
    gen, net, ours = tmp_path / "gen.net", tmp_path / "f.net", str(tmp_path / "ours.dump")
    assert main(["fabric", "gen", *tree, "--out", str(gen)]) == 0
    capsys.readouterr()
    _mangle(gen, net, 11, renumber, drop_every)
    rc, theirs = _json(
        capsys,
        [
            "fabric",
            "opensm",
            str(net),
            "--engine",
            "ftree",
            "--compare",
            "--out",
            str(tmp_path / "o"),
            "--traces",
            "4",
        ],
    )
    assert rc == 0 and theirs["lids_match"]
    assert theirs["ours"]["balance_equal"], (theirs["balance"], theirs["ours"]["balance"])
    rc, routed = _json(capsys, ["fabric", "route", str(net), "--out", ours])
    assert rc == 0 and routed["check"]["deadlock_free"] and routed["check"]["unreachable"] == 0
    rc, loaded = _json(capsys, ["fabric", "opensm", str(net), "--lfts", ours, "--out", str(tmp_path / "l")])
    assert rc == 0 and loaded["lids_match"] and loaded["loaded_vs_ours"]["entries"] == 0
    assert all(t["ok"] for t in loaded["traces"])


@pytest.mark.parametrize("mode,to", [("copy", "hv-13"), ("swap", "hv-14-vm-1")])
def test_vswitch_routing_and_migration_load_into_opensm(tmp_path: Path, capsys, mode, to) -> None:
    """vswitch-ftree tables and the tables after a LID swap/copy migration are what OpenSM
    programs, and ibtracert reaches the moved VM at its new hypervisor."""
    net, dump = str(tmp_path / "v.net"), str(tmp_path / "v.dump")
    assert (
        main(
            ["fabric", "gen", "kary", "--k", "4", "--n", "2", "--vfs", "3", "--vms", "2,1,2,0", "--out", net]
        )
        == 0
    )
    capsys.readouterr()
    rc, r = _json(capsys, ["fabric", "route", net, "--engine", "vswitch-ftree", "--out", dump])
    assert rc == 0 and r["check"]["deadlock_free"] and r["extra"]["vms"] == 20
    new_net, new_dump = str(tmp_path / "m.net"), str(tmp_path / "m.dump")
    argv = ["fabric", "migrate", net, dump, "--vm", "hv-0-vm-0", "--to", to, "--mode", mode]
    rc, m = _json(capsys, [*argv, "--out-net", new_net, "--out", new_dump])
    assert rc == 0 and m["check"]["deadlock_free"]
    assert 1 <= m["smps"] <= min(m["max_smps"], m["full_reconfiguration_smps"])
    rc, d = _json(capsys, ["fabric", "diff", dump, new_dump])
    assert d["blocks"] == m["smps"] + m["vswitch_smps"]
    argv = [
        "fabric",
        "opensm",
        new_net,
        "--lfts",
        new_dump,
        "--out",
        str(tmp_path / "o"),
        "--trace-node",
        "hv-0-vm-0",
    ]
    rc, loaded = _json(capsys, argv)
    assert rc == 0 and loaded["lids_match"] and loaded["loaded_vs_ours"]["entries"] == 0
    assert len(loaded["traces"]) >= 10 and all(t["ok"] for t in loaded["traces"])


def test_subtree_noftree_reroute_touches_only_the_pod_and_loads(tmp_path: Path, capsys) -> None:
    """the conference paperI: a tenant inside one pod of a 4-ary-3-tree is re-routed by NoFTree in its sub-tree
    only; the merged tables are deadlock free and OpenSM programs them unchanged."""
    net, old, new = str(tmp_path / "f.net"), str(tmp_path / "old.dump"), str(tmp_path / "new.dump")
    assert main(["fabric", "gen", "kary", "--k", "4", "--n", "3", "--out", net]) == 0
    assert main(["fabric", "route", net, "--out", old]) == 0
    (tmp_path / "tenant").write_text("h-1 h-5 h-9\n")
    (tmp_path / "order").write_text("h-5 h-9 h-1\n")
    capsys.readouterr()
    argv = ["fabric", "route", net, "--engine", "noftree", "--old", old, "--out", new]
    rc, r = _json(capsys, [*argv, "--subtree", str(tmp_path / "tenant"), "--order", str(tmp_path / "order")])
    assert rc == 0 and r["check"]["deadlock_free"] and r["extra"]["subtree_switches"] == 8
    rc, d = _json(capsys, ["fabric", "diff", old, new])
    assert 0 < d["switches"] <= 8 and d["entries"] > 0
    argv = ["fabric", "opensm", net, "--lfts", new, "--out", str(tmp_path / "o"), "--trace-node", "h-9"]
    rc, loaded = _json(capsys, argv)
    assert rc == 0 and loaded["loaded_vs_ours"]["entries"] == 0
    assert all(t["ok"] for t in loaded["traces"])

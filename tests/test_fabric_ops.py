"""lanes fabric fail / check --path-sl / sa-storm / guid-files / slurm and the LID limit, through the
CLI (no OpenSM needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lanes.cli import main


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    rc = main([*argv, "--json"])
    return rc, json.loads(capsys.readouterr().out)


@pytest.fixture
def net(tmp_path: Path, capsys) -> str:
    p = str(tmp_path / "f.net")
    assert main(["fabric", "gen", "kary", "--k", "4", "--n", "2", "--out", p]) == 0
    capsys.readouterr()
    return p


@pytest.mark.parametrize("engine", ["ftree", "slimupdate", "mfattree", "subtree"])
def test_fail_a_leaf_link_and_reroute(net: str, tmp_path: Path, capsys, engine: str) -> None:
    out, degraded = str(tmp_path / "new.dump"), str(tmp_path / "d.net")
    argv = [
        "fabric",
        "fail",
        net,
        "--link",
        "s1-0[8]",
        "--engine",
        engine,
        "--out",
        out,
        "--out-net",
        degraded,
    ]
    rc, r = run_json(capsys, *argv)
    assert rc == 0
    assert r["failures"]["failed_links"] == ["s1-0[8]-s2-3[1]"]
    # Left alone, the old tables lose 6 (leaf, node) pairs and 2 (leaf, switch LID) pairs (s1-0 to
    # s2-3 among them); re-routed, none, deadlock free.
    assert (r["without_reroute"]["unreachable"], r["check"]["unreachable"]) == (8, 0)
    assert r["without_reroute"]["unreachable_switch_lids"] == 2
    assert r["check"]["deadlock_free"] and r["check"]["updown"]
    assert 0 < r["smps"] <= r["full_reconfiguration_smps"] == 8
    # The written tables check the same on the degraded netlist.
    rc, c = run_json(capsys, "fabric", "check", degraded, out)
    assert rc == 0 and c["deadlock_free"] and c["unreachable"] == 0


def test_fail_a_switch_and_random_links(net: str, capsys) -> None:
    rc, r = run_json(capsys, "fabric", "fail", net, "--switch", "s2-0", "--node", "h-3")
    assert rc == 0 and (r["fabric"]["switches"], r["fabric"]["compute_nodes"]) == (7, 15)
    rc, r = run_json(capsys, "fabric", "fail", net, "--random-links", "25", "--seed", "3")
    assert rc == 0 and r["failures"]["links_failed"] == 4 and r["check"]["unreachable"] == 0
    assert main(["fabric", "fail", net, "--switch", "h-1"]) == 2
    assert "h-1 is not a switch" in capsys.readouterr().err


def test_diff_across_a_switch_failure_and_eval_threads(net: str, tmp_path: Path, capsys) -> None:
    old, new = str(tmp_path / "old.dump"), str(tmp_path / "new.dump")
    assert main(["fabric", "route", net, "--out", old]) == 0
    capsys.readouterr()
    rc, r = run_json(capsys, "fabric", "fail", net, "--switch", "s2-0", "--old", old, "--out", new)
    assert rc == 0
    # The failed switch is counted as gone, not refused; the SMPs are those `fail` counted.
    rc, d = run_json(capsys, "fabric", "diff", old, new)
    assert rc == 0 and (d["switches_removed"], d["switches_added"]) == (1, 0)
    assert (d["blocks"], d["total_switches"]) == (r["smps"], 7)
    rc, d = run_json(capsys, "fabric", "diff", new, old)
    assert rc == 0 and d["switches_added"] == 1
    # --threads is used (and reported); the runs do not depend on it.
    results = [run_json(capsys, "fabric", "eval", net, old, "--runs", "6", "--threads", n)[1] for n in "12"]
    assert [x["threads"] for x in results] == [1, 2]
    assert results[0]["bandwidth_mean"] == pytest.approx(results[1]["bandwidth_mean"], abs=1e-12)
    with pytest.raises(SystemExit):
        main(["fabric", "eval", net, old, "--threads", "-1"])
    assert "expected a thread count" in capsys.readouterr().err


def test_subtree_engine_keeps_every_table_when_a_node_fails(tmp_path: Path, capsys) -> None:
    """A failed compute node: full ftree re-balances around the gap, the sub-tree engine (its leaf)
    sends nothing and every node left stays reachable; a link inside a pod widens to the roots."""
    p = str(tmp_path / "k43.net")
    assert main(["fabric", "gen", "kary", "--k", "4", "--n", "3", "--out", p]) == 0
    capsys.readouterr()
    smps = {}
    for engine in ("ftree", "subtree"):
        rc, r = run_json(capsys, "fabric", "fail", p, "--node", "h-3", "--engine", engine)
        assert rc == 0 and r["check"]["unreachable"] == 0 and r["check"]["deadlock_free"]
        smps[engine] = r["smps"]
    assert smps == {"ftree": 48, "subtree": 0}
    assert r["subtree"]["subtree_switches"] == 1 and r["subtree"]["attempts"] == 1
    rc, r = run_json(capsys, "fabric", "fail", p, "--link", "s1-0[5]", "--engine", "subtree")
    assert rc == 0 and r["smps"] == 50 and r["check"]["unreachable"] == 0 and r["check"]["updown"]
    st = r["subtree"]
    assert (st["subtree_switches"], st["rerouted_switches"], st["attempts"]) == (8, 48, 2)


def test_path_sl_check_on_one_vl(net: str, tmp_path: Path, capsys) -> None:
    dump = str(tmp_path / "t.dump")
    assert main(["fabric", "route", net, "--out", dump]) == 0
    sl = tmp_path / "sl.txt"
    sl.write_text("9 24 1\n10 24 1\n")
    capsys.readouterr()
    rc, r = run_json(capsys, "fabric", "check", net, dump, "--path-sl", str(sl))
    assert rc == 0 and r["vl"]["deadlock_free"] and r["vl"]["paths"] == 16 * 15
    assert [v[0] for v in r["vl"]["vls"]] == [0, 1] and r["path_sls"] == 2
    assert main(["fabric", "check", net, dump, "--path-sl", str(sl), "--sl2vl", "0,1"]) == 2
    assert "16 VLs" in capsys.readouterr().err


def test_sa_storm_numbers(capsys) -> None:
    rc, r = run_json(capsys, "fabric", "sa-storm")
    assert rc == 0
    rows = {(x["event"], x["cache"]): x["result"] for x in r["rows"]}
    no = rows[("migration, VM gets a new LID", False)]
    assert (no["queries"], no["failed"]) == (62000, 14000)
    assert rows[("migration, VM gets a new LID", True)]["queries"] == 2000
    assert rows[("switch failure", True)]["queries"] == 0


def test_guid_and_slurm_files(net: str, tmp_path: Path, capsys) -> None:
    io = tmp_path / "io.txt"
    io.write_text("h-15\n")
    rc, r = run_json(capsys, "fabric", "guid-files", net, "--out", str(tmp_path / "g"), "--io", str(io))
    assert rc == 0 and (r["roots"], r["compute_nodes"], r["io_nodes"]) == (4, 15, 1)
    assert len(Path(r["root_guid_file"]).read_text().split()) == 4
    topo, order = tmp_path / "topology.conf", tmp_path / "order.txt"
    rc, r = run_json(capsys, "fabric", "slurm", net, "--topology", str(topo), "--order", str(order))
    assert rc == 0 and r["compute_nodes"] == 16
    assert "SwitchName=s1-3 Nodes=h-12,h-13,h-14,h-15" in topo.read_text()
    assert order.read_text().split()[:5] == ["h-0", "h-1", "h-2", "h-3", "h-4"]


def test_a_fabric_beyond_the_lid_space_is_refused(capsys) -> None:
    assert main(["fabric", "gen", "kary", "--k", "48", "--n", "3"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "49151 unicast LIDs" in err and "limit is 768" in err


def test_min_copy_moves_a_vm_within_its_leaf_with_one_smp(tmp_path: Path, capsys) -> None:
    """FTreeMinRC: an intra-leaf move updates only the leaf; a plain LID copy sends 4 SMPs here."""
    net, dump = str(tmp_path / "v.net"), str(tmp_path / "v.dump")
    gen = ["fabric", "gen", "kary", "--k", "4", "--n", "2", "--vfs", "3", "--vms", "2,1", "--out", net]
    assert main(gen) == 0
    assert main(["fabric", "route", net, "--engine", "vswitch-ftree", "--out", dump]) == 0
    capsys.readouterr()
    smps = {}
    for mode in ("copy", "min-copy"):
        argv = ["fabric", "migrate", net, dump, "--vm", "hv-0-vm-1", "--to", "hv-1", "--mode", mode]
        rc, r = run_json(capsys, *argv, "--no-compare")
        assert rc == 0 and r["check"]["deadlock_free"] and r["check"]["unreachable"] == 0
        smps[mode] = (r["smps"], r["switches_updated"])
    assert smps == {"copy": (4, 4), "min-copy": (1, 1)}


def test_paths_modified_after_a_first_link_failure(net: str, capsys) -> None:
    # 4-ary-2-tree, each of its 16 links failed in turn. A failed link (leaf L, root R) breaks 24
    # ordered node pairs: L's 4 nodes to the 3 remote nodes L sent up over it, and the 12 remote
    # nodes to the one node of L that R reached. SlimUpdate moves those and nothing else; ftree
    # moves more. A bisect run on 16 nodes has 16 flows.
    rc, r = run_json(capsys, "fabric", "paths-modified", net, "--runs", "2000")
    assert rc == 0 and (r["nodes"], r["links"], r["flows_per_run"]) == (16, 16, 16)
    e = {x["engine"]: x for x in r["engines"]}
    assert e["slimupdate"]["pairs_changed"] == e["slimupdate-paper"]["pairs_changed"] == 16 * 24
    assert e["slimupdate"]["paths_expected"] == pytest.approx(16 * 24 / 16 / (16 * 15) * 16)
    assert e["ftree"]["pairs_changed"] > 16 * 24 and e["ftree"]["paths_max"] <= 16
    assert e["ftree"]["paths_mean"] > e["slimupdate-paper"]["paths_mean"]
    # Fewer entries change with lanes's slimupdate than with Paper IV's, the same paths.
    assert e["slimupdate"]["entries_changed"] < e["slimupdate-paper"]["entries_changed"]
    for bad, want in [
        (["--runs", "0"], "runs must be >= 1"),
        (["--engines", "vswitch-ftree"], "vswitch-ftree"),
    ]:
        assert main(["fabric", "paths-modified", net, *bad]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert want in err[-1] and err[-1].startswith("lanes: error:"), err

"""Which engine OpenSM really routed with: the lanes-opensm wrapper (the README's command) loads the
plugin, plain opensm cannot and that fall-back is an error, unknown engine names are refused before
anything starts, a console event naming an unknown node fails with ibsim's reason, and `fabric
live` re-routes a failure with the update-minimising engine unless --rebalance is given."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from lanes.cli import main
from lanes.errors import LanesError
from lanes.fabric import opensm, osmwrap, plugin
from lanes.fabric.live import LiveSubnet

needs_opensm = pytest.mark.skipif(
    bool(opensm.missing_tools()) or not (plugin.plugin_dir() / "liblanesosm.so").exists(),
    reason="OpenSM/ibsim or the lanes OpenSM plugin missing (run make setup)",
)
WRAPPER = Path(sys.executable).parent / "lanes-opensm"


@pytest.fixture
def net(tmp_path: Path, capsys) -> str:
    p = str(tmp_path / "f.net")
    assert main(["fabric", "gen", "kary", "--k", "4", "--n", "2", "--out", p]) == 0
    capsys.readouterr()
    return p


@needs_opensm
def test_lanes_opensm_routes_with_lanes_and_plain_opensm_is_a_loud_fallback(net: str, tmp_path: Path) -> None:
    r = opensm.run(net, "lanes-ftree", str(tmp_path / "w"), traces=2, command=[str(WRAPPER)])
    assert r["rc"] == 0 and r["engine_used"] == "lanes-ftree" and "fallback" not in r
    log = (tmp_path / "w" / "opensm.log").read_text()
    assert "lanes-ftree tables configured on all switches" in log
    assert r["check"]["deadlock_free"] and all(t["ok"] for t in r["traces"])
    # The same command line without the wrapper: OpenSM cannot find the engine and routes with
    # min-hop; lanes reports that instead of results.
    r = opensm.run(net, "lanes-ftree", str(tmp_path / "p"), traces=0, command=[opensm._tool("opensm")])
    assert r["engine_used"] == "minhop"
    assert "cannot find or setup routing engine" in r["fallback"]


def test_lanes_opensm_keeps_the_users_options_file(tmp_path: Path) -> None:
    conf = tmp_path / "mine.conf"
    conf.write_text("sweep_interval 5\nevent_plugin_name other\n")
    args, config = osmwrap.split_config(["-R", "lanes-ftree", "-F", str(conf), "-o"])
    assert (args, config) == (["-R", "lanes-ftree", "-o"], str(conf))
    assert osmwrap.options_text(config) == "sweep_interval 5\nevent_plugin_name other lanesosm\n"
    assert osmwrap.options_text(None) == "event_plugin_name lanesosm\n"


def test_unknown_engines_are_refused_in_one_line(net: str, tmp_path: Path, capsys) -> None:
    for argv in (
        ["fabric", "live", net, "--engine", "lanes-bogus", "--out", str(tmp_path / "l")],
        ["fabric", "opensm", net, "--engine", "bogus", "--out", str(tmp_path / "o")],
        ["fabric", "opensm", net, "--engine", "ftree,lanes-bogus", "--out", str(tmp_path / "o")],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("lanes: error: unknown routing engine") and "\n" not in err, err
    assert not (tmp_path / "l" / "ibsim.log").exists()  # refused before anything started
    with pytest.raises(SystemExit):
        main(["fabric", "route", net, "--engine", "bogus", "--out", str(tmp_path / "x.dump")])
    assert "invalid choice: 'bogus'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["fabric", "route", "--help"])
    assert "{ftree,noftree,mfattree,slimupdate,slimupdate-paper,vswitch-ftree}" in capsys.readouterr().out


@needs_opensm
def test_live_fails_at_once_on_an_unknown_node_and_defaults_to_slimupdate(
    net: str, tmp_path: Path, capsys
) -> None:
    refusal = r'unlink nope\[1\]: ibsim refused the event: .*"nope".* not found'
    with (
        LiveSubnet(net, "lanes-slimupdate", str(tmp_path / "u")) as sub,
        pytest.raises(LanesError, match=refusal),
    ):
        sub.event("unlink nope[1]", timeout=20)
    # 4-ary-3-tree: the default re-routes a failed leaf link with lanes-slimupdate, as the same
    # failure offline does, with fewer SMPs than a full re-balance (lanes-ftree, --rebalance).
    big = str(tmp_path / "k43.net")
    assert main(["fabric", "gen", "kary", "--k", "4", "--n", "3", "--out", big]) == 0
    capsys.readouterr()
    argv = ["fabric", "live", big, "--out", str(tmp_path / "live"), "--event", "unlink s1-0[5]"]
    rc = main([*argv, "--traces", "2", "--json"])
    steps = json.loads(capsys.readouterr().out)["steps"]
    assert rc == 0 and [s["lanes"]["engine"] for s in steps] == ["lanes-slimupdate"] * 2
    smps = {}
    for engine in ("slimupdate", "ftree"):
        fail = [
            "fabric",
            "fail",
            big,
            "--link",
            "s1-0[5]",
            "--engine",
            engine,
            "--old",
            steps[0]["lfts_dump"],
        ]
        assert main([*fail, "--json"]) == 0
        smps[engine] = json.loads(capsys.readouterr().out)["smps"]
    assert steps[1]["lanes"]["lanes"]["lft_blocks_changed"] == smps["slimupdate"] < smps["ftree"]

"""lanes's engines inside a running OpenSM (the plugin, opensm -R lanes-*) on ibsim: the subnet
comes up routed by lanes, a link and a switch go down and come back through ibsim's console, and
after every change OpenSM has programmed exactly the tables `lanes fabric fail` computes offline
for the same failure, with ibtracert following them. Skipped without OpenSM/ibsim (make setup)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from lanes.cli import main
from lanes.fabric import opensm, plugin, smpread
from lanes.fabric.live import LiveSubnet, console_command

pytestmark = pytest.mark.skipif(
    bool(opensm.missing_tools()) or not (plugin.plugin_dir() / "liblanesosm.so").exists(),
    reason="OpenSM/ibsim or the lanes OpenSM plugin missing (run make setup)",
)


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, dict]:
    rc = main([*argv, "--json"])
    return rc, json.loads(capsys.readouterr().out)


def _entries(capsys: pytest.CaptureFixture[str], a: str, b: str) -> int:
    rc, d = _json(capsys, ["fabric", "diff", a, b])
    assert rc == 0
    return d["entries"]


@pytest.mark.parametrize("engine", ["ftree", "slimupdate"])
def test_opensm_routes_a_live_subnet_with_lanes_through_failures(tmp_path: Path, capsys, engine) -> None:
    net = str(tmp_path / "f.net")
    assert main(["fabric", "gen", "kary", "--k", "4", "--n", "2", "--out", net]) == 0
    capsys.readouterr()
    with LiveSubnet(net, f"lanes-{engine}", str(tmp_path / "live")) as sub:
        start = sub.state("start")
        lanes = start["lanes"]
        assert lanes["engine"] == f"lanes-{engine}" and lanes["links"] == 48
        assert lanes["lanes"]["check"]["deadlock_free"] and lanes["lanes"]["check"]["unreachable"] == 0
        assert all(t["ok"] for t in start["traces"]) and len(start["traces"]) == 8
        # OpenSM sent exactly lanes's routing of the intact tree.
        mine = str(tmp_path / "mine.dump")
        rc, _ = _json(
            capsys,
            ["fabric", "route", net, "--engine", engine, "--lids-from", start["lfts_dump"], "--out", mine],
        )
        assert rc == 0 and _entries(capsys, mine, start["lfts_dump"]) == 0

        current = start["lfts_dump"]
        for down, fail_args in [
            ("unlink s1-0[8]", ["--link", "s1-0[8]"]),
            ("unlink s2-1", ["--switch", "s2-1"]),
        ]:
            s = sub.event(down)
            r = s["lanes"]["lanes"]
            assert s["lanes"]["links"] == (46 if "[" in down else 40)
            assert r["check"]["deadlock_free"] and r["check"]["unreachable"] == 0
            assert r["lft_blocks_changed"] > 0
            assert all(t["ok"] for t in s["traces"])
            # The same failure offline, from the tables in place: the same tables.
            want = str(tmp_path / f"want-{len(s['lfts_dump'])}-{s['subnet_ups']}.dump")
            argv = ["fabric", "fail", net, *fail_args, "--engine", engine, "--old", current, "--out", want]
            rc, f = _json(capsys, argv)
            assert rc == 0 and f["smps"] == r["lft_blocks_changed"]
            assert _entries(capsys, want, s["lfts_dump"]) == 0
            up = sub.event(down.replace("unlink", "relink"))
            assert up["lanes"]["links"] == 48 and all(t["ok"] for t in up["traces"])
            assert up["lanes"]["lanes"]["check"]["deadlock_free"]
            current = up["lfts_dump"]
            # Back to the intact tree: back to the first tables (SlimUpdate restores the routes the
            # failure changed, at the cost of the blocks the failure changed; a switch that comes
            # back is sent its whole table besides: 1 block on this tree).
            assert _entries(capsys, start["lfts_dump"], up["lfts_dump"]) == 0
            if engine == "slimupdate":
                back = up["lanes"]["lanes"]["lft_blocks_changed"]
                assert back == r["lft_blocks_changed"] + (0 if "[" in down else 1)
        ibsim_pid, osm_pid = sub.ibsim.pid, sub.osm.pid
    # Both processes are gone once the subnet is closed.
    for pid in (ibsim_pid, osm_pid):
        assert (
            not Path(f"/proc/{pid}").exists()
            or "zombie"
            in subprocess.run(
                ["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True, check=False
            ).stdout.lower()
        )


@pytest.mark.parametrize(
    "engine,offline,tree,nodes",
    [
        ("lanes-ftree", "ftree", ["xgft", "--m", "4,4,3", "--w", "1,2,3"], 48),
        (
            "lanes-vswitch",
            "vswitch-ftree",
            ["kary", "--k", "4", "--n", "2", "--vfs", "3", "--vms", "2,1,2,0"],
            36,
        ),
        # The first sweep has no tables to keep: sub-tree routing routes the whole tree.
        ("lanes-subtree", "ftree", ["kary", "--k", "4", "--n", "3"], 64),
    ],
    ids=lambda x: x if isinstance(x, str) else None,
)
def test_opensm_once_with_a_lanes_engine_equals_lanes_offline(
    tmp_path: Path, capsys, engine: str, offline: str, tree: list[str], nodes: int
) -> None:
    net = str(tmp_path / "f.net")
    assert main(["fabric", "gen", *tree, "--out", net]) == 0
    capsys.readouterr()
    rc, r = _json(capsys, ["fabric", "opensm", net, "--engine", engine, "--out", str(tmp_path / "o")])
    assert rc == 0 and not r["log_errors"] and r["check"]["deadlock_free"]
    assert r["engine_used"] == engine
    assert [x["engine"] for x in r["lanes_routings"]] == [engine]
    assert r["lanes_routings"][0]["lanes"]["compute_nodes"] == nodes
    assert r["routing_seconds"] is not None and all(t["ok"] for t in r["traces"])
    mine = str(tmp_path / "mine.dump")
    argv = ["fabric", "route", net, "--engine", offline, "--lids-from", r["lfts_dump"], "--out", mine]
    rc, _ = _json(capsys, argv)
    assert rc == 0 and _entries(capsys, mine, r["lfts_dump"]) == 0


def test_console_events_and_bad_ones() -> None:
    assert console_command("unlink s1-0[8]") == 'Unlink "s1-0"[8]'
    assert console_command('relink "s2-1"') == 'ReLink "s2-1"'
    with pytest.raises(Exception, match="bad event"):
        console_command("reboot s1-0")


def test_a_fabric_lanes_cannot_route_falls_back_to_opensm(tmp_path: Path, capsys) -> None:
    """A ring of three switches is no fat tree: lanes says so, OpenSM routes with min-hop, and the
    run fails naming the engine that routed instead of reporting min-hop's tables as lanes's."""
    blocks = []
    for i in range(3):
        blocks.append(
            f'switchguid=0x{0x100 + i:x}\nSwitch\t4 "s{i}"\n[1]\t"h{i}"[1]\n'
            f'[2]\t"s{(i + 1) % 3}"[3]\n[3]\t"s{(i + 2) % 3}"[2]\n'
        )
    for i in range(3):
        blocks.append(f'caguid=0x{0x200 + 2 * i:x}\nCa\t1 "h{i}"\n[1]\t"s{i}"[1]\n')
    net = tmp_path / "ring.net"
    net.write_text("\n".join(blocks))
    rc, r = _json(
        capsys, ["fabric", "opensm", str(net), "--engine", "lanes-ftree", "--out", str(tmp_path / "o")]
    )
    assert rc == 1 and r["engine_used"] == "minhop"
    assert r["fallback"].startswith("OpenSM routed with minhop, not lanes-ftree")
    assert "not a fat tree" in r["lanes_routings"][0]["error"]
    assert "not a fat tree" in r["check_error"] and len(r["traces"]) >= 4
    assert all(t["ok"] for t in r["traces"])


_DUMPS = ("opensm-lid-matrix.dump", "opensm-lfts.dump", "opensm.fdbs")


@pytest.mark.parametrize("engine", ["lanes-slimupdate", "updn"])
def test_the_live_subnet_writes_no_routing_dumps_unless_asked(tmp_path: Path, capsys, engine) -> None:
    """By default OpenSM logs lightly: no routing dumps, yet the engine, SUBNET UP, the SMPs it sent
    and the tables (read from the switches by SMP) are all there; asked for, the dumps are written
    and hold what the switches hold."""
    net = str(tmp_path / "f.net")
    assert main(["fabric", "gen", "kary", "--k", "4", "--n", "2", "--out", net]) == 0
    capsys.readouterr()
    out = tmp_path / "light"
    with LiveSubnet(net, engine, str(out)) as sub:
        assert sub.log_flags == "0x03" and not sub.dumps
        start = sub.startup()
        assert start["engine_used"] == engine and sub.subnet_ups() >= 1
        assert start["master_to_subnet_up_seconds"] is not None and start["smps_sent"] > 0
        s = sub.event("unlink s1-0[8]")
        assert s["engine_used"] == engine and "fallback" not in s
        assert s["event_to_subnet_up_seconds"] is not None and s["subnet_ups"] > 1
        assert s["lids"] == 16 and all(t["ok"] for t in s["traces"])
        if engine.startswith("lanes-"):
            blocks = s["lanes"]["lanes"]["lft_blocks_changed"]
            # OpenSM sent at least the blocks lanes changed (plus its sweep's Gets).
            assert 0 < blocks <= s["smps_sent"]
    assert not [name for name in _DUMPS if (out / name).exists()]

    asked = tmp_path / "dumps"
    with LiveSubnet(net, engine, str(asked), dumps=True) as sub:
        assert sub.log_flags == "0x43"
        s = sub.state("start")
        by_smp = str(smpread.read_tables(sub.sim_env, sub.outdir, asked / "by-smp.dump"))
    assert all((asked / name).exists() for name in _DUMPS)
    assert _entries(capsys, s["lfts_dump"], by_smp) == 0

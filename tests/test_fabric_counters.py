"""Paper III's node order from port counters: perfquery's output read, hosts ordered busiest receiver
first, the order fed to NoFTree sub-tree routing. The example is Paper III's (flows b->e, c->i,
d->m share one up link of the senders' leaf under ftree; NoFTree with the order e, i, m gives each
its own) inside pod 0 of a 4-ary-3-tree. The live test sets the traffic as the hosts' counters on
ibsim and reads them back with perfquery (skipped without ibsim/OpenSM: make setup)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lanes.cli import main
from lanes.fabric import counters, dumproutes, opensm

# Paper III's example in pod 0: senders on leaf 0, receivers first on leaves 1-3.
FLOWS = [("h-1", "h-4", 3 << 30), ("h-2", "h-8", 2 << 30), ("h-3", "h-12", 1 << 30)]
TENANT = ["h-1", "h-2", "h-3", "h-4", "h-8", "h-12"]


def _net(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    net = tmp_path / "f.net"
    assert main(["fabric", "gen", "kary", "--k", "4", "--n", "3", "--out", str(net)]) == 0
    capsys.readouterr()
    return net


def _block(lid: int, rcv_words: int, extended: bool) -> str:
    kind = "extended counters" if extended else "counters"
    return (
        f"# Port {kind}: Lid {lid} port 1 (CapMask: 0x1200)\n"
        "PortSelect:......................1\n"
        "CounterSelect:...................0x0000\n"
        f"PortXmitData:....................{rcv_words // 2}\n"
        f"PortRcvData:.....................{rcv_words}\n"
        "PortXmitPkts:....................15\n"
    )


def _route_with_order(tmp_path: Path, capsys, net: Path, order: Path) -> tuple[Path, Path]:
    old, new, tenant = tmp_path / "old.dump", tmp_path / "new.dump", tmp_path / "tenant"
    tenant.write_text(" ".join(TENANT))
    assert main(["fabric", "route", str(net), "--out", str(old), "--no-check"]) == 0
    capsys.readouterr()
    argv = ["fabric", "route", str(net), "--engine", "noftree", "--old", str(old)]
    rc = main([*argv, "--subtree", str(tenant), "--order", str(order), "--out", str(new), "--json"])
    r = json.loads(capsys.readouterr().out)
    assert rc == 0 and r["check"]["deadlock_free"] and r["check"]["unreachable"] == 0
    assert r["extra"] == {"subtree_switches": 8, "subtree_nodes": 16}
    return old, new


def _assert_paper_iii_routes(net: Path, old: Path, new: Path) -> None:
    hosts = {name: lid for lid, name in counters.hosts_from_netlist(net.read_text()).items()}
    net_links = dumproutes.links(str(net))
    before, after = dumproutes.tables(str(old)), dumproutes.tables(str(new))
    for tables, up_links in ((before, 1), (after, 3)):
        routes = [dumproutes.route(net_links, tables, s, hosts[d]) for s, d, _ in FLOWS]
        # Leaf up, level-1 switch down, receiver's leaf down to it: 3 hops, all from one leaf.
        assert all(len(r) == 3 and "none" not in r for r in routes), routes
        assert len({r[0].split("[")[0] for r in routes}) == 1, routes
        # ftree sends all three flows up one link; NoFTree with the counters' order one each.
        assert len({r[0] for r in routes}) == up_links, routes
        assert len({r[1] for r in routes}) == 3, routes


def test_order_from_a_perfquery_file_drives_noftree_sub_tree_routing(tmp_path: Path, capsys) -> None:
    net = _net(tmp_path, capsys)
    hosts = {name: lid for lid, name in counters.hosts_from_netlist(net.read_text()).items()}
    words = {d: size // 4 for _, d, size in FLOWS}
    words["h-20"] = (3 << 29) // 4  # pod 1: 1.5 GiB, between h-8 and h-12 in the order
    text = "".join(_block(hosts[n], w, extended=True) for n, w in words.items())
    # Basic counters too: for h-4 the extended block wins (read first or not); h-0 saw MADs only.
    text += _block(hosts["h-4"], 7, extended=False) + _block(hosts["h-0"], 1008, extended=False)
    pq = tmp_path / "perfquery.txt"
    pq.write_text(text)
    order = tmp_path / "order"
    assert (
        main(["fabric", "counter-order", str(net), "--counters", str(pq), "--out", str(order), "--json"]) == 0
    )
    r = json.loads(capsys.readouterr().out)
    assert r["hosts_read"] == 5
    assert [(x["node"], x["received_bytes"]) for x in r["order"]] == [
        ("h-4", 3 << 30),
        ("h-8", 2 << 30),
        ("h-20", 3 << 29),
        ("h-12", 1 << 30),
    ]
    assert order.read_text().split() == ["h-4", "h-8", "h-20", "h-12"]
    # h-20 lies outside the tenant's sub-tree (pod 0): the sub-tree takes h-4, h-8, h-12 in order.
    old, new = _route_with_order(tmp_path, capsys, net, order)
    _assert_paper_iii_routes(net, old, new)


def test_bad_counter_files_are_refused_with_one_line(tmp_path: Path, capsys) -> None:
    net = _net(tmp_path, capsys)
    pq, order = tmp_path / "pq", str(tmp_path / "order")
    for text, want in [
        ("PortRcvData:....12\n", "before any"),
        ("# Port counters: Lid 5 port 1\nPortRcvData:....x12\n", "not a number"),
        ("# Port counters: Lid 5 port 1\nthis is not perfquery\n", "not a perfquery counter line"),
        ("# Port counters: Lid 60000 port 1\nPortRcvData:....12\n", "LID 60000"),
        ("", "no perfquery counters"),
    ]:
        pq.write_text(text)
        assert main(["fabric", "counter-order", str(net), "--counters", str(pq), "--out", order]) == 2
        err = capsys.readouterr().err.strip()
        assert want in err and len(err.splitlines()) == 1, err


@pytest.mark.skipif(bool(opensm.missing_tools()), reason="OpenSM/ibsim missing (run make setup)")
def test_counters_set_on_ibsim_and_read_with_perfquery_give_the_order(tmp_path: Path, capsys) -> None:
    net = _net(tmp_path, capsys)
    flows = tmp_path / "flows"
    flows.write_text("".join(f"{s} {d} {size}\n" for s, d, size in FLOWS))
    order, work = tmp_path / "order", tmp_path / "sim"
    argv = ["fabric", "counter-order", str(net), "--ibsim-flows", str(flows), "--workdir", str(work)]
    assert main([*argv, "--out", str(order), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    # Every host was read over the simulated fabric; only the flows' receivers pass 1 MiB, each
    # with its flow's bytes plus the few MADs it received (the reads included).
    assert r["hosts_read"] == 64
    got = [(x["node"], x["received_bytes"]) for x in r["order"]]
    assert [n for n, _ in got] == ["h-4", "h-8", "h-12"]
    for (_, size), (_, b) in zip([(d, s) for _, d, s in FLOWS], got, strict=True):
        assert 0 <= b - size < 64 * 288
    pq = (work / "perfquery.txt").read_text()
    assert pq.count("# Port extended counters: Lid") == 64
    old, new = _route_with_order(tmp_path, capsys, net, order)
    _assert_paper_iii_routes(net, old, new)

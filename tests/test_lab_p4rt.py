"""The lab's P4Runtime controller (lanes.lab.p4rt over lanes.p4runtime.client and .named) against
a port-less `lanes switch`: the program pushed, entries written by name read back exactly through
the plain client, register and counter cells by name, and one-line errors naming the switch."""

from __future__ import annotations

import pytest
from lanes.emu.topo import Route
from lanes.errors import LanesError
from lanes.lab.p4rt import P4RuntimeTables
from lanes.p4runtime.client import Client
from lanes.p4runtime.proto import p4r
from p4rt_util import JSON, P4INFO, REPO, loopback_switch

TM_BASIC = (REPO / "p4" / "tm_basic.p4info.txtpb", REPO / "p4" / "tm_basic.json")


def read_entries(addr: str) -> list[p4r.TableEntry]:
    reader = Client(addr)
    try:
        ent = p4r.Entity()
        ent.table_entry.SetInParent()  # every entry of every table
        return [e.table_entry for e in reader.read([ent])]
    finally:
        reader.close()


def port_of(addr: str) -> int:
    return int(addr.rsplit(":", 1)[1])


def test_routes_and_classes_of_tm_basic_by_name() -> None:
    with loopback_switch() as (addr, _):
        t = P4RuntimeTables("s1", port_of(addr), 0, *TM_BASIC)
        try:
            t.add_route(Route(prefix="10.0.0.2/32", mac="00:00:00:00:00:02", port=2))
            t.add_class("10.0.0.1/32", prio=7, rate=1000, quantum=1500)
            t.modify_class("10.0.0.1/32", prio=3, rate=2000, quantum=1500, burst=4000)
            entries = read_entries(addr)
        finally:
            t.close()
    names = t.names
    by_table = {e.table_id: e for e in entries}
    assert len(entries) == 2
    route = by_table[names.table("ipv4_lpm").preamble.id]
    assert (route.match[0].lpm.value, route.match[0].lpm.prefix_len) == (bytes([10, 0, 0, 2]), 32)
    assert route.action.action.action_id == names.action("ipv4_forward").preamble.id
    assert [p.value for p in route.action.action.params] == [b"\x02", b"\x02"]
    cls = by_table[names.table("src_ip_prio").preamble.id]
    assert cls.action.action.action_id == names.action("set_priority_burst").preamble.id
    assert [p.value for p in cls.action.action.params] == [b"\x03", b"\x07\xd0", b"\x05\xdc", b"\x0f\xa0"]


def test_exact_entries_cells_and_errors_by_name() -> None:
    with loopback_switch() as (addr, _):
        t = P4RuntimeTables("s1", port_of(addr), 0, P4INFO, JSON)
        try:
            t.write_exact("INSERT", "l2_fwd", [0x0A0000000001], "set_port", [3])
            with pytest.raises(LanesError, match=r"^s1: Write INSERT l2_fwd \[\(10995116277761, 0\)\]: "):
                t.write_exact("INSERT", "l2_fwd", [0x0A0000000001], "set_port", [3])
            t.write_register("last_len", 5, 1234)
            cells = t.read_registers([("last_len", 5), ("MyIngress.last_len", 6)])
            counters = t.read_counters([("port_counter", 1)])
            with pytest.raises(LanesError, match="^s1: the program has no table nope$"):
                t.write_exact("INSERT", "nope", [1], "set_port", [1])
            with pytest.raises(LanesError, match="^s1: the program has no register nope$"):
                t.read_registers([("nope", 0)])
            entries = read_entries(addr)
        finally:
            t.close()
    assert cells == {("last_len", 5): 1234, ("last_len", 6): 0}
    assert counters == {("port_counter", 1): (0, 0)}
    assert [(e.match[0].exact.value, e.action.action.params[0].value) for e in entries] == [
        (bytes([10, 0, 0, 0, 0, 1]), b"\x03")
    ]


"""The lab's command-port route (`lanes lab run --control ctl`) against a real `lanes switch`
running tm_basic: class entries go in with table_add, a RUNTIME change modifies the entry by
the handle the switch's reply carried, and a command that creates nothing gives no handle."""

from __future__ import annotations

import pytest
from lanes.emu.topo import Route
from lanes.errors import LanesError
from lanes.lab.control import CtlTables
from lanes.switch.command_client import CommandClient
from p4rt_util import REPO, switch_proc

PROGRAM = REPO / "p4" / "tm_basic.json"


def class_lines(dump: str) -> list[str]:
    return [line for line in dump.splitlines() if "set_priority" in line]


def test_a_runtime_change_modifies_the_entry_whose_handle_the_add_answered() -> None:
    with switch_proc.command_port_switch(PROGRAM) as (port, _):
        tables = CtlTables("s1", port)
        ctl = CommandClient(port)
        try:
            # an entry before the lab's own, so the lab's handles do not start at 0
            ctl.run("table_add src_ip_prio set_priority 10.0.9.9/32 => 0 1000 1500")
            tables.add_route(Route("10.0.1.1/32", 1, "00:00:00:00:01:01"))
            tables.add_class("10.0.1.1/32", 7, 125000, 1500)
            tables.add_class("10.0.2.1/32", 0, 0, 1500)
            assert tables.handles == {"10.0.1.1/32": 1, "10.0.2.1/32": 2}
            tables.modify_class("10.0.2.1/32", 7, 250000, 1500, burst=3000)
            lines = class_lines(ctl.run("table_dump src_ip_prio"))
            # entry 2 (10.0.2.1) now priority 7 at 250,000 B/s with a 3,000-byte bucket
            want = "2: 0x0a000201/32 => MyIngress.set_priority_burst 0x07 0x000000000003d090 0x00000000000005dc 0x0000000000000bb8"
            assert [line for line in lines if "set_priority_burst" in line] == [f"     {want} (priority 0, 0 pkts, 0 bytes)"]
            assert any(line.strip().startswith("1: 0x0a000101/32 => MyIngress.set_priority 0x07") for line in lines), lines
        finally:
            tables.close()
            ctl.close()


def test_a_command_that_creates_nothing_has_no_handle_to_give() -> None:
    with switch_proc.command_port_switch(PROGRAM) as (port, _):
        ctl = CommandClient(port)
        try:
            with pytest.raises(LanesError, match="created nothing"):
                ctl.create("table_num_entries src_ip_prio")
            with pytest.raises(ValueError):  # refused by the switch: its own one-line error
                ctl.create("table_add src_ip_prio no_such_action 10.0.0.1/32 =>")
            assert ctl.create("table_add src_ip_prio set_priority 10.0.0.1/32 => 0 1000 1500") == 0
        finally:
            ctl.close()

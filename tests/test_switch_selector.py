"""Action profiles and selectors through bmv2's own simple_switch_CLI (unmodified): members,
groups and indirect entries as the CLI writes them, its dumps and error codes, and with root,
real frames spread over a group's members by the selector's hash exactly as bmv2 picks them
(the member at crc16(srcAddr) % count, members in handle order)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from netns import REPO, Star, is_root
from test_switch_thrift import CLI, cli, switch, tx_pkts

FRAMES = [sys.executable, str(REPO / "tests" / "p4rt_clients" / "frames.py")]
needs_root = pytest.mark.skipif(not is_root(), reason="needs root for network namespaces")
pytestmark = pytest.mark.skipif(not Path(CLI).exists(), reason="simple_switch_CLI not installed (make setup)")

ETHERTYPE = 0x88B5  # IEEE local experimental


def selector_program(path: Path) -> Path:
    """Ingress table `ecmp` (exact on etherType, an action selector with crc16 over the source
    MAC) whose members run `set_port(port)`; a miss drops. As p4c lays out an action_selector."""
    fields = [["ingress_port", 9, False], ["egress_spec", 9, False], ["egress_port", 9, False],
              ["instance_type", 32, False], ["packet_length", 32, False], ["mcast_grp", 16, False],
              ["parser_error", 32, False], ["_padding", 7, False]]  # fmt: skip
    prog = {
        "header_types": [
            {"name": "scalars_0", "id": 0, "fields": []},
            {"name": "standard_metadata", "id": 1, "fields": fields},
            {"name": "ethernet_t", "id": 2, "fields": [["dstAddr", 48, False], ["srcAddr", 48, False],
                                                         ["etherType", 16, False]]},
        ],
        "headers": [
            {"name": "scalars", "id": 0, "header_type": "scalars_0", "metadata": True},
            {"name": "standard_metadata", "id": 1, "header_type": "standard_metadata", "metadata": True},
            {"name": "ethernet", "id": 2, "header_type": "ethernet_t", "metadata": False},
        ],
        "errors": [["NoError", 0], ["PacketTooShort", 1]],
        "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
            {"name": "start", "id": 0,
             "parser_ops": [{"op": "extract", "parameters": [{"type": "regular", "value": "ethernet"}]}],
             "transition_key": [], "transitions": [{"type": "default", "value": None, "mask": None,
                                                    "next_state": None}]}]}],
        "deparsers": [{"name": "deparser", "id": 0, "order": ["ethernet"]}],
        "actions": [
            {"name": "ingress.set_port", "id": 0, "runtime_data": [{"name": "port", "bitwidth": 9}],
             "primitives": [{"op": "assign", "parameters": [
                 {"type": "field", "value": ["standard_metadata", "egress_spec"]},
                 {"type": "runtime_data", "value": 0}]}]},
            {"name": "ingress.drop", "id": 1, "runtime_data": [],
             "primitives": [{"op": "mark_to_drop", "parameters": [
                 {"type": "header", "value": "standard_metadata"}]}]},
        ],
        "pipelines": [
            {"name": "ingress", "id": 0, "init_table": "ingress.ecmp", "conditionals": [],
             "action_profiles": [{"name": "ingress.ecmp_selector", "id": 0, "max_size": 64,
                                  "selector": {"algo": "crc16", "input": [
                                      {"type": "field", "value": ["ethernet", "srcAddr"]}]}}],
             "tables": [{"name": "ingress.ecmp", "id": 0, "type": "indirect_ws",
                         "action_profile": "ingress.ecmp_selector", "match_type": "exact",
                         "support_timeout": False, "max_size": 16, "with_counters": False,
                         "direct_meters": None,
                         "key": [{"match_type": "exact", "name": "hdr.ethernet.etherType",
                                  "target": ["ethernet", "etherType"], "mask": None}],
                         "action_ids": [0, 1], "actions": ["ingress.set_port", "ingress.drop"],
                         "base_default_next": None,
                         "next_tables": {"ingress.set_port": None, "ingress.drop": None},
                         "default_entry": {"action_id": 1, "action_const": False,
                                           "action_data": [], "action_entry_const": False}}]},
            {"name": "egress", "id": 1, "init_table": None, "tables": [], "action_profiles": [],
             "conditionals": []},
        ],
    }  # fmt: skip
    path.write_text(json.dumps(prog))
    return path


def crc16(data: bytes) -> int:
    """CRC-16/ARC, bmv2's `crc16`."""
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def test_cli_action_profile_commands_and_errors(tmp_path: Path) -> None:
    prog = selector_program(tmp_path / "selector.json")
    with switch(prog, tmp_path / "switch.log") as port:
        out = cli(
            port,
            "act_prof_create_member ecmp_selector set_port 2\n"
            "act_prof_create_member ecmp_selector set_port 3\n"
            "act_prof_create_member ecmp_selector set_port 4\n"
            "act_prof_create_group ecmp_selector\n"
            "act_prof_add_member_to_group ecmp_selector 0 0\n"
            "act_prof_add_member_to_group ecmp_selector 2 0\n"
            f"table_indirect_add_with_group ecmp {ETHERTYPE:#x} => 0\n"
            "table_indirect_add ecmp 0x0800 => 1\n"
            "table_dump ecmp\n"
            "act_prof_dump_group ecmp_selector 0\n"
            "act_prof_dump_member ecmp_selector 2\n",
        )
        assert [f"Member has been created with handle {i}" in out for i in range(3)] == [True] * 3
        assert "Group has been created with handle 0" in out
        assert out.count("Entry has been added with handle") == 2
        assert "Index: group(0)" in out and "Index: member(1)" in out
        assert "Members: [0, 2]" in out
        assert "Action entry: ingress.set_port - 0004" in out
        # what bmv2 refuses, with its codes
        err = cli(
            port,
            "act_prof_delete_member ecmp_selector 0\n"
            "act_prof_delete_group ecmp_selector 0\n"
            "act_prof_add_member_to_group ecmp_selector 0 0\n"
            "act_prof_remove_member_from_group ecmp_selector 1 0\n"
            "table_indirect_add ecmp 0x86dd => 9\n"
            "table_indirect_add_with_group ecmp 0x86dd => 5\n"
            "table_add ecmp set_port 0x86dd => 3\n"
            "act_prof_create_member ecmp_selector nope 1\n",
        )
        for code in ("MBR_STILL_USED", "GRP_STILL_USED", "MBR_ALREADY_IN_GRP", "MBR_NOT_IN_GRP",
                     "INVALID_MBR_HANDLE", "INVALID_GRP_HANDLE", "WRONG_TABLE_TYPE"):  # fmt: skip
            assert code in err, (code, err)
        assert "has no action 'nope'" in err
        # the member moves every entry that names it; a modified entry, a default member
        out = cli(
            port,
            "act_prof_modify_member ecmp_selector set_port 1 7\n"
            "table_indirect_set_default ecmp 1\n"
            "table_dump ecmp\n"
            "table_indirect_delete ecmp 1\n"
            "table_indirect_reset_default ecmp\n"
            "act_prof_delete_member ecmp_selector 1\n"
            "act_prof_dump ecmp_selector\n",
        )
        assert "Action entry: ingress.set_port - 0007" in out
        assert "Dumping member 1" not in out.split("act_prof_dump")[-1].split("MEMBERS")[-1]


@needs_root
def test_selector_spreads_real_frames_as_bmv2_picks(tmp_path: Path) -> None:
    prog = selector_program(tmp_path / "selector.json")
    with Star(4) as star:
        star.start_switch(str(prog), log=tmp_path / "switch.log")
        cli(
            9090,
            "act_prof_create_member ecmp_selector set_port 2\n"
            "act_prof_create_member ecmp_selector set_port 3\n"
            "act_prof_create_member ecmp_selector set_port 4\n"
            "act_prof_create_group ecmp_selector\n"
            "act_prof_add_member_to_group ecmp_selector 2 0\n"
            "act_prof_add_member_to_group ecmp_selector 0 0\n"
            "act_prof_add_member_to_group ecmp_selector 1 0\n"
            f"table_indirect_add_with_group ecmp {ETHERTYPE:#x} => 0\n",
            netns=star.sw,
        )
        flows = [f"02:00:00:00:{i // 256:02x}:{i % 256:02x}" for i in range(24)]
        want = {2: 0, 3: 0, 4: 0}
        for src in flows:
            h = crc16(bytes.fromhex(src.replace(":", "")))
            want[2 + h % 3] += 2  # members 0, 1, 2 (ports 2, 3, 4) in handle order
            star.host(1, *FRAMES, "send", "eth0", "ff:ff:ff:ff:ff:ff", src, hex(ETHERTYPE), "2")
        assert min(want.values()) > 0, want  # the flows do spread
        deadline = 50
        got = {}
        for _ in range(deadline):
            shown = star.ctl("show_ports")
            got = {p: tx_pkts(shown, p) for p in (2, 3, 4)}
            if sum(got.values()) >= sum(want.values()):
                break
            subprocess.run(["sleep", "0.1"], check=True)
        assert got == want

"""Parser value sets on a switch without ports but with a CPU port: the program parses header
`t` only after an EtherType in its value set and sends such frames back to the CPU. P4Runtime's
ValueSetEntry (MODIFY and Read, the spec's codes) decides which PacketOuts come back as
PacketIns; bmv2's simple_switch_CLI (`pvs_add`, `pvs_get`, `pvs_remove`, `pvs_clear`) edits the
same set."""

from __future__ import annotations

import json
import queue
import subprocess
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from lanes.p4runtime.client import Client
from lanes.p4runtime.proto import p4i, p4r
from p4rt_util import loopback_switch, write_code
from test_switch_clone import upd
from test_switch_selector import selector_program
from test_switch_thrift import CLI

CPU = 255
VSET_ID = 0x03000001
C = grpc.StatusCode


def vset_program(path: Path) -> bytes:
    """start: extract ethernet; etherType in `ParserImpl.pvs` -> extract t. Ingress: t valid ->
    the CPU port (a keyless table's const default), else nothing (port 0 does not exist)."""
    prog = json.loads(selector_program(path).read_text())
    prog["header_types"].append({"name": "t_t", "id": 3, "fields": [["x", 8, False]]})
    prog["headers"].append({"name": "t", "id": 3, "header_type": "t_t", "metadata": False})
    prog["parse_vsets"] = [{"name": "ParserImpl.pvs", "id": 0, "compressed_bitwidth": 16, "max_size": 4}]

    def extract(h: str) -> dict:
        return {"op": "extract", "parameters": [{"type": "regular", "value": h}]}

    prog["parsers"][0]["parse_states"] = [
        {"name": "start", "id": 0, "parser_ops": [extract("ethernet")],
         "transition_key": [{"type": "field", "value": ["ethernet", "etherType"]}],
         "transitions": [{"type": "parse_vset", "value": "ParserImpl.pvs", "mask": None, "next_state": "parse_t"},
                         {"value": "default", "mask": None, "next_state": None}]},
        {"name": "parse_t", "id": 1, "parser_ops": [extract("t")], "transition_key": [],
         "transitions": [{"value": "default", "mask": None, "next_state": None}]},
    ]  # fmt: skip
    prog["deparsers"][0]["order"] = ["ethernet", "t"]
    prog["pipelines"][0] = {
        "name": "ingress", "id": 0, "init_table": "node_2", "action_profiles": [],
        "conditionals": [{"name": "node_2", "id": 0, "true_next": "tbl_cpu", "false_next": None,
                          "expression": {"type": "expression", "value": {"op": "d2b", "left": None,
                                         "right": {"type": "field", "value": ["t", "$valid$"]}}}}],
        "tables": [{"name": "tbl_cpu", "id": 0, "type": "simple", "key": [], "match_type": "exact",
                    "support_timeout": False, "max_size": 1, "action_ids": [0], "actions": ["ingress.set_port"],
                    "next_tables": {"ingress.set_port": None}, "base_default_next": None,
                    "default_entry": {"action_id": 0, "action_const": True, "action_data": ["0xff"],
                                      "action_entry_const": True}}],
    }  # fmt: skip
    return json.dumps(prog).encode()


def p4info() -> p4i.P4Info:
    info = p4i.P4Info()
    info.pkg_info.arch = "v1model"
    vs = info.value_sets.add()
    vs.preamble.id, vs.preamble.name, vs.preamble.alias = VSET_ID, "ParserImpl.pvs", "pvs"
    vs.match.add(id=1, name="etherType", bitwidth=16, match_type=p4i.MatchField.EXACT)
    vs.size = 4
    return info


def vset(*ethertypes: int) -> p4r.Entity:
    e = p4r.ValueSetEntry(value_set_id=VSET_ID)
    for t in ethertypes:
        e.members.add().match.add(field_id=1).exact.value = t.to_bytes(2, "big")
    return p4r.Entity(value_set_entry=e)


def frame(ethertype: int) -> bytes:
    return bytes.fromhex("000000000002000000000001") + ethertype.to_bytes(2, "big") + bytes(46)


def comes_back(c: Client, ethertype: int) -> bool:
    c.packet_out(frame(ethertype))
    try:
        while True:
            p = c.next_message("packet", timeout=1.0)
            if p.payload[12:14] == ethertype.to_bytes(2, "big"):
                return True
    except queue.Empty:
        return False


@pytest.fixture
def client(tmp_path: Path) -> Iterator[tuple[Client, int]]:
    with loopback_switch(target=("--cpu-port", str(CPU))) as (addr, thrift):
        c = Client(addr, election_id=10)
        assert c.arbitrate(10).status.code == 0
        c.set_pipeline(p4info(), vset_program(tmp_path / "p.json"))
        yield c, thrift
        c.close()


def test_value_set_entry_decides_what_the_parser_takes(client: tuple[Client, int]) -> None:
    c, _ = client
    assert not comes_back(c, 0x88B5), "empty set: t is not parsed"
    c.write([upd(p4r.Update.MODIFY, vset(0x88B5, 0x88B6))])
    got = c.read([p4r.Entity(value_set_entry=p4r.ValueSetEntry(value_set_id=VSET_ID))])
    members = [m.match[0].exact.value for m in got[0].value_set_entry.members]
    assert members == [b"\x88\xb5", b"\x88\xb6"]
    assert comes_back(c, 0x88B5) and comes_back(c, 0x88B6)
    assert not comes_back(c, 0x0800)
    c.write([upd(p4r.Update.MODIFY, vset(0x0800))])  # MODIFY replaces the members
    assert comes_back(c, 0x0800) and not comes_back(c, 0x88B5)
    assert write_code(c, [upd(p4r.Update.INSERT, vset(0x88B5))]) == C.INVALID_ARGUMENT
    assert write_code(c, [upd(p4r.Update.MODIFY, vset(*range(1, 6)))]) == C.INVALID_ARGUMENT  # size 4
    bad = vset(0x88B5)
    bad.value_set_entry.value_set_id = 0x03000009
    assert write_code(c, [upd(p4r.Update.MODIFY, bad)]) == C.NOT_FOUND


def test_cli_pvs_commands(client: tuple[Client, int]) -> None:
    c, thrift = client
    if not Path(CLI).exists():
        pytest.fail("simple_switch_CLI not installed (make setup)")

    def cli(cmds: str) -> str:
        r = subprocess.run([CLI, "--thrift-port", str(thrift)], input=cmds, capture_output=True, text=True,
                           timeout=60, check=False)  # fmt: skip
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout

    out = cli("pvs_add ParserImpl.pvs 0x88b5\npvs_add ParserImpl.pvs 0x1234\npvs_get ParserImpl.pvs\n")
    assert "88b5" in out and "1234" in out, out
    assert comes_back(c, 0x88B5)
    out = cli("pvs_remove ParserImpl.pvs 0x88b5\npvs_remove ParserImpl.pvs 0x88b5\npvs_get ParserImpl.pvs\n")
    assert "88b5" not in out.split("pvs_get")[-1] and "Error" not in out, out
    assert not comes_back(c, 0x88B5)
    cli("pvs_clear ParserImpl.pvs\n")
    assert not comes_back(c, 0x1234)
    assert "Invalid" in cli("pvs_add nope 0x1\n") or "Error" in cli("pvs_add nope 0x1\n")

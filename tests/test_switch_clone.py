"""Mirroring (clone sessions) over P4Runtime and `lanes ctl`, on a switch without ports but with
a CPU port (255): CloneSessionEntry INSERT/MODIFY/DELETE and Read, bad entries refused with
INVALID_ARGUMENT (or UNIMPLEMENTED), and a clone that really happens: a PacketOut's ingress
clone goes to the session's port (the CPU port), comes back as a PacketIn that egress marked
as a copy and the session truncated, while the original is dropped."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator

import grpc
import pytest
from lanes.p4runtime.client import Client, write_errors
from lanes.p4runtime.proto import p4i, p4r
from p4rt_util import LANES, loopback_switch, rpc_code, wait_for, write_code

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
C = grpc.StatusCode
CPU = 255


def _field(h: str, f: str) -> dict:
    return {"type": "field", "value": [h, f]}


def _hex(v: int) -> dict:
    return {"type": "hexstr", "value": hex(v)}


def _table(name: str, tid: int, action: tuple[int, str]) -> dict:
    return {
        "name": name,
        "id": tid,
        "key": [],
        "type": "simple",
        "max_size": 1,
        "action_ids": [action[0]],
        "actions": [action[1]],
        "next_tables": {action[1]: None},
        "base_default_next": None,
        "default_entry": {"action_id": action[0], "action_const": True, "action_data": []},
    }


def clone_program() -> bytes:
    """bmv2 JSON: ingress clones every packet to session 5 (I2E) and drops it; egress writes
    instance_type into the source MAC's last byte of copies and truncates them to 20 bytes."""
    std = [
        ["ingress_port", 9, False],
        ["egress_spec", 9, False],
        ["egress_port", 9, False],
        ["instance_type", 32, False],
        ["packet_length", 32, False],
        ["mcast_grp", 16, False],
        ["checksum_error", 1, False],
        ["parser_error", 32, False],
        ["priority", 3, False],
        ["_padding", 1, False],
    ]
    prog = {
        "header_types": [
            {"name": "scalars_0", "id": 0, "fields": []},
            {"name": "standard_metadata", "id": 1, "fields": std},
            {
                "name": "ethernet_t",
                "id": 2,
                "fields": [["dstAddr", 48, False], ["srcAddr", 48, False], ["etherType", 16, False]],
            },
        ],
        "headers": [
            {"name": "scalars", "id": 0, "header_type": "scalars_0", "metadata": True},
            {"name": "standard_metadata", "id": 1, "header_type": "standard_metadata", "metadata": True},
            {"name": "ethernet", "id": 2, "header_type": "ethernet_t", "metadata": False},
        ],
        "field_lists": [],
        "errors": [["NoError", 0], ["PacketTooShort", 1]],
        "parsers": [
            {
                "name": "parser",
                "id": 0,
                "init_state": "start",
                "parse_states": [
                    {
                        "name": "start",
                        "id": 0,
                        "parser_ops": [
                            {"op": "extract", "parameters": [{"type": "regular", "value": "ethernet"}]}
                        ],
                        "transition_key": [],
                        "transitions": [{"type": "default", "value": None, "mask": None, "next_state": None}],
                    }
                ],
            }
        ],
        "deparsers": [{"name": "deparser", "id": 0, "order": ["ethernet"]}],
        "actions": [
            {
                "name": "clone_and_drop",
                "id": 0,
                "runtime_data": [],
                "primitives": [
                    {"op": "clone_ingress_pkt_to_egress", "parameters": [_hex(5), _hex(0)]},
                    {"op": "mark_to_drop", "parameters": []},
                ],
            },
            {
                "name": "mark_copy",
                "id": 1,
                "runtime_data": [],
                "primitives": [
                    {
                        "op": "assign",
                        "parameters": [
                            _field("ethernet", "srcAddr"),
                            _field("standard_metadata", "instance_type"),
                        ],
                    },
                    {"op": "truncate", "parameters": [_hex(20)]},
                ],
            },
        ],
        "pipelines": [
            {
                "name": "ingress",
                "id": 0,
                "init_table": "ti",
                "conditionals": [],
                "tables": [_table("ti", 0, (0, "clone_and_drop"))],
            },
            {
                "name": "egress",
                "id": 1,
                "init_table": "te",
                "conditionals": [],
                "tables": [_table("te", 1, (1, "mark_copy"))],
            },
        ],
    }
    return json.dumps(prog).encode()


def clone_entry(session: int, *ports: int, truncate: int = 0) -> p4r.Entity:
    cs = p4r.CloneSessionEntry(session_id=session, packet_length_bytes=truncate, class_of_service=3)
    for p in ports:
        cs.replicas.add(egress_port=p, instance=1)
    return p4r.Entity(
        packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(clone_session_entry=cs)
    )


def upd(kind: int, e: p4r.Entity) -> p4r.Update:
    u = p4r.Update(type=kind)
    u.entity.CopyFrom(e)
    return u


def read_sessions(c: Client, session: int = 0) -> list[tuple[int, list[int], int]]:
    want = clone_entry(session)
    out = []
    for e in c.read([want]):
        cs = e.packet_replication_engine_entry.clone_session_entry
        out.append((cs.session_id, [r.egress_port for r in cs.replicas], cs.packet_length_bytes))
    return out


def ctl(cport: int, cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [LANES, "ctl", "--thrift-port", str(cport), "-c", cmd], capture_output=True, text=True, check=False
    )


@pytest.fixture(scope="module")
def switch() -> Iterator[tuple[str, int]]:
    with loopback_switch(target=("--cpu-port", str(CPU))) as s:
        yield s


@pytest.fixture
def client(switch: tuple[str, int]) -> Iterator[Client]:
    c = Client(switch[0], election_id=10)
    assert c.arbitrate(10).status.code == 0
    info = p4i.P4Info()
    info.pkg_info.arch = "v1model"
    c.set_pipeline(info, clone_program())  # VERIFY_AND_COMMIT: no clone sessions
    yield c
    c.close()


def test_clone_session_insert_modify_read_delete(switch: tuple[str, int], client: Client) -> None:
    assert read_sessions(client) == []
    client.write([upd(INSERT, clone_entry(5, CPU, truncate=64))])
    assert read_sessions(client) == [(5, [CPU], 64)]
    # the same session the switch's command port shows
    r = ctl(switch[1], "mirroring_get 5")
    assert r.returncode == 0 and r.stdout.strip() == f"session 5: port {CPU} truncate 64", r
    assert write_code(client, [upd(INSERT, clone_entry(5, CPU))]) == C.ALREADY_EXISTS
    client.write([upd(MODIFY, clone_entry(5, CPU))])
    client.write([upd(INSERT, clone_entry(7, CPU, truncate=100))])
    assert read_sessions(client) == [(5, [CPU], 0), (7, [CPU], 100)]
    assert read_sessions(client, 7) == [(7, [CPU], 100)]
    client.write([upd(DELETE, clone_entry(5))])
    assert read_sessions(client) == [(7, [CPU], 100)]
    assert write_code(client, [upd(DELETE, clone_entry(5))]) == C.NOT_FOUND
    assert write_code(client, [upd(MODIFY, clone_entry(6, CPU))]) == C.NOT_FOUND
    # a new pipeline starts without clone sessions
    info = p4i.P4Info()
    info.pkg_info.arch = "v1model"
    client.set_pipeline(info, clone_program())
    assert read_sessions(client) == []


@pytest.mark.parametrize(
    ("entity", "code", "text"),
    [
        (clone_entry(0, CPU), C.INVALID_ARGUMENT, "out of range"),
        (clone_entry(32768, CPU), C.INVALID_ARGUMENT, "out of range"),
        (clone_entry(5, 7), C.INVALID_ARGUMENT, "no port 7"),
        (clone_entry(5, 511), C.INVALID_ARGUMENT, "no port 511"),
        (clone_entry(5), C.INVALID_ARGUMENT, "needs one replica"),
        (clone_entry(5, CPU, CPU), C.UNIMPLEMENTED, "only one replica"),
        (
            p4r.Entity(packet_replication_engine_entry=p4r.PacketReplicationEngineEntry()),
            C.INVALID_ARGUMENT,
            "",
        ),
    ],
)
def test_bad_clone_sessions_are_refused(client: Client, entity: p4r.Entity, code: C, text: str) -> None:
    try:
        client.write([upd(INSERT, entity)])
    except grpc.RpcError as e:
        errs = write_errors(e)
        assert len(errs) == 1 and errs[0][0] == code.value[0] and text in errs[0][1], errs
        assert "\n" not in errs[0][1]
    else:
        pytest.fail("the write was accepted")
    assert read_sessions(client) == []
    # the switch is still serving
    assert rpc_code(client.capabilities) == C.OK


def drops(cport: int) -> dict[str, int]:
    line = next(x for x in ctl(cport, "show_ports").stdout.splitlines() if x.startswith("drops:"))
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}


def test_clone_reaches_the_session_port(switch: tuple[str, int], client: Client) -> None:
    frame = bytes.fromhex("0000000000020000000000010800") + bytes(range(46))
    # no session yet: the clone is counted, nothing comes back
    before = drops(switch[1])
    client.packet_out(frame)
    assert wait_for(lambda: drops(switch[1])["no_mirror_session"] == before["no_mirror_session"] + 1)
    assert drops(switch[1])["ingress"] == before["ingress"] + 1
    client.write([upd(INSERT, clone_entry(5, CPU))])
    client.packet_out(frame)
    pin = client.next_message("packet", timeout=10)
    # the copy: the frame as sent, its source MAC marked with instance_type 1 (ingress
    # clone) by egress, truncated to 20 bytes; the original was dropped in ingress
    assert pin.payload == frame[:11] + b"\x01" + frame[12:20]
    # the session's truncation caps the copy further
    client.write([upd(MODIFY, clone_entry(5, CPU, truncate=14))])
    client.packet_out(frame)
    pin = client.next_message("packet", timeout=10)
    assert pin.payload == frame[:11] + b"\x01" + frame[12:14]


def test_ctl_mirroring_errors_are_one_line(switch: tuple[str, int], client: Client) -> None:
    cport = switch[1]
    for cmd, want in [
        ("mirroring_add 40000 3", "mirror session 40000 out of range (0-32767)"),
        ("mirroring_add 5 3", "no port 3"),
        ("mirroring_delete 9", "no mirror session 9"),
    ]:
        r = ctl(cport, cmd)
        assert r.returncode != 0
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].endswith(want), r.stderr
    r = ctl(cport, f"mirroring_add 9 {CPU}")
    assert r.returncode == 0, r.stderr
    assert read_sessions(client) == [(9, [CPU], 0)]
    drops = ctl(cport, "show_ports").stdout
    assert "no_mirror_session=" in drops and "clone_depth=0" in drops, drops

"""Multicast over P4Runtime, `lanes ctl` and runtime.json, on a switch without ports but with a
CPU port (255): MulticastGroupEntry INSERT/MODIFY/DELETE and Read with P4Runtime's status
codes, bad groups refused in one line, and multicast that really happens: a PacketOut whose
ingress sets mcast_grp comes back once per replica as PacketIns that egress marked with the
copy's egress_rid and instance_type."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from lanes.errors import LanesError
from lanes.p4runtime import runtime_json
from lanes.p4runtime.client import Client, write_errors
from lanes.p4runtime.proto import p4i, p4r
from p4rt_util import loopback_switch, rpc_code, write_code
from test_switch_clone import clone_program, ctl, upd

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
C = grpc.StatusCode
CPU = 255


def multicast_program() -> bytes:
    """The clone test's program, changed: ingress sends every packet to multicast group 1;
    egress writes egress_rid into the source MAC and instance_type into the destination MAC."""
    prog = json.loads(clone_program())
    std = prog["header_types"][1]["fields"]
    std.insert(len(std) - 1, ["egress_rid", 16, False])

    def field(h: str, f: str) -> dict:
        return {"type": "field", "value": [h, f]}

    prog["actions"][0]["primitives"] = [
        {
            "op": "assign",
            "parameters": [field("standard_metadata", "mcast_grp"), {"type": "hexstr", "value": "0x1"}],
        }
    ]
    prog["actions"][1]["primitives"] = [
        {
            "op": "assign",
            "parameters": [field("ethernet", "srcAddr"), field("standard_metadata", "egress_rid")],
        },
        {
            "op": "assign",
            "parameters": [field("ethernet", "dstAddr"), field("standard_metadata", "instance_type")],
        },
    ]
    return json.dumps(prog).encode()


def group(mgid: int, *replicas: tuple[int, int]) -> p4r.Entity:
    g = p4r.MulticastGroupEntry(multicast_group_id=mgid)
    for port, rid in replicas:
        g.replicas.add(egress_port=port, instance=rid)
    return p4r.Entity(
        packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(multicast_group_entry=g)
    )


def read_groups(c: Client, mgid: int = 0) -> list[tuple[int, list[tuple[int, int]]]]:
    out = []
    for e in c.read([group(mgid)]):
        g = e.packet_replication_engine_entry.multicast_group_entry
        out.append((g.multicast_group_id, [(r.egress_port, r.instance) for r in g.replicas]))
    return out


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
    c.set_pipeline(info, multicast_program())  # VERIFY_AND_COMMIT: no groups
    yield c
    c.close()


def test_multicast_group_insert_modify_read_delete(switch: tuple[str, int], client: Client) -> None:
    assert read_groups(client) == []
    client.write([upd(INSERT, group(1, (CPU, 1), (CPU, 2))), upd(INSERT, group(9))])
    assert read_groups(client) == [(1, [(CPU, 1), (CPU, 2)]), (9, [])]
    assert read_groups(client, 1) == [(1, [(CPU, 1), (CPU, 2)])]
    # the same group the switch's command port shows
    dump = json.loads(ctl(switch[1], "mc_dump_json").stdout)
    assert [g["mgid"] for g in dump["groups"]] == [1, 9]
    assert write_code(client, [upd(INSERT, group(1, (CPU, 3)))]) == C.ALREADY_EXISTS
    client.write([upd(MODIFY, group(1, (CPU, 7)))])
    assert read_groups(client, 1) == [(1, [(CPU, 7)])]
    client.write([upd(DELETE, group(9))])
    assert read_groups(client) == [(1, [(CPU, 7)])]
    assert write_code(client, [upd(DELETE, group(9))]) == C.NOT_FOUND
    assert write_code(client, [upd(MODIFY, group(4, (CPU, 1)))]) == C.NOT_FOUND
    # a new pipeline starts without groups
    info = p4i.P4Info()
    info.pkg_info.arch = "v1model"
    client.set_pipeline(info, multicast_program())
    assert read_groups(client) == []


@pytest.mark.parametrize(
    ("entity", "text"),
    [
        (group(0, (CPU, 1)), "out of range"),
        (group(65536, (CPU, 1)), "out of range"),
        (group(1, (511, 1)), "port 511 out of range"),
        (group(1, (CPU, 70000)), "rid 70000 out of range"),
        (group(1, (CPU, 1), (CPU, 1)), "given twice"),
    ],
)
def test_bad_multicast_groups_are_refused(client: Client, entity: p4r.Entity, text: str) -> None:
    try:
        client.write([upd(INSERT, entity)])
    except grpc.RpcError as e:
        errs = write_errors(e)
        assert len(errs) == 1 and errs[0][0] == C.INVALID_ARGUMENT.value[0] and text in errs[0][1], errs
        assert "\n" not in errs[0][1]
    else:
        pytest.fail("the write was accepted")
    assert read_groups(client) == []
    assert rpc_code(client.capabilities) == C.OK


def test_a_group_with_more_replicas_than_the_engine_holds_is_resource_exhausted(client: Client) -> None:
    """One node per replication id and 16,384 nodes in all (bmv2's simple_pre has room for as
    many): a group of 16,385 ids is refused with P4Runtime's code for no room, and nothing of it
    stays."""
    big = group(1, *((CPU, rid) for rid in range(1, 16_386)))
    try:
        client.write([upd(INSERT, big)])
    except grpc.RpcError as e:
        errs = write_errors(e)
        assert len(errs) == 1 and errs[0][0] == C.RESOURCE_EXHAUSTED.value[0] and "no room" in errs[0][1], errs
    else:
        pytest.fail("the write was accepted")
    assert read_groups(client) == []


def test_a_packet_leaves_once_per_replica(switch: tuple[str, int], client: Client) -> None:
    frame = bytes.fromhex("0000000000020000000000010800") + bytes(range(46))
    before = ctl(switch[1], "show_ports").stdout
    assert "no_multicast_group=" in before
    client.write([upd(INSERT, group(1, (CPU, 4), (CPU, 9)))])
    client.packet_out(frame)
    pins = sorted(client.next_message("packet", timeout=10).payload for _ in range(2))
    # each copy: source MAC = its egress_rid, destination MAC = instance_type 5 (replication)
    assert pins == [bytes(5) + b"\x05" + bytes(5) + bytes([rid]) + frame[12:] for rid in (4, 9)]


def test_runtime_json_carries_groups_and_sessions(tmp_path: Path) -> None:
    info = p4i.P4Info()
    (tmp_path / "p.p4info.txtpb").write_text("")
    doc = {
        "p4info": "p.p4info.txtpb",
        "multicast_group_entries": [
            {"multicast_group_id": 3, "replicas": [{"egress_port": 1, "instance": 2}]}
        ],
        "clone_session_entries": [{"clone_session_id": 5, "replicas": [{"egress_port": 4, "instance": 1}]}],
    }
    (tmp_path / "rt.json").write_text(json.dumps(doc))
    rt = runtime_json.load(tmp_path / "rt.json")
    ups = runtime_json.all_updates(runtime_json.Names(info), rt)
    assert [w for w, _ in ups] == ["multicast_group_entries[0]", "clone_session_entries[0]"]
    g = ups[0][1].entity.packet_replication_engine_entry.multicast_group_entry
    assert (g.multicast_group_id, g.replicas[0].egress_port, g.replicas[0].instance) == (3, 1, 2)
    assert ups[1][1].entity.packet_replication_engine_entry.clone_session_entry.session_id == 5
    doc["multicast_group_entries"] = [{"replicas": []}]
    (tmp_path / "rt.json").write_text(json.dumps(doc))
    with pytest.raises(LanesError, match=r"multicast_group_entries\[0\]: no 'multicast_group_id'"):
        runtime_json.all_updates(runtime_json.Names(info), runtime_json.load(tmp_path / "rt.json"))

"""Digests over P4Runtime, on a switch without ports but with a CPU port (255): DigestEntry
INSERT/MODIFY/DELETE and Read with P4Runtime's status codes, and digests that really happen: a
PacketOut whose ingress calls digest(source MAC, ingress port) reaches the primary client as a
DigestList, the same data is not sent again until the list is acked, batches follow
max_list_size, and digests of an unconfigured digest are not sent at all."""

from __future__ import annotations

import json
import queue
from collections.abc import Iterator

import grpc
import pytest
from lanes.p4runtime.client import Client
from lanes.p4runtime.proto import p4i, p4r
from p4rt_util import loopback_switch, write_code
from test_switch_clone import clone_program, ctl, upd

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
C = grpc.StatusCode
CPU = 255
DIGEST_ID = 0x17000001


def digest_program() -> bytes:
    """The clone test's program, changed: ingress digests (source MAC, ingress port) and drops."""
    prog = json.loads(clone_program())
    prog["learn_lists"] = [
        {
            "id": 1,
            "name": "learn_t",
            "elements": [
                {"type": "field", "value": ["ethernet", "srcAddr"]},
                {"type": "field", "value": ["standard_metadata", "ingress_port"]},
            ],
        }
    ]
    prog["actions"][0]["primitives"] = [
        {
            "op": "generate_digest",
            "parameters": [{"type": "hexstr", "value": "0x1"}, {"type": "hexstr", "value": "0x1"}],
        },
        {"op": "mark_to_drop", "parameters": []},
    ]
    return json.dumps(prog).encode()


def p4info() -> p4i.P4Info:
    info = p4i.P4Info()
    info.pkg_info.arch = "v1model"
    d = info.digests.add()
    d.preamble.id = DIGEST_ID
    d.preamble.name = "learn_t"
    d.type_spec.struct.name = "learn_t"
    return info


def digest_entry(
    did: int = DIGEST_ID, timeout_ns: int = 0, size: int = 1, ack_ns: int = 10**10
) -> p4r.Entity:
    e = p4r.DigestEntry(digest_id=did)
    e.config.max_timeout_ns = timeout_ns
    e.config.max_list_size = size
    e.config.ack_timeout_ns = ack_ns
    return p4r.Entity(digest_entry=e)


def frame(src: int) -> bytes:
    return bytes.fromhex("000000000002") + src.to_bytes(6, "big") + bytes.fromhex("0800") + bytes(46)


def data(dl: p4r.DigestList) -> list[tuple[bytes, ...]]:
    return [tuple(m.bitstring for m in d.struct.members) for d in dl.data]


def no_digest(c: Client, wait: float = 0.5) -> bool:
    try:
        c.next_message("digest", timeout=wait)
    except queue.Empty:
        return True
    return False


@pytest.fixture(scope="module")
def switch() -> Iterator[tuple[str, int]]:
    with loopback_switch(target=("--cpu-port", str(CPU))) as s:
        yield s


@pytest.fixture
def client(switch: tuple[str, int]) -> Iterator[Client]:
    c = Client(switch[0], election_id=10)
    assert c.arbitrate(10).status.code == 0
    c.set_pipeline(p4info(), digest_program())  # VERIFY_AND_COMMIT: no digest configured
    yield c
    c.close()


def test_digest_entry_insert_modify_read_delete(client: Client) -> None:
    assert client.read([digest_entry(0)]) == []
    client.write([upd(INSERT, digest_entry(size=4))])
    got = client.read([digest_entry(0)])
    assert [(e.digest_entry.digest_id, e.digest_entry.config.max_list_size) for e in got] == [(DIGEST_ID, 4)]
    assert write_code(client, [upd(INSERT, digest_entry())]) == C.ALREADY_EXISTS
    client.write([upd(MODIFY, digest_entry(size=2))])
    assert client.read([digest_entry()])[0].digest_entry.config.max_list_size == 2
    client.write([upd(DELETE, digest_entry())])
    assert client.read([digest_entry(0)]) == []
    assert write_code(client, [upd(DELETE, digest_entry())]) == C.NOT_FOUND
    assert write_code(client, [upd(INSERT, digest_entry(did=0x17000009))]) == C.NOT_FOUND
    no_config = p4r.Entity(digest_entry=p4r.DigestEntry(digest_id=DIGEST_ID))
    assert write_code(client, [upd(INSERT, no_config)]) == C.INVALID_ARGUMENT


def test_digests_reach_the_controller_once_until_acked(switch: tuple[str, int], client: Client) -> None:
    # not configured: nothing is sent
    client.packet_out(frame(0xA1))
    assert no_digest(client)
    client.write([upd(INSERT, digest_entry())])
    client.packet_out(frame(0xA1))
    dl = client.next_message("digest", timeout=10)
    # the MAC and the ingress port (the CPU port: PacketOuts enter there), canonical bytes
    assert (dl.digest_id, data(dl)) == (DIGEST_ID, [(b"\xa1", b"\xff")])
    # the same data again: suppressed while the list is not acked
    client.packet_out(frame(0xA1))
    assert no_digest(client)
    client.digest_ack(DIGEST_ID, dl.list_id)
    client.packet_out(frame(0xA1))
    assert data(client.next_message("digest", timeout=10)) == [(b"\xa1", b"\xff")]
    stats = json.loads(ctl(switch[1], "p4runtime_stats").stdout)
    assert stats["digests_sent"] == 2 and stats["digests_suppressed"] == 1, stats


def test_lists_hold_max_list_size_items(client: Client) -> None:
    # a long timeout: lists go out only when full
    client.write([upd(INSERT, digest_entry(timeout_ns=10**10, size=3))])
    for mac in (1, 2, 3, 4):
        client.packet_out(frame(mac))
    dl = client.next_message("digest", timeout=10)
    assert data(dl) == [(bytes([m]), b"\xff") for m in (1, 2, 3)]
    assert no_digest(client)
    # a short timeout sends what is waiting
    client.write([upd(MODIFY, digest_entry(timeout_ns=10**6, size=3))])
    client.packet_out(frame(5))
    # (4 may leave alone, at the first check after the change, or with 5)
    got = data(client.next_message("digest", timeout=10))
    if len(got) == 1:
        got += data(client.next_message("digest", timeout=10))
    assert sorted(got) == [(b"\x04", b"\xff"), (b"\x05", b"\xff")]

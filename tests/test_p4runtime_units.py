"""Parts of the P4Runtime server without gRPC: P4DeviceConfig decoding, controller packet
metadata packing, arbitration rules."""

from __future__ import annotations

import grpc
import pytest
from lanes.p4runtime.arbitration import Arbitrator, Client
from lanes.p4runtime.devconfig import bmv2_json, wrap
from lanes.p4runtime.errors import P4RTError
from lanes.p4runtime.packetio import packet_in, packet_out_frame
from lanes.p4runtime.pipeline import PacketMeta
from lanes.p4runtime.proto import p4r


def test_device_config_raw_wrapped_and_garbage() -> None:
    text = '{"header_types": []}'
    assert bmv2_json(text.encode()) == text
    assert bmv2_json(b"  \n" + text.encode()) == "  \n" + text
    big = "{" + " " * 300 + "}"  # device_data longer than 127 bytes: two-byte length
    assert bmv2_json(wrap(big)) == big
    # extras (field 2) before device_data are skipped
    extras = b"\x12\x06\x0a\x04\x0a\x00\x12\x00"
    assert bmv2_json(b"\x08\x01" + extras + wrap(text)[2:]) == text
    for bad in (b"", b"\x1a\x05{}", b"\xff\xff\xff", b"\x1a\x02xy", b"\x0f"):
        with pytest.raises(P4RTError) as e:
            bmv2_json(bad)
        assert e.value.code == grpc.StatusCode.INVALID_ARGUMENT


def test_packet_metadata_packing() -> None:
    meta = PacketMeta([(1, "ingress_port", 9), (2, "_pad", 7)])
    msg = packet_in(meta, bytes([0x80, 0x80]) + b"frame")  # port 257, pad 0
    assert msg.packet.payload == b"frame"
    assert [(m.metadata_id, m.value) for m in msg.packet.metadata] == [(1, b"\x01\x01"), (2, b"\x00")]
    po = p4r.PacketOut(payload=b"xyz")
    po.metadata.add(metadata_id=1, value=b"\x01\x01")
    assert packet_out_frame(meta, po) == bytes([0x80, 0x80]) + b"xyz"
    po.metadata[0].value = b"\x02\x00"  # 512 does not fit 9 bits
    with pytest.raises(P4RTError):
        packet_out_frame(meta, po)
    po.metadata[0].metadata_id = 7
    with pytest.raises(P4RTError):
        packet_out_frame(meta, po)
    assert packet_in(None, b"raw").packet.payload == b"raw"


def _update(eid: int | None, device: int = 0, role: str = "") -> p4r.MasterArbitrationUpdate:
    m = p4r.MasterArbitrationUpdate(device_id=device)
    if role:
        m.role.name = role
    if eid is not None:
        m.election_id.low = eid
    return m


def test_arbitration_rules() -> None:
    arb = Arbitrator(0)
    inbox: dict[str, list] = {"a": [], "b": [], "c": []}
    a, b, c = (Client(send=inbox[k].append) for k in "abc")

    def last(k: str) -> tuple[int, int]:
        m = inbox[k][-1].arbitration
        return m.status.code, m.election_id.low

    ok, exists, nf = (
        x.value[0] for x in (grpc.StatusCode.OK, grpc.StatusCode.ALREADY_EXISTS, grpc.StatusCode.NOT_FOUND)
    )
    arb.update(a, _update(5))
    assert last("a") == (ok, 5) and arb.is_primary(a)
    arb.update(b, _update(3))
    assert last("b") == (exists, 5) and not arb.is_primary(b)
    arb.update(c, _update(None))  # no election id: backup forever
    assert last("c") == (exists, 5)
    arb.update(b, _update(9))  # b takes over; everyone in the role is told
    assert last("a") == (exists, 9) and last("b") == (ok, 9) and last("c") == (exists, 9)
    arb.remove(b)
    assert last("a") == (nf, 9) and last("c") == (nf, 9)
    assert arb.primaries() == []
    arb.update(a, _update(9))
    assert last("a") == (ok, 9)
    with pytest.raises(P4RTError) as e:
        arb.update(c, _update(9))  # id in use
    assert e.value.code == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(P4RTError) as e:
        arb.update(Client(send=lambda m: None), _update(1, device=4))  # a new stream, unknown device
    assert e.value.code == grpc.StatusCode.NOT_FOUND
    with pytest.raises(P4RTError) as e:
        arb.update(a, _update(9, device=4))  # a registered stream moving to another device
    assert e.value.code == grpc.StatusCode.FAILED_PRECONDITION
    d = Client(send=lambda m: None)
    arb.update(d, _update(1, role="other"))  # another role: its own primary
    assert arb.is_primary(d) and arb.is_primary(a)
    with pytest.raises(P4RTError) as e:
        arb.check_primary("", _update(5).election_id, True, "Write")
    assert e.value.code == grpc.StatusCode.PERMISSION_DENIED
    arb.check_primary("", _update(9).election_id, True, "Write")
    arb.check_primary("other", _update(1).election_id, True, "Write")

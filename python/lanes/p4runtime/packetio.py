"""PacketIn/PacketOut through the CPU port: the program's controller_packet_metadata header
(packet_in before the frame the switch sends to the CPU port, packet_out before the frame the
controller injects), packed field after field, most significant bit first."""

from __future__ import annotations

from typing import Any

from lanes.p4runtime.errors import invalid
from lanes.p4runtime.pipeline import PacketMeta
from lanes.p4runtime.proto import p4r
from lanes.p4runtime.values import canonical


def packet_in(meta: PacketMeta | None, frame: bytes) -> Any:
    msg = p4r.StreamMessageResponse()
    pi = msg.packet
    n = meta.nbytes if meta is not None else 0
    if meta is None or len(frame) < n:
        pi.payload = frame
        return msg
    v = int.from_bytes(frame[:n], "big")
    shift = n * 8
    for fid, _, bw in meta.fields:
        shift -= bw
        md = pi.metadata.add()
        md.metadata_id = fid
        md.value = canonical((v >> shift) & ((1 << bw) - 1))
    pi.payload = frame[n:]
    return msg


def packet_out_frame(meta: PacketMeta | None, po: Any) -> bytes:
    """The frame to inject for a PacketOut; INVALID_ARGUMENT for unknown or too wide metadata."""
    if meta is None:
        if len(po.metadata):
            raise invalid("the program declares no packet_out metadata")
        return po.payload
    widths = {fid: (name, bw) for fid, name, bw in meta.fields}
    values: dict[int, int] = {}
    for md in po.metadata:
        if md.metadata_id not in widths:
            raise invalid(f"packet_out has no metadata with id {md.metadata_id}")
        name, bw = widths[md.metadata_id]
        v = int.from_bytes(md.value, "big") if md.value else 0
        if v >> bw:
            raise invalid(f"packet_out metadata {name}: value does not fit in {bw} bits")
        values[md.metadata_id] = v
    hdr = 0
    for fid, _, bw in meta.fields:
        hdr = (hdr << bw) | values.get(fid, 0)
    return hdr.to_bytes(meta.nbytes, "big") + po.payload if meta.nbytes else po.payload

"""The p4_device_config bytes of a ForwardingPipelineConfig: either the bmv2 JSON itself or the
P4 tutorials' P4DeviceConfig message wrapping it (p4.tmp.P4DeviceConfig: 1 reassign bool,
2 extras message, 3 device_data bytes). Decoded from the protobuf wire format directly, so the
tutorials' generated module is not needed."""

from __future__ import annotations

from lanes.p4runtime.errors import invalid


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        if i >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7


def _fields(data: bytes) -> dict[int, bytes | int]:
    """Top-level fields of a protobuf message (last occurrence wins)."""
    out: dict[int, bytes | int] = {}
    i = 0
    while i < len(data):
        tag, i = _varint(data, i)
        num, wire = tag >> 3, tag & 7
        if num == 0:
            raise ValueError("field number 0")
        if wire == 0:
            out[num], i = _varint(data, i)
        elif wire == 2:
            n, i = _varint(data, i)
            if i + n > len(data):
                raise ValueError("truncated field")
            out[num] = data[i : i + n]
            i += n
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        if i > len(data):
            raise ValueError("truncated field")
    return out


def _looks_like_json(data: bytes) -> bool:
    return data.lstrip()[:1] == b"{"


def bmv2_json(device_config: bytes) -> str:
    """The bmv2 JSON text in p4_device_config (raw or P4DeviceConfig-wrapped)."""
    if not device_config:
        raise invalid("p4_device_config is empty: expected bmv2 JSON or a P4DeviceConfig message")
    data = device_config
    if not _looks_like_json(data):
        try:
            inner = _fields(data).get(3)
        except ValueError as e:
            raise invalid(
                f"p4_device_config is neither bmv2 JSON nor a P4DeviceConfig message ({e})"
            ) from None
        if not isinstance(inner, bytes) or not _looks_like_json(inner):
            raise invalid("p4_device_config: P4DeviceConfig without bmv2 JSON in device_data")
        data = inner
    try:
        return data.decode()
    except UnicodeDecodeError:
        raise invalid("p4_device_config: bmv2 JSON is not valid UTF-8") from None


def wrap(json_text: str) -> bytes:
    """A P4DeviceConfig message (reassign=true, device_data=JSON), as the P4 tutorials send."""
    data = json_text.encode()
    out = bytearray(b"\x08\x01\x1a")  # reassign: true; device_data: length-delimited
    n = len(data)
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out) + data

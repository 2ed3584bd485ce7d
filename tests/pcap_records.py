"""Classic pcap files for tests: write frames with chosen timestamps, read them back."""

from __future__ import annotations

import struct
from pathlib import Path

HEADER = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)


def pcap_bytes(frames: list[tuple[float, bytes]]) -> bytes:
    """A pcap stream of (timestamp in seconds, frame)."""
    out = bytearray(HEADER)
    for ts, frame in frames:
        sec, usec = int(ts), round((ts - int(ts)) * 1e6)
        out += struct.pack("<IIII", sec, usec, len(frame), len(frame)) + frame
    return bytes(out)


def read_frames(path: Path) -> list[bytes]:
    """The frames of a pcap file (an empty list for a file with only its header, or none). A
    last record cut short (a switch killed while writing it) is not a frame: it is left out."""
    if not path.exists():
        return []
    data = path.read_bytes()
    if len(data) < 24:
        return []
    assert struct.unpack("<I", data[:4])[0] == 0xA1B2C3D4, f"{path}: not a little-endian pcap"
    frames, at = [], 24
    while at + 16 <= len(data):
        n = struct.unpack("<I", data[at + 8 : at + 12])[0]
        if at + 16 + n > len(data):
            break
        frames.append(data[at + 16 : at + 16 + n])
        at += 16 + n
    return frames

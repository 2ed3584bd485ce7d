"""A packet generator and a packet sink made of XDP programs, loaded with the bpf() system call
from Python (ctypes), for bench/switch_xdp_pps.py.

`gen IFACE` sends one UDP frame over and over out of IFACE with BPF_PROG_RUN in live-frames mode
(a program returning XDP_TX, run by the kernel on a frame we give it, each result transmitted
with the driver's ndo_xdp_xmit): the mechanism of xdp-trafficgen, without a socket buffer per
frame. `sink IFACE` attaches (native XDP) a program that adds one to a counter and drops the
frame, and prints the counter. Each prints one JSON line per interval on stdout.

xdp-tools 1.3.1 (Debian 12) is not used: its BPF objects carry a tracepoint program for
`xdp_redirect_map_err`, a tracepoint newer kernels no longer have, so libbpf refuses to load
xdp-trafficgen and xdp-bench altogether ("failed to find kernel BTF type ID of
'xdp_redirect_map_err'")."""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import socket
import struct
import sys
import time

LIBC = ctypes.CDLL(None, use_errno=True)
SYS_BPF = 321  # x86_64
BPF_MAP_CREATE, BPF_MAP_LOOKUP_ELEM, BPF_PROG_LOAD, BPF_PROG_TEST_RUN, BPF_LINK_CREATE = 0, 1, 5, 10, 28
BPF_MAP_TYPE_ARRAY, BPF_PROG_TYPE_XDP, BPF_XDP = 2, 6, 37
BPF_F_TEST_XDP_LIVE_FRAMES = 1 << 1
XDP_FLAGS_DRV_MODE = 1 << 2
XDP_DROP, XDP_TX = 1, 3


def bpf(cmd: int, attr: bytearray) -> int:
    buf = (ctypes.c_char * len(attr)).from_buffer(attr)
    r = LIBC.syscall(SYS_BPF, cmd, buf, len(attr))
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, f"bpf({cmd}): {os.strerror(e)}")
    return r


def attr(*fields: tuple[int, str, int]) -> bytearray:
    a = bytearray(128)
    for off, fmt, v in fields:
        struct.pack_into(fmt, a, off, v)
    return a


def insn(code: int, dst: int = 0, src: int = 0, off: int = 0, imm: int = 0) -> bytes:
    return struct.pack("<BBhi", code, (src << 4) | dst, off, imm)


def load(insns: bytes) -> int:
    lic = ctypes.create_string_buffer(b"GPL")
    code = ctypes.create_string_buffer(insns, len(insns))
    a = attr((0, "I", BPF_PROG_TYPE_XDP), (4, "I", len(insns) // 8),
             (8, "Q", ctypes.addressof(code)), (16, "Q", ctypes.addressof(lic)), (68, "I", BPF_XDP))  # fmt: skip
    return bpf(BPF_PROG_LOAD, a)


def udp_frame(size: int, dst_mac: str, src_mac: str, src_ip: str, dst_ip: str) -> bytes:
    """An Ethernet frame of `size` bytes (without FCS) carrying UDP 9 -> 9, checksums right."""
    ip_len = size - 14
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, ip_len, 0, 0x4000, 64, 17, 0,
                     socket.inet_aton(src_ip), socket.inet_aton(dst_ip))  # fmt: skip
    s = sum(struct.unpack("!10H", ip))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    ip = ip[:10] + struct.pack("!H", ~s & 0xFFFF) + ip[12:]
    udp = struct.pack("!HHHH", 9, 9, ip_len - 20, 0) + bytes(ip_len - 28)
    eth = bytes.fromhex(dst_mac.replace(":", "")) + bytes.fromhex(src_mac.replace(":", "")) + b"\x08\x00"
    return eth + ip + udp


def gen(a: argparse.Namespace) -> None:
    prog = load(insn(0xB7, 0, 0, 0, XDP_TX) + insn(0x95))
    ifindex = socket.if_nametoindex(a.iface)
    frame = udp_frame(a.size, a.dst_mac, a.src_mac, a.src_ip, a.dst_ip)
    data = ctypes.create_string_buffer(frame, len(frame))
    ctx = ctypes.create_string_buffer(struct.pack("<6I", 0, len(frame), 0, ifindex, 0, 0), 24)
    run = attr((0, "I", prog), (8, "I", len(frame)), (16, "Q", ctypes.addressof(data)),
               (32, "I", a.batch), (40, "I", 24), (48, "Q", ctypes.addressof(ctx)),
               (64, "I", BPF_F_TEST_XDP_LIVE_FRAMES), (72, "I", 64))  # fmt: skip
    sent, t0 = 0, time.monotonic()
    next_report = t0 + a.interval
    while (now := time.monotonic()) < t0 + a.seconds:
        bpf(BPF_PROG_TEST_RUN, run)
        sent += a.batch
        if now >= next_report:
            print(json.dumps({"t": round(now - t0, 3), "sent": sent}), flush=True)
            next_report += a.interval
    print(json.dumps({"t": round(time.monotonic() - t0, 3), "sent": sent, "done": True}), flush=True)


def sink(a: argparse.Namespace) -> None:
    cmap = bpf(BPF_MAP_CREATE, attr((0, "I", BPF_MAP_TYPE_ARRAY), (4, "I", 4), (8, "I", 8), (12, "I", 1)))
    prog = load(
        insn(0xB7, 1, 0, 0, 0)  # r1 = 0
        + insn(0x63, 10, 1, -4)  # key = r1 (on the stack)
        + insn(0xBF, 2, 10)  # r2 = &key
        + insn(0x07, 2, 0, 0, -4)
        + insn(0x18, 1, 1, 0, cmap)  # r1 = the counter map
        + insn(0)
        + insn(0x85, 0, 0, 0, 1)  # r0 = bpf_map_lookup_elem(r1, r2)
        + insn(0x15, 0, 0, 2, 0)  # if r0 == NULL skip the add
        + insn(0xB7, 1, 0, 0, 1)
        + insn(0xDB, 0, 1, 0, 0)  # atomic *r0 += 1
        + insn(0xB7, 0, 0, 0, XDP_DROP)
        + insn(0x95)
    )
    ifindex = socket.if_nametoindex(a.iface)
    bpf(
        BPF_LINK_CREATE,
        attr((0, "I", prog), (4, "I", ifindex), (8, "I", BPF_XDP), (12, "I", XDP_FLAGS_DRV_MODE)),
    )
    key, value = ctypes.c_uint32(0), ctypes.c_uint64(0)
    look = attr((0, "I", cmap), (8, "Q", ctypes.addressof(key)), (16, "Q", ctypes.addressof(value)))
    print(json.dumps({"ready": True}), flush=True)
    t0 = time.monotonic()
    while True:  # until terminated: the link (and program) go with the process
        time.sleep(a.interval)
        bpf(BPF_MAP_LOOKUP_ELEM, look)
        print(json.dumps({"t": round(time.monotonic() - t0, 3), "dropped": value.value}), flush=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("iface")
    g.add_argument("--size", type=int, default=60, help="frame bytes without FCS (60: 64 B on the wire)")
    g.add_argument("--seconds", type=float, default=5)
    g.add_argument("--batch", type=int, default=1 << 16, help="frames per BPF_PROG_RUN call")
    g.add_argument("--interval", type=float, default=1)
    g.add_argument("--dst-mac", default="00:00:00:00:01:02")
    g.add_argument("--src-mac", default="00:00:00:00:01:01")
    g.add_argument("--src-ip", default="10.0.1.1")
    g.add_argument("--dst-ip", default="10.0.1.2")
    s = sub.add_parser("sink")
    s.add_argument("iface")
    s.add_argument("--interval", type=float, default=0.5)
    a = p.parse_args()
    try:
        gen(a) if a.cmd == "gen" else sink(a)
    except OSError as e:
        print(f"xdp_pktgen {a.cmd}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

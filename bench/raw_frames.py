"""Raw Ethernet frames on an interface, for the soak: `send IFACE DST SRC ETHERTYPE PPS SECONDS`
sends frames of that EtherType at a steady rate and prints how many it sent; `count IFACE
ETHERTYPE` counts arriving frames of that EtherType until SIGTERM and prints the count. Runs
with the system's python3 inside a host's namespace (no lanes import)."""

from __future__ import annotations

import signal
import socket
import sys
import time

ETH_P_ALL = 0x0003


def send(iface: str, dst: str, src: str, ethertype: int, pps: float, seconds: float) -> int:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    head = bytes.fromhex(dst.replace(":", "")) + bytes.fromhex(src.replace(":", "")) + ethertype.to_bytes(2, "big")
    sent, start = 0, time.monotonic()
    while (now := time.monotonic()) - start < seconds:
        due = int((now - start) * pps) + 1
        while sent < due:
            s.send(head + sent.to_bytes(8, "big") + bytes(38))
            sent += 1
        time.sleep(min(0.01, 1 / pps))
    return sent


def count(iface: str, ethertype: int) -> int:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ethertype))
    s.bind((iface, 0))
    s.settimeout(0.2)
    n, stop = 0, []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    while not stop:
        try:
            s.recv(2048)
            n += 1
        except TimeoutError:
            pass
    return n


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "send":
        print(send(a[1], a[2], a[3], int(a[4], 0), float(a[5]), float(a[6])), flush=True)
    else:
        print(count(a[1], int(a[2], 0)), flush=True)

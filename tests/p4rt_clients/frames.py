"""Send or receive raw Ethernet frames on an interface (run inside a test namespace).

frames.py send IFACE DST_MAC SRC_MAC ETHERTYPE COUNT [PAYLOAD_HEX]
frames.py recv IFACE ETHERTYPE COUNT TIMEOUT   -> one hex frame per line on stdout
"""

from __future__ import annotations

import socket
import sys
import time


def mac(s: str) -> bytes:
    return bytes.fromhex(s.replace(":", ""))


def main() -> int:
    cmd, iface = sys.argv[1], sys.argv[2]
    if cmd == "send":
        dst, src, etype, count = mac(sys.argv[3]), mac(sys.argv[4]), int(sys.argv[5], 0), int(sys.argv[6])
        payload = bytes.fromhex(sys.argv[7]) if len(sys.argv) > 7 else b"lanes-p4rt-test".ljust(46, b".")
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        s.bind((iface, 0))
        for _ in range(count):
            s.send(dst + src + etype.to_bytes(2, "big") + payload)
            time.sleep(0.01)
        return 0
    etype, count, timeout = int(sys.argv[3], 0), int(sys.argv[4]), float(sys.argv[5])
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(etype))
    s.bind((iface, 0))
    print("listening", flush=True)
    end = time.monotonic() + timeout
    got = 0
    while got < count and time.monotonic() < end:
        s.settimeout(max(0.01, end - time.monotonic()))
        try:
            frame, addr = s.recvfrom(65535)
        except TimeoutError:
            break
        if addr[2] == socket.PACKET_OUTGOING:
            continue
        print(frame.hex(), flush=True)
        got += 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

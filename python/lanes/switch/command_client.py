"""A client of a running switch's command port, lanes's line protocol: one simple_switch_CLI-style
command a line out, one JSON answer a line back. `lanes ctl`, the lab and the benchmarks use it."""

from __future__ import annotations

import json
import socket

from lanes.errors import LanesError


class CommandClient:
    """A connection to one switch's command port on 127.0.0.1."""

    def __init__(self, port: int, timeout: float = 10.0) -> None:
        try:
            self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        except OSError as e:
            raise LanesError(f"no switch on 127.0.0.1:{port}: {e.strerror or e}") from None
        self.rfile = self.sock.makefile("rb")

    def run(self, line: str) -> str:
        """Run one command; its output, or ValueError with the switch's one-line error."""
        self.sock.sendall(line.strip().encode() + b"\n")
        reply = self.rfile.readline()
        if not reply:
            raise LanesError("the switch closed the connection")
        r = json.loads(reply)
        if not r["ok"]:
            raise ValueError(r["error"])
        return str(r["out"])

    def close(self) -> None:
        self.rfile.close()
        self.sock.close()

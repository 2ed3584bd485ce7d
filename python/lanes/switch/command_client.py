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
        return str(self._reply(line)["out"])

    def create(self, line: str) -> int:
        """Run a command that creates an entry, member, group or node (table_add,
        act_prof_create_member, ...); the handle the switch gave it, or ValueError."""
        r = self._reply(line)
        handle = r.get("handle")
        if not isinstance(handle, int):
            raise LanesError(f"'{line.split()[0]}' created nothing (answered '{r['out']}')")
        return handle

    def _reply(self, line: str) -> dict[str, object]:
        self.sock.sendall(line.strip().encode() + b"\n")
        reply = self.rfile.readline()
        if not reply:
            raise LanesError("the switch closed the connection")
        r = json.loads(reply)
        if not r["ok"]:
            raise ValueError(r["error"])
        return dict(r)

    def close(self) -> None:
        self.rfile.close()
        self.sock.close()

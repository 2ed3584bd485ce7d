"""The switch's command port (bmv2's --thrift-port), listening on 127.0.0.1 only. It speaks two
protocols, told apart by a connection's first byte:

- lanes's line protocol (`lanes ctl`): one simple_switch_CLI-style command per line in, one JSON
  line out ({"ok": true, "out": ...} or {"ok": false, "error": ...});
- bmv2's Thrift API (simple_switch_CLI and other bmv2 clients): a binary Thrift message starts
  with 0x80, which no text command does (thrift_server)."""

from __future__ import annotations

import json
import socket
import socketserver
import sys
import threading
from collections.abc import Callable
from typing import Any

from lanes.switch.thrift_server import THRIFT_FIRST_BYTE


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        try:
            first = self.request.recv(1, socket.MSG_PEEK)
        except OSError:
            return
        if not first:
            return
        if first[0] == THRIFT_FIRST_BYTE:
            self._thrift()
            return
        run: Callable[[str], str] = self.server.run_command  # type: ignore[attr-defined]
        for raw in self.rfile:
            line = raw.decode(errors="replace").strip()
            if not line:
                continue
            try:
                reply = {"ok": True, "out": run(line)}
            except ValueError as e:
                reply = {"ok": False, "error": str(e)}
            self.wfile.write((json.dumps(reply) + "\n").encode())
            self.wfile.flush()

    def _thrift(self) -> None:
        processor = self.server.thrift  # type: ignore[attr-defined]
        if processor is None or isinstance(processor, str):
            why = processor or "bmv2's Thrift API is not served by this switch"
            print(f"lanes switch: thrift connection closed: {why}", file=sys.stderr, flush=True)
            return
        from lanes.switch.thrift_server import serve_connection

        serve_connection(self.request, processor)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def serve(
    port: int, run_command: Callable[[str], str], thrift: Any = None, addr: str = "127.0.0.1"
) -> socketserver.ThreadingTCPServer:
    """Start serving on addr:port in a background thread; returns the server (call shutdown() to
    stop). `thrift`: the Thrift processor for bmv2 clients, or why there is none (a string)."""
    server = _Server((addr, port), _Handler)
    server.run_command = run_command  # type: ignore[attr-defined]
    server.thrift = thrift  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, name="lanes-ctl-port", daemon=True).start()
    return server

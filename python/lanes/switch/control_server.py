"""The switch's command port (bmv2's --thrift-port): one simple_switch_CLI-style command per
line in, one JSON line out ({"ok": true, "out": ...} or {"ok": false, "error": ...}).
`lanes ctl` is its client. Listens on 127.0.0.1 only."""

from __future__ import annotations

import json
import socketserver
import threading
from collections.abc import Callable


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
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


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def serve(port: int, run_command: Callable[[str], str]) -> socketserver.ThreadingTCPServer:
    """Start serving in a background thread; returns the server (call shutdown() to stop)."""
    server = _Server(("127.0.0.1", port), _Handler)
    server.run_command = run_command  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, name="lanes-ctl-port", daemon=True).start()
    return server

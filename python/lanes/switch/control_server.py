"""The switch's command port (bmv2's --thrift-port), listening on 127.0.0.1 only. It speaks two
protocols, told apart by a connection's first byte:

- lanes's line protocol (`lanes ctl`): one simple_switch_CLI-style command per line in, one JSON
  line out ({"ok": true, "out": ...} or {"ok": false, "error": ...}; a command that created an
  entry, member, group or node adds "handle": N). A line is a command only
  once its newline has come: a client that leaves mid-line has sent nothing. A line longer
  than MAX_LINE bytes is refused whole, not gathered in memory;
- bmv2's Thrift API (simple_switch_CLI and other bmv2 clients): a binary Thrift message starts
  with 0x80, which no text command does (thrift/server.py)."""

from __future__ import annotations

import contextlib
import json
import socket
import socketserver
import sys
import threading
from collections.abc import Callable
from typing import Any

from lanes.switch.thrift.server import THRIFT_FIRST_BYTE

MAX_LINE = 1 << 16  # bytes; the longest table_add a program needs is a few hundred

# A command's output and the handle of what it created (None if nothing).
Answer = tuple[str, int | None]


def answer(run: Callable[[str], Answer], line: str) -> dict:
    """The reply to one command line: its output, or its error in one line. An exception other
    than the command's own ValueError (a fault in the switch) is answered the same way, so the
    client gets its answer and the connection stays usable."""
    try:
        out, handle = run(line)
        return {"ok": True, "out": out} if handle is None else {"ok": True, "out": out, "handle": handle}
    except ValueError as e:
        return {"ok": False, "error": " ".join(str(e).split()) or "refused"}
    except BaseException as e:  # noqa: BLE001 - also a Rust panic (pyo3's PanicException)
        if isinstance(e, KeyboardInterrupt | SystemExit):
            raise
        why = " ".join(f"{type(e).__name__}: {e}".split())
        print(
            f"lanes switch: command port: internal error in {line.split()[0]!r}: {why}",
            file=sys.stderr,
            flush=True,
        )
        return {"ok": False, "error": f"internal error: {why}"}


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
        with contextlib.suppress(OSError):  # the client went away before reading its answer
            self._lines()

    def _lines(self) -> None:
        run: Callable[[str], Answer] = self.server.run_command  # type: ignore[attr-defined]
        while True:
            raw = self.rfile.readline(MAX_LINE + 1)
            if not raw.endswith(b"\n"):
                if len(raw) <= MAX_LINE:
                    return  # end of input, with at most a line cut short: not a command
                ended = self._skip_line()
                reply = {"ok": False, "error": f"line longer than {MAX_LINE} bytes: refused"}
            else:
                line = raw.decode(errors="replace").strip()
                if not line:
                    continue
                ended, reply = True, answer(run, line)
            self.wfile.write((json.dumps(reply) + "\n").encode())
            self.wfile.flush()
            if not ended:
                return

    def _skip_line(self) -> bool:
        """Read past the rest of an overlong line; False if the input ended first."""
        while True:
            chunk = self.rfile.readline(MAX_LINE)
            if chunk.endswith(b"\n"):
                return True
            if not chunk:
                return False

    def _thrift(self) -> None:
        processor = self.server.thrift  # type: ignore[attr-defined]
        if processor is None or isinstance(processor, str):
            why = processor or "bmv2's Thrift API is not served by this switch"
            print(f"lanes switch: thrift connection closed: {why}", file=sys.stderr, flush=True)
            return
        from lanes.switch.thrift.server import serve_connection

        serve_connection(self.request, processor)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def serve(
    port: int, run_command: Callable[[str], Answer], thrift: Any = None, addr: str = "127.0.0.1"
) -> socketserver.ThreadingTCPServer:
    """Start serving on addr:port in a background thread; returns the server (call shutdown() to
    stop). `thrift`: the Thrift processor for bmv2 clients, or why there is none (a string)."""
    server = _Server((addr, port), _Handler)
    server.run_command = run_command  # type: ignore[attr-defined]
    server.thrift = thrift  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, name="lanes-ctl-port", daemon=True).start()
    return server

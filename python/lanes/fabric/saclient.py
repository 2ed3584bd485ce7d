"""SA clients with or without the path-record cache (bench/sa/sa_cache.c) on a live subnet: one
process per CA, each looking up a list of peer LIDs when told, answering OpenSM's Reports in
between. Commands go to every client at once and each answers with one JSON line."""

from __future__ import annotations

import json
import select
import subprocess
import time
from pathlib import Path
from typing import Any

from lanes.errors import LanesError
from lanes.fabric.live import LiveSubnet

SA_CACHE = Path(__file__).resolve().parents[3] / "build" / "bench" / "sa_cache"


class SaClients:
    def __init__(
        self,
        sub: LiveSubnet,
        hosts: list[str],
        lids: list[int],
        cache: bool,
        timeout_ms: int = 1000,
        binary: Path = SA_CACHE,
    ) -> None:
        if not binary.exists():
            raise LanesError(f"{binary} missing: run make setup")
        self.cache = cache
        self.procs: list[subprocess.Popen[str]] = []
        for i, h in enumerate(hosts):
            # Each client walks the peers from its own offset, as in bench/fabric_sa_load.py.
            k = i * 7 % len(lids)
            order = lids[k:] + lids[:k]
            self.procs.append(
                subprocess.Popen(
                    [str(binary), *([] if cache else ["--no-cache"]), str(timeout_ms), *map(str, order)],
                    # ibsim hands a request that arrives on QP1 unasked (OpenSM's Reports) only to
                    # a client it marks as an SM port; OpenSM must then run with
                    # ignore_other_sm (`-d 0`) so as not to take the clients for SMs.
                    env=dict(sub.sim_env, SIM_HOST=h, SIM_SET_ISSM="1"),
                    cwd=sub.outdir,  # umad2sim's fake sysfs goes there
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        try:
            self.ready = self._answers(60)
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> SaClients:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _answers(self, timeout: float) -> list[dict[str, Any]]:
        out = []
        deadline = time.monotonic() + timeout
        for p in self.procs:
            assert p.stdout is not None
            while not select.select([p.stdout], [], [], 0.1)[0]:
                if p.poll() is not None:
                    err = p.stderr.read().strip() if p.stderr else ""
                    raise LanesError(f"sa_cache exited (rc {p.returncode}): {err[:200]}")
                if time.monotonic() > deadline:
                    raise LanesError(f"sa_cache did not answer within {timeout:.0f} s")
            line = p.stdout.readline()
            if not line:
                raise LanesError(f"sa_cache closed its output (rc {p.poll()})")
            ans = json.loads(line)
            if "error" in ans:
                raise LanesError(f"sa_cache: {ans['error']}")
            out.append(ans)
        return out

    def command(self, text: str, timeout: float = 120) -> list[dict[str, Any]]:
        """Sends one command line to every client at once; their answers, in client order."""
        for p in self.procs:
            assert p.stdin is not None
            p.stdin.write(text + "\n")
            p.stdin.flush()
        return self._answers(timeout)

    def round(self, label: str) -> list[dict[str, Any]]:
        return self.command(f"round {label}")

    def verify(self) -> list[dict[str, Any]]:
        return self.command("verify")

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None and p.stdin is not None:
                try:
                    p.stdin.write("quit\n")
                    p.stdin.close()
                except OSError:
                    pass
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []


def totals(answers: list[dict[str, Any]]) -> dict[str, Any]:
    """One round's answers summed over the clients; `seconds` is the slowest client's."""
    keys = ("lookups", "queries", "answered", "failed", "hits", "notices", "invalidated")
    r: dict[str, Any] = {k: sum(a[k] for a in answers) for k in keys}
    r["seconds"] = max(a["seconds"] for a in answers)
    return r

"""A live subnet: ibsim with its console open and OpenSM as a daemon routing with a lanes engine
(the plugin) or one of its own, sweeping every second. Links and switches are taken down and
brought back through ibsim's console (Unlink / ReLink); every routing run OpenSM makes is checked
against the tables it dumps and traced with ibtracert. Processes are started and stopped by PID."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Self

from lanes.errors import LanesError
from lanes.fabric import native, opensm, plugin

# ibsim's console answers a command it cannot carry out with a '# ...' line at once.
_IBSIM_REFUSAL = re.compile(r"^#\s*(.*(?:not found|bad |can't|unknown).*)$", re.MULTILINE)
_EVENT = re.compile(r'^\s*(unlink|relink)\s+"?([^"\[\s]+)"?(?:\[(\d+)\])?\s*$', re.IGNORECASE)


def console_command(event: str) -> str:
    """'unlink s1-0[8]' / 'relink s2-1' -> ibsim's console syntax."""
    m = _EVENT.match(event)
    if not m:
        raise LanesError(f"bad event {event!r}: expected 'unlink NODE[PORT]', 'unlink NODE' or 'relink ...'")
    verb = "Unlink" if m.group(1).lower() == "unlink" else "ReLink"
    port = f"[{m.group(3)}]" if m.group(3) else ""
    return f'{verb} "{m.group(2)}"{port}'


class LiveSubnet:
    def __init__(
        self,
        net: str,
        engine: str,
        out: str,
        sweep: int = 1,
        tenant: str | None = None,
        extra_args: list[str] | None = None,
        log_flags: str = "0x43",
    ) -> None:
        for t in opensm.missing_tools():
            raise LanesError(f"not installed: {t} (run make setup)")
        opensm.check_engines(engine)
        self.engine, self.sweep, self.tenant = engine, sweep, tenant
        self.extra_args, self.log_flags = extra_args or [], log_flags
        self.outdir = Path(out).resolve()
        self.outdir.mkdir(parents=True, exist_ok=True)
        stale = [self.outdir / x for x in ("guid2lid", "guid2mkey", "opensm.log")]
        for old in [*self.outdir.glob("opensm-*.dump"), *self.outdir.glob("lfts-*.dump"), *stale]:
            old.unlink(missing_ok=True)
        self.net = str(self.outdir / "fabric.net")
        self.norm = native.normalize(net, self.net, None)
        self.sock = f"lanes-live-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.env = dict(os.environ, IBSIM_SOCKNAME=self.sock)
        self.sim_env = dict(
            self.env,
            LD_PRELOAD=opensm.UMAD2SIM,
            OSM_CACHE_DIR=str(self.outdir),
            OSM_TMP_DIR=str(self.outdir),
        )
        self.ibsim: subprocess.Popen[bytes] | None = None
        self.osm: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Self:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> None:
        n = self.norm
        log = open(self.outdir / "ibsim.log", "wb")  # noqa: SIM115 - handed to the process
        self.ibsim = subprocess.Popen(
            [
                *[opensm._tool("ibsim"), "-s"],
                *["-N", str(n["nodes"] + 16), "-S", str(n["switches"] + 16), "-P", str(n["ports"] + 64)],
                *["-L", str(max(30720, n["nodes"] + 64)), self.net],
            ],
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=self.env,
        )
        log.close()
        deadline = time.monotonic() + 60
        while b"Network simulator ready" not in (self.outdir / "ibsim.log").read_bytes():
            if self.ibsim.poll() is not None or time.monotonic() > deadline:
                raise LanesError("ibsim did not start (see ibsim.log)")
            time.sleep(0.05)
        cmd = [
            opensm._tool("opensm"),
            *["-D", self.log_flags, "-s", str(self.sweep), "-f", str(self.outdir / "opensm.log")],
            *["--dump_files_dir", str(self.outdir), "-R", self.engine],
            *self.extra_args,
        ]
        if plugin.uses_plugin(self.engine):
            cmd += ["-F", str(plugin.prepare(self.outdir, self.sim_env, tenant=self.tenant))]
        else:
            # The log is read while OpenSM runs: have it flushed line by line.
            conf = self.outdir / "opensm-flush.conf"
            conf.write_text("force_log_flush TRUE\n")
            cmd += ["-F", str(conf)]
        out = open(self.outdir / "opensm.out", "wb")  # noqa: SIM115 - handed to the process
        print(f"fabric: opensm -R {self.engine} (daemon) on {self.net} ...", file=sys.stderr)
        self.osm = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=self.sim_env,
            cwd=self.outdir,  # umad2sim's fake sysfs (sys-<pid>/) goes there
        )
        out.close()
        self.wait_subnet_up(0, timeout=600)

    def close(self) -> None:
        # OpenSM first: it may block on a simulator that is gone.
        for p in (self.osm, self.ibsim):
            if p is not None:
                opensm._stop(p)
        if self.ibsim is not None and self.ibsim.stdin:
            with contextlib.suppress(OSError):
                self.ibsim.stdin.close()

    def subnet_ups(self) -> int:
        log = self.outdir / "opensm.log"
        text = log.read_text(errors="replace") if log.exists() else ""
        return text.count("SUBNET UP")

    def ibsim_refusal(self, since: int) -> str | None:
        """ibsim's complaint about a console command, in its output after byte `since`."""
        with open(self.outdir / "ibsim.log", "rb") as fh:
            fh.seek(since)
            m = _IBSIM_REFUSAL.search(fh.read().decode(errors="replace"))
        return m.group(1).strip() if m else None

    def wait_subnet_up(self, seen: int, timeout: float = 120, ibsim_since: int | None = None) -> int:
        """Waits for the (seen+1)-th SUBNET UP in OpenSM's log and for its LFT dump; returns the count.
        With `ibsim_since`, a refusal ibsim printed after that offset ends the wait at once."""
        start = time.monotonic()
        while True:
            if self.osm is not None and self.osm.poll() is not None:
                raise LanesError(f"opensm exited (rc {self.osm.returncode}, see opensm.log)")
            if ibsim_since is not None:
                refusal = self.ibsim_refusal(ibsim_since)
                if refusal:
                    raise LanesError(f"ibsim refused the event: {refusal}")
            n = self.subnet_ups()
            if n > seen and (self.outdir / "opensm-lfts.dump").exists():
                time.sleep(0.3)  # the dumps follow the SUBNET UP line
                return n
            waited = time.monotonic() - start
            if waited > timeout:
                raise LanesError(f"no SUBNET UP within {timeout:.0f} s (see opensm.log)")
            time.sleep(0.1)

    def event(self, text: str, timeout: float = 120, traces: int = 8) -> dict[str, Any]:
        """Applies one console event, waits for OpenSM to re-route and checks the result."""
        if self.ibsim is None or self.ibsim.stdin is None:
            raise LanesError("the simulator is not running")
        before_ups = self.subnet_ups()
        before_routes = len(plugin.routings(self.outdir)) if plugin.uses_plugin(self.engine) else 0
        dump = self.outdir / "opensm-lfts.dump"
        before_dump = dump.stat().st_mtime_ns if dump.exists() else 0
        since = (self.outdir / "ibsim.log").stat().st_size
        self.ibsim.stdin.write((console_command(text) + "\n").encode())
        self.ibsim.stdin.flush()
        start = time.monotonic()
        while True:
            try:
                self.wait_subnet_up(before_ups, timeout, ibsim_since=since)
            except LanesError as e:
                raise LanesError(f"{text}: {e}") from None
            routed = not plugin.uses_plugin(self.engine) or len(plugin.routings(self.outdir)) > before_routes
            if routed and dump.stat().st_mtime_ns != before_dump:
                break
            before_ups = self.subnet_ups()
            if time.monotonic() - start > timeout:
                raise LanesError(f"{text}: OpenSM did not re-route within {timeout:.0f} s")
        return self.state(text, traces)

    def state(self, label: str, traces: int = 8) -> dict[str, Any]:
        """What OpenSM programmed now: its dump checked by lanes, sample routes traced."""
        dump = self.outdir / "opensm-lfts.dump"
        snap = self.outdir / f"lfts-{len(list(self.outdir.glob('lfts-*.dump')))}.dump"
        snap.write_bytes(dump.read_bytes())
        r: dict[str, Any] = {"event": label, "lfts_dump": str(snap), "subnet_ups": self.subnet_ups()}
        log = self.outdir / "opensm.log"
        why = opensm.fallback(log.read_text(errors="replace") if log.exists() else "", self.engine)
        if why:
            raise LanesError(f"{label}: {why}")
        r["lids"] = len(opensm.parse_dump_lids(snap))
        r["traces"] = opensm._traces(snap, traces, self.sim_env, self.outdir, [])
        if plugin.uses_plugin(self.engine):
            runs = plugin.routings(self.outdir)
            r["lanes"] = runs[-1] if runs else None
        return r

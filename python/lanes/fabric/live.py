"""A live subnet: ibsim with its console open and OpenSM as a daemon routing with a lanes engine
(the plugin) or one of its own, sweeping every second. Links and switches are taken down and
brought back through ibsim's console (Unlink / ReLink); every routing run OpenSM makes is checked
against the tables the switches hold and traced with ibtracert. Processes are started and stopped by
PID.

OpenSM logs lightly (errors and info: SUBNET UP, the engine that configured the tables) and writes
no routing dumps unless asked (`dumps=True`): its dumps (opensm-lid-matrix.dump, opensm-lfts.dump,
opensm.fdbs; gigabytes on an 11,664-node tree) are written before it declares the subnet up and
would be timed with every change. Without them the tables are read from the switches by SMP
(smpread) and the SMPs OpenSM sent are read from its console's MAD counters."""

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
from lanes.fabric import native, opensm, plugin, smpread

# ibsim's console answers a command it cannot carry out with a '# ...' line at once.
_IBSIM_REFUSAL = re.compile(r"^#\s*(.*(?:not found|bad |can't|unknown).*)$", re.MULTILINE)
_MADS_SENT = re.compile(r"QP0 MADs sent\s*:\s*(\d+)")
_SA_MADS = re.compile(r"SA MADs rcvd\s*:\s*(\d+)\s+SA MADs sent\s*:\s*(\d+)")
# OSM_LOG_ROUTING: the bit that makes OpenSM write its routing dumps after every sweep.
_ROUTING_DUMPS = 0x40
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
        log_flags: str | None = None,
        dumps: bool = False,
    ) -> None:
        """`log_flags` is OpenSM's -D; by default 0x03 (errors, info), or 0x43 with `dumps` (the
        routing dumps after every sweep, as opensm-lfts.dump is needed, e.g. for -R file)."""
        for t in opensm.missing_tools():
            raise LanesError(f"not installed: {t} (run make setup)")
        opensm.check_engines(engine)
        self.engine, self.sweep, self.tenant = engine, sweep, tenant
        self.log_flags = log_flags or ("0x43" if dumps else "0x03")
        self.dumps = bool(int(self.log_flags, 16) & _ROUTING_DUMPS)
        self.extra_args = extra_args or []
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
            # The console on stdin: its `status` command gives the MAD counters (SMPs sent).
            *["--console", "local"],
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
            stdin=subprocess.PIPE,
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
                if p.stdin:
                    with contextlib.suppress(OSError):
                        p.stdin.close()

    def log_text(self) -> str:
        log = self.outdir / "opensm.log"
        return log.read_text(errors="replace") if log.exists() else ""

    def subnet_ups(self) -> int:
        return self.log_text().count("SUBNET UP")

    def mads_sent(self, timeout: float = 60) -> int:
        """SMPs (QP0 MADs) OpenSM has sent since it started: its console's `status` answer."""
        return int(self._console_status(_MADS_SENT, timeout).group(1))

    def sa_mads(self, timeout: float = 60) -> dict[str, int]:
        """SA MADs (queries, subscriptions, report answers) OpenSM has received and sent since it
        started: its console's `status` answer, counted on OpenSM's side."""
        m = self._console_status(_SA_MADS, timeout)
        return {"received": int(m.group(1)), "sent": int(m.group(2))}

    def _console_status(self, pattern: re.Pattern[str], timeout: float) -> re.Match[str]:
        if self.osm is None or self.osm.stdin is None:
            raise LanesError("OpenSM is not running")
        out = self.outdir / "opensm.out"
        since = out.stat().st_size
        self.osm.stdin.write(b"status\n")
        self.osm.stdin.flush()
        deadline = time.monotonic() + timeout
        while True:
            with open(out, "rb") as fh:
                fh.seek(since)
                m = pattern.search(fh.read().decode(errors="replace"))
            if m:
                return m
            if self.osm.poll() is not None:
                raise LanesError(f"opensm exited (rc {self.osm.returncode}, see opensm.log)")
            if time.monotonic() > deadline:
                raise LanesError(f"OpenSM's console did not answer 'status' within {timeout:.0f} s")
            time.sleep(0.05)

    def ibsim_refusal(self, since: int) -> str | None:
        """ibsim's complaint about a console command, in its output after byte `since`."""
        with open(self.outdir / "ibsim.log", "rb") as fh:
            fh.seek(since)
            m = _IBSIM_REFUSAL.search(fh.read().decode(errors="replace"))
        return m.group(1).strip() if m else None

    def wait_subnet_up(self, seen: int, timeout: float = 120, ibsim_since: int | None = None) -> int:
        """Waits for the (seen+1)-th SUBNET UP in OpenSM's log (and, with dumps, for its LFT dump);
        returns the count. With `ibsim_since`, a refusal ibsim printed after that offset ends the
        wait at once."""
        start = time.monotonic()
        while True:
            if self.osm is not None and self.osm.poll() is not None:
                raise LanesError(f"opensm exited (rc {self.osm.returncode}, see opensm.log)")
            if ibsim_since is not None:
                refusal = self.ibsim_refusal(ibsim_since)
                if refusal:
                    raise LanesError(f"ibsim refused the event: {refusal}")
            n = self.subnet_ups()
            if n > seen and (not self.dumps or (self.outdir / "opensm-lfts.dump").exists()):
                return n
            waited = time.monotonic() - start
            if waited > timeout:
                raise LanesError(f"no SUBNET UP within {timeout:.0f} s (see opensm.log)")
            time.sleep(0.05)

    def startup(self) -> dict[str, Any]:
        """The first sweep: times from OpenSM's log (entering MASTER, routing started, tables
        configured, SUBNET UP) and the SMPs it sent up to now."""
        log = self.log_text()
        master = _first_stamp(log, "Entering MASTER state")
        configured = _first_stamp(log, "tables configured on all switches")
        up = _first_stamp(log, "SUBNET UP")
        # The first sweep alone: later sweeps' lines would stretch routing_times's spans.
        first = log[: log.find("SUBNET UP")] if "SUBNET UP" in log else log
        return {
            "event": "start",
            **opensm.routing_times(first),
            "master_to_subnet_up_seconds": _span(master, up),
            "configured_to_subnet_up_seconds": _span(configured, up),
            "smps_sent": self.mads_sent(),
            "engine_used": opensm.engine_used(log),
        }

    def apply(self, text: str, timeout: float = 120) -> dict[str, Any]:
        """Applies one console event and waits for OpenSM's re-route to reach SUBNET UP. Returns the
        times from the event (the console command's write) to the tables configured and to SUBNET UP
        (log stamps), the SMPs OpenSM sent meanwhile (console counters), the engine that routed and
        why it is not the one asked for, if so; the tables are not read (see `state`)."""
        if self.ibsim is None or self.ibsim.stdin is None:
            raise LanesError("the simulator is not running")
        before_ups = self.subnet_ups()
        before_routes = len(plugin.routings(self.outdir)) if plugin.uses_plugin(self.engine) else 0
        dump = self.outdir / "opensm-lfts.dump"
        before_dump = dump.stat().st_mtime_ns if self.dumps and dump.exists() else 0
        mads_before = self.mads_sent()
        since = (self.outdir / "ibsim.log").stat().st_size
        self.ibsim.stdin.write((console_command(text) + "\n").encode())
        self.ibsim.stdin.flush()
        at = _day_seconds(time.time())
        start = time.monotonic()
        while True:
            try:
                ups = self.wait_subnet_up(before_ups, timeout, ibsim_since=since)
            except LanesError as e:
                raise LanesError(f"{text}: {e}") from None
            routed = not plugin.uses_plugin(self.engine) or len(plugin.routings(self.outdir)) > before_routes
            if routed and (not self.dumps or dump.stat().st_mtime_ns != before_dump):
                break
            before_ups = ups
            if time.monotonic() - start > timeout:
                raise LanesError(f"{text}: OpenSM did not re-route within {timeout:.0f} s")
        smps = self.mads_sent() - mads_before
        log = self.log_text()
        up = _stamps(log, "SUBNET UP")[ups - 1]
        configured = [
            t
            for t in _stamps(log, "tables configured on all switches")
            if _span(at, t) is not None and _span(t, up) is not None
        ]
        r: dict[str, Any] = {
            "event": text,
            "subnet_ups": ups,
            "event_to_configured_seconds": _span(at, configured[-1]) if configured else None,
            "event_to_subnet_up_seconds": _span(at, up),
            "smps_sent": smps,
            "engine_used": opensm.engine_used(log),
        }
        why = opensm.fallback(log, self.engine)
        if why:
            r["fallback"] = why
        if plugin.uses_plugin(self.engine):
            runs = plugin.routings(self.outdir)
            r["lanes"] = runs[-1] if runs else None
        return r

    def console(self, command: str, answer: str, timeout: float = 30) -> str:
        """Sends one line to ibsim's console and returns its answer line (the first line after the
        command containing `answer`); a '# ...' complaint ends it with an error."""
        if self.ibsim is None or self.ibsim.stdin is None:
            raise LanesError("the simulator is not running")
        log = self.outdir / "ibsim.log"
        since = log.stat().st_size
        self.ibsim.stdin.write((command + "\n").encode())
        self.ibsim.stdin.flush()
        deadline = time.monotonic() + timeout
        while True:
            with open(log, "rb") as fh:
                fh.seek(since)
                text = fh.read().decode(errors="replace")
            for line in text.splitlines():
                if answer in line:
                    return line.strip()
                if line.startswith("# ") and not line.startswith("# Port"):
                    raise LanesError(f"ibsim refused {command!r}: {line[2:].strip()}")
            if time.monotonic() > deadline:
                raise LanesError(f"ibsim did not answer {command!r} within {timeout:.0f} s")
            time.sleep(0.02)

    def event(self, text: str, timeout: float = 120, traces: int = 8) -> dict[str, Any]:
        """Applies one console event, waits for OpenSM to re-route and checks the result."""
        timing = self.apply(text, timeout)
        return {**timing, **self.state(text, traces)}

    def state(self, label: str, traces: int = 8) -> dict[str, Any]:
        """What OpenSM programmed now: the switches' tables (read by SMP, or OpenSM's dump when it
        writes them) checked by lanes, sample routes traced."""
        snap = self.outdir / f"lfts-{len(list(self.outdir.glob('lfts-*.dump')))}.dump"
        if self.dumps:
            snap.write_bytes((self.outdir / "opensm-lfts.dump").read_bytes())
        else:
            smpread.read_tables(self.sim_env, self.outdir, snap)
        r: dict[str, Any] = {"event": label, "lfts_dump": str(snap), "subnet_ups": self.subnet_ups()}
        why = opensm.fallback(self.log_text(), self.engine)
        if why:
            raise LanesError(f"{label}: {why}")
        r["lids"] = len(opensm.parse_dump_lids(snap))
        r["traces"] = opensm._traces(snap, traces, self.sim_env, self.outdir, [])
        if plugin.uses_plugin(self.engine):
            runs = plugin.routings(self.outdir)
            r["lanes"] = runs[-1] if runs else None
        return r


def _day_seconds(t: float) -> float:
    """Wall-clock seconds since local midnight, as OpenSM stamps its log lines."""
    lt = time.localtime(t)
    return lt.tm_hour * 3600 + lt.tm_min * 60 + lt.tm_sec + (t % 1)


def _stamps(log: str, marker: str) -> list[float]:
    return [t for line in log.splitlines() if marker in line and (t := opensm._stamp(line)) is not None]


def _first_stamp(log: str, marker: str) -> float | None:
    found = _stamps(log, marker)
    return found[0] if found else None


def _span(a: float | None, b: float | None) -> float | None:
    """b - a in seconds across midnight; None for a missing stamp or b before a."""
    if a is None or b is None:
        return None
    d = b - a
    if d < -43200:
        d += 86400
    return round(d, 6) if d >= 0 else None

"""What every kind of lab run shares (the thesis's cases in run.py, network-aware scheduling in
lanes.nas): progress lines, the processes started in Mininet hosts, the checks before and during
a run, and the run directory."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Protocol

from lanes.emu.net import LabNet
from lanes.emu.topo import Topology
from lanes.errors import LanesError
from lanes.lab.traffic import PROTOCOLS


class RunSettings(Protocol):
    """What the shared checks read of a run's parameters (lab run's Params, nas's NasParams)."""

    case: str
    proto: str
    out: Path


class Node(Protocol):
    """A Mininet host (or switch) to start a process in."""

    def popen(self, cmd: list[str], **kw: Any) -> subprocess.Popen[bytes]: ...


def say(msg: str) -> None:
    """A progress line of a run, on stderr."""
    print(f"lab: {msg}", file=sys.stderr, flush=True)


class Procs:
    """Processes started inside Mininet hosts; stopped by PID (SIGINT first so iperf reports)."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []
        self.net: LabNet | None = None

    def start(self, node: Node, cmd: list[str], log: Path, **kw: object) -> subprocess.Popen[bytes]:
        with open(log, "w") as f:
            p = node.popen(cmd, stdout=f, stderr=subprocess.STDOUT, **kw)
        self.procs.append(p)
        if self.net is not None:
            self.net.track(p.pid, next((Path(c).name for c in cmd if "iperf" in c or "mpi" in c), cmd[0]))
        return p

    def stop(self, procs: list[subprocess.Popen[bytes]] | None = None, grace: float = 5.0) -> None:
        ps = [p for p in (procs if procs is not None else self.procs) if p.poll() is None]
        for p in ps:
            p.send_signal(signal.SIGINT)
        deadline = time.monotonic() + grace
        for p in ps:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def check_tools(p: RunSettings) -> None:
    """The tools a run needs are installed and its protocol is one the lab runs."""
    need = ["iperf", "tc", "ethtool", "stdbuf", "mnexec"] + (["mpiexec"] if p.case == "mpi" else [])
    missing = [t for t in need if shutil.which(t) is None]
    if missing:
        raise LanesError(f"missing tools: {', '.join(missing)} (run `make setup`)")
    if p.proto not in PROTOCOLS:
        raise LanesError(f"--proto must be {' or '.join(PROTOCOLS)}, got '{p.proto}'")


def clear_run_dir(out: Path) -> None:
    """Make `out` ready for a run: new, empty, or an earlier run's (whose files are replaced).
    A directory holding anything else is refused: a run never deletes what it did not write."""
    if out.exists() and not out.is_dir():
        raise LanesError(f"--out {out} is a file, not a directory")
    files = [f for f in out.glob("*") if f.is_file()] if out.exists() else []
    if files and not (out / "params.json").is_file():
        raise LanesError(f"--out {out} holds files that are not a lab run's: give a new or empty directory")
    out.mkdir(parents=True, exist_ok=True)
    for f in files:
        f.unlink()


def ping_all(topo: Topology, net: LabNet) -> None:
    """Every flow's and the MPI pair's hosts reach each other, or the run stops here."""
    pairs = [(f.src, f.dst) for f in topo.flows] + [topo.mpi_pair]
    for a, b in pairs:
        ip = topo.hosts[b].ip
        out = net.host(a).cmd(f"ping -n -c 3 -i 0.2 -W 1 {ip}")
        if " 0 received" in out or "received" not in out:
            raise LanesError(f"{a} cannot reach {b} ({ip}) through the network")


def check_switches(p: RunSettings, topo: Topology, net: LabNet, now: float) -> None:
    """Stop the run at once, saying which switch died and how, if a lanes switch is gone."""
    for s in topo.switches:
        proc = net.switch(s).proc
        code = proc.poll() if proc is not None else None
        if code is None:
            continue
        how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
        log = p.out / f"{s}.log"
        tail = log.read_text(errors="replace").strip().splitlines()[-3:] if log.exists() else []
        when = f"at t={now:.1f} s" if now >= 0 else "before the traffic started"
        raise LanesError(f"switch {s} died {when} ({how})" + (": " + " | ".join(tail) if tail else ""))

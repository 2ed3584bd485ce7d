"""`lanes lab sweep`: the thesis's matrix of runs (topology x case x algorithm x protocol), one
directory per cell, resumable: a cell whose summary.json is complete and was made with the same
settings is skipped, anything else is run again. Each run is a `lanes lab run` subprocess, so a
run that fails (or hangs past its time limit) costs that cell only; the sweep goes on."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from lanes import atomic
from lanes.emu.topo import TOPOLOGIES
from lanes.errors import LanesError
from lanes.interrupt import terminate_as_interrupt
from lanes.lab import machine, mpi
from lanes.lab.cases import CASES
from lanes.lab.thesis import THESIS_LINK_MBPS
from lanes.lab.traffic import PROTOCOLS

ALGS = ["no", "strict", "rlsp-drr"]  # the thesis's three (lanes.lab.cases knows more)
OVERHEAD_S = 25.0  # set-up, idle measurements and tear-down of one run (first guess; measured after)


@dataclass(frozen=True)
class Preset:
    name: str
    link_mbps: dict[str, float]
    duration_s: dict[str, float]  # per case: the whole run (runtime: three phases, proactive: two)
    mpi_iters: int
    topos: list[str] = field(default_factory=lambda: list(TOPOLOGIES))
    cases: list[str] = field(default_factory=lambda: list(CASES))
    algs: list[str] = field(default_factory=lambda: list(ALGS))
    protos: list[str] = field(default_factory=lambda: list(PROTOCOLS))
    note: str = ""


# the thesis's 90-s phases. Its runs were 180 s (iperf -t 180, the change at 90 s; RUNTIME switched
# prioritisation off at 180 s, the end of its run); our RUNTIME adds a third 90-s phase back at the fair
# share to time that change too, so 270 s. mpi runs until the ping-pong (100 round trips per size) is
# done, its duration only sets the load's head start
THESIS_S = {"runtime": 270.0, "proactive": 180.0, "mpi": 180.0}

PRESETS = {
    "thesis": Preset("thesis", dict(THESIS_LINK_MBPS), THESIS_S, 100,
                     note="the thesis's link rates (star 100, tree1 50, tree2 10 Mb/s) and 90-s phases"),
    "fast": Preset("fast", dict(THESIS_LINK_MBPS), dict.fromkeys(CASES, 12.0), 5,
                   note="smoke check: the thesis's link rates, 12-s runs, 5 ping-pongs per size"),
    "paper": Preset("paper", {"tree2": 10.0}, THESIS_S, 100, topos=["tree2"], cases=["proactive", "mpi"],
                    protos=["udp"], note="the paper's evaluation: tree2 at 10 Mb/s, PROACTIVE and MPI, UDP load"),
    # the highest rates at which this machine's runs stayed valid (bench/results/lab.md, sweep.md):
    # star at 400 Mb/s (not 1000: the senders reach ~480-600 Mb/s in total), tree1 at 100, tree2
    # at 50 (at 100 its seven switch processes take most of the two cores)
    "high-rate": Preset("high-rate", {"star": 400.0, "tree1": 100.0, "tree2": 50.0}, dict.fromkeys(CASES, 30.0), 100,
                        note="the highest rates this 2-core machine carries: star 400, tree1 100, tree2 50 Mb/s"),
}  # fmt: skip


@dataclass(frozen=True)
class Cell:
    topo: str
    case: str
    alg: str
    proto: str
    link_mbps: float
    duration_s: float
    mpi_iters: int
    repeat: int = 1  # 1-based
    mpi_timeout_s: float = mpi.TIMEOUT_S  # the run stops its ping-pong after this long (case mpi)

    @property
    def name(self) -> str:
        return f"{self.topo}-{self.case}-{self.alg}-{self.proto}"

    def run_dir(self, out: Path, repeats: int) -> Path:
        return out / self.name if repeats == 1 else out / self.name / f"r{self.repeat}"

    def nominal_s(self) -> float:
        """What the run itself lasts, for the time-left estimate (mpi: the load phase plus a
        guess of a few ms per round trip, idle and loaded; see open_ended)."""
        if self.case == "mpi":
            return min(3.0, self.duration_s / 4) + 0.02 * mpi.SIZES * self.mpi_iters * 2
        return self.duration_s

    @property
    def open_ended(self) -> bool:
        """Best effort's ping-pong under load: TCP retransmission timeouts behind a full FIFO make
        it last from minutes to its time limit (an hour at 10 Mb/s), so no guess is honest; the
        time left names its bound instead."""
        return self.case == "mpi" and self.alg == "no"


def _pick(what: str, given: str | None, allowed: list[str], default: list[str]) -> list[str]:
    if given is None:
        return default
    items = [x.strip() for x in given.split(",") if x.strip()]
    bad = [x for x in items if x not in allowed]
    if bad or not items:
        raise LanesError(f"--{what}: unknown {', '.join(bad) or '(empty)'} (expected some of {','.join(allowed)})")
    return items


def plan_cells(preset: Preset, topos: str | None = None, cases: str | None = None, algs: str | None = None,
               protos: str | None = None, repeats: int = 1, duration_s: float | None = None,
               mpi_iters: int | None = None, link_mbps: float | None = None,
               mpi_timeout_s: float = mpi.TIMEOUT_S) -> list[Cell]:  # fmt: skip
    """The cells of a sweep, in run order (topology, case, algorithm, protocol, repeat)."""
    if not 1 <= repeats <= 100:
        raise LanesError(f"--repeats must be 1 to 100, got {repeats}")
    if duration_s is not None and not 3 <= duration_s <= 3600:
        raise LanesError(f"--duration must be 3 to 3600 s, got {duration_s:g}")
    if mpi_iters is not None and not 1 <= mpi_iters <= 10_000:
        raise LanesError(f"--mpi-iters must be 1 to 10000, got {mpi_iters}")
    if not 10 <= mpi_timeout_s <= 86_400:
        raise LanesError(f"--mpi-timeout must be 10 to 86400 s, got {mpi_timeout_s:g}")
    ts = _pick("topos", topos, TOPOLOGIES, preset.topos)
    missing = [t for t in ts if t not in preset.link_mbps and link_mbps is None]
    if missing:
        raise LanesError(f"preset {preset.name} has no link rate for {', '.join(missing)} (give --link-mbps)")
    return [
        Cell(t, c, a, p, link_mbps or preset.link_mbps[t], duration_s or preset.duration_s[c],
             mpi_iters or preset.mpi_iters, r, mpi_timeout_s)
        for t in ts
        for c in _pick("cases", cases, CASES, preset.cases)
        for a in _pick("algs", algs, ALGS, preset.algs)
        for p in _pick("protos", protos, PROTOCOLS, preset.protos)
        for r in range(1, repeats + 1)
    ]  # fmt: skip


def is_complete(cell: Cell, run_dir: Path) -> bool:
    """A finished run of this very cell: summary.json parses, has its validity section and
    flows, and was made with the cell's settings (a run with other settings is redone). A ping-pong
    stopped at its time limit counts unless the cell now allows it longer."""
    try:
        s = json.loads((run_dir / "summary.json").read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(s, dict) or "validity" not in s or not s.get("flows"):
        return False
    q = s.get("params", {})
    same = all(q.get(k) == getattr(cell, k) for k in ("topo", "case", "alg", "proto")) and all(
        isinstance(q.get(k), int | float) and abs(q[k] - getattr(cell, k)) < 1e-9 for k in ("link_mbps", "duration_s")
    )
    if not same:
        return False
    if cell.case == "mpi":
        pp = s.get("mpi") or {}
        limit = q.get("mpi_timeout_s", mpi.TIMEOUT_S)
        whole = pp.get("complete", True) or (isinstance(limit, int | float) and limit >= cell.mpi_timeout_s)
        return bool(pp.get("latency_us")) and pp.get("iterations") == cell.mpi_iters and whole
    return True


def run_args(cell: Cell, run_dir: Path) -> list[str]:
    return [
        "lab", "run", "--topo", cell.topo, "--case", cell.case, "--alg", cell.alg, "--proto", cell.proto,
        "--link-mbps", f"{cell.link_mbps:g}", "--duration", f"{cell.duration_s:g}",
        "--mpi-iters", str(cell.mpi_iters), "--mpi-timeout", f"{cell.mpi_timeout_s:g}", "--out", str(run_dir),
    ]  # fmt: skip


def _lanes_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("lanes")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "lanes.cli"]


def loadavg() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return -1.0


def fmt_duration(s: float) -> str:
    s = max(0, round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


class Eta:
    """Time left: the remaining cells' nominal durations plus overhead, scaled by how the cells
    run so far compared with their own estimates. Open-ended cells count with their nominal
    time and do not move the scale (one hour-long ping-pong would make every 30-s cell look
    long); `text` adds their time limits as the bound."""

    def __init__(self) -> None:
        self.est = 0.0
        self.actual = 0.0

    def record(self, cell: Cell, wall_s: float) -> None:
        if not cell.open_ended:
            self.est += cell.nominal_s() + OVERHEAD_S
            self.actual += wall_s

    def left(self, cells: list[Cell]) -> float:
        factor = self.actual / self.est if self.est > 0 else 1.0
        return factor * sum(c.nominal_s() + OVERHEAD_S for c in cells)

    def text(self, cells: list[Cell]) -> str:
        """E.g. "~12m00s left (best effort's ping-pong: up to 1h00m more)"."""
        bound = sum(c.mpi_timeout_s for c in cells if c.open_ended)
        more = f" (best effort's ping-pong: up to {fmt_duration(bound)} more)" if bound else ""
        return f"~{fmt_duration(self.left(cells))} left{more}"


def say(msg: str) -> None:
    print(f"sweep: {msg}", file=sys.stderr, flush=True)


def _run_one(cell: Cell, run_dir: Path, log: Path, timeout_s: float) -> int:
    cmd = _lanes_cmd() + run_args(cell, run_dir)
    with open(log, "w") as f:
        proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            return proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            say(f"{cell.name}: no result after {timeout_s:.0f} s, stopping it")
            os.killpg(proc.pid, signal.SIGINT)  # the run's own clean-up runs on SIGINT
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            return -1
        except KeyboardInterrupt:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(timeout=60)
            raise


def write_plan(cells: list[Cell], out: Path, repeats: int, preset: Preset) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "sweep.json").write_text(json.dumps({"preset": asdict(preset), "repeats": repeats,
                                                "cells": [asdict(c) for c in cells]}, indent=1))  # fmt: skip


def sweep(cells: list[Cell], out: Path, repeats: int, preset: Preset) -> list[dict]:
    """Run the cells that are not complete yet; record each cell's wall time and load in
    cell.json beside its summary; return one record per cell."""
    write_plan(cells, out, repeats, preset)
    eta = Eta()
    records = []
    todo = [c for c in cells if not is_complete(c, c.run_dir(out, repeats))]
    skipped = len(cells) - len(todo)
    if skipped:
        say(f"{skipped} of {len(cells)} cells already complete, skipped")
    t_start = time.monotonic()
    with terminate_as_interrupt():  # `kill` of the sweep stops its current run cleanly too
        records += _run_cells(todo, out, repeats, skipped, len(cells), eta)
    say(f"[{len(cells)}/{len(cells)} done] {len(todo)} run in {fmt_duration(time.monotonic() - t_start)}, "
        f"{sum(not r['ok'] for r in records)} failed")  # fmt: skip
    return records


def _run_cells(todo: list[Cell], out: Path, repeats: int, skipped: int, total: int, eta: Eta) -> list[dict]:
    records = []
    for i, cell in enumerate(todo):
        say(f"[{skipped + i}/{total} done, {eta.text(todo[i:])}, load {loadavg():.1f}] "
            f"{cell.name} r{cell.repeat} at {cell.link_mbps:g} Mb/s, {cell.duration_s:g} s")  # fmt: skip
        rec = run_cell(cell, out, repeats)
        eta.record(cell, rec["wall_s"])
        records.append(rec)
    return records


def run_timeout_s(cell: Cell) -> float:
    """How long a cell's run may take before the sweep stops it: four times its estimate, plus its
    ping-pong's own time limit (mpi) or five minutes."""
    return 4 * (cell.nominal_s() + OVERHEAD_S) + (cell.mpi_timeout_s if cell.case == "mpi" else 300)


def log_path(cell: Cell, out: Path, repeats: int) -> Path:
    return out / f"{cell.name}{'' if repeats == 1 else f'-r{cell.repeat}'}.log"


def run_cell(cell: Cell, out: Path, repeats: int, extra: dict | None = None) -> dict:
    """Run one cell (local sweeps and Slurm tasks alike): its log beside the cell directories, its
    record (wall time, load, the machine; `extra` added) in cell.json; a failed run is cleaned up."""
    rd = cell.run_dir(out, repeats)
    rd.mkdir(parents=True, exist_ok=True)
    # the record of an earlier failed attempt goes first: `lanes lab run` refuses a directory
    # holding files that are not a run's
    (rd / "cell.json").unlink(missing_ok=True)
    t0, load0, started = time.monotonic(), loadavg(), time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    rc = _run_one(cell, rd, log_path(cell, out, repeats), run_timeout_s(cell))
    wall = time.monotonic() - t0
    ok = rc == 0 and is_complete(cell, rd)
    rec = {**asdict(cell), "ok": ok, "exit_code": rc, "wall_s": round(wall, 1), "started_utc": started,
           "load1_start": load0, "load1_end": loadavg(), "machine": machine.describe(), **(extra or {})}  # fmt: skip
    atomic.write_text(rd / "cell.json", json.dumps(rec, indent=1))
    if not ok:
        say(f"{cell.name} FAILED (exit {rc}); see its log; going on")
        subprocess.run(_lanes_cmd() + ["lab", "clean"], capture_output=True, check=False)
    return rec

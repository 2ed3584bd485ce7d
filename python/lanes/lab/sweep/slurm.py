"""`lanes lab sweep --slurm`: the cells still to run become Slurm job arrays, one task per cell
and repeat, each task `lanes lab sweep-task` for its cell on a node of its own. Cells are grouped
by the time limit they need (a job array has one limit): every cell of a case has the same one,
so a sweep makes one array per case length, and a 12-s cell does not ask for an MPI cell's hour.
The tasks write into the sweep directory, which must be on storage the nodes share, exactly as a
local sweep does. What was submitted is kept in OUT/slurm/jobs.json, so a sweep run again waits
for its cells still queued instead of submitting them twice."""

from __future__ import annotations

import json
import math
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path

from lanes import atomic
from lanes.errors import LanesError
from lanes.lab.sweep import slurm_queue
from lanes.lab.sweep.matrix import Cell, _lanes_cmd, is_complete, run_timeout_s, say

MARGIN_S = 120  # beyond the run's own limit: the task's start, the run's clean stop (<= 60 s), lab clean
JOB_NAME = "lanes-sweep"


@dataclass(frozen=True)
class SlurmOptions:
    partition: str | None = None
    max_parallel: int | None = None  # nodes at once over the whole sweep
    sbatch_args: list[str] = field(default_factory=list)
    poll_s: float = 30.0
    wait: bool = True


@dataclass
class Array:
    """One job array: cells of one time limit; job_id once submitted."""

    limit_min: int
    cells: list[Cell]
    job_id: str = ""


def key(cell: Cell) -> str:
    return f"{cell.name} r{cell.repeat}"


def limit_min(cell: Cell) -> int:
    """The task's time limit in whole minutes: the run's own limit (the local sweep's, after which
    the task stops the run cleanly) and MARGIN_S."""
    return math.ceil((run_timeout_s(cell) + MARGIN_S) / 60)


def group(cells: list[Cell]) -> list[Array]:
    """Arrays by time limit, shortest first, cells in plan order within each."""
    by: dict[int, list[Cell]] = {}
    for c in cells:
        by.setdefault(limit_min(c), []).append(c)
    return [Array(m, cs) for m, cs in sorted(by.items())]


def cell_args(cell: Cell) -> str:
    return (f"--topo {cell.topo} --case {cell.case} --alg {cell.alg} --proto {cell.proto} "
            f"--link-mbps {cell.link_mbps:g} --duration {cell.duration_s:g} --mpi-iters {cell.mpi_iters} "
            f"--mpi-timeout {cell.mpi_timeout_s:g} --repeat {cell.repeat}")  # fmt: skip


def script(arr: Array, out: Path, repeats: int, opts: SlurmOptions) -> str:
    """The sbatch script of one array (what --dry-run prints)."""
    out = out.resolve()
    spec = f"0-{len(arr.cells) - 1}" + (f"%{opts.max_parallel}" if opts.max_parallel else "")
    lines = [
        "#!/bin/bash",
        f"# lanes lab sweep: {len(arr.cells)} cell(s) of {out}, one task each, {arr.limit_min} min per task",
        "# (the run's own limit: 4 x its estimate + its ping-pong's limit or 5 min; then 2 min to start and stop)",
        f"#SBATCH --job-name={JOB_NAME}",
        f"#SBATCH --array={spec}",
        f"#SBATCH --time={arr.limit_min}",
        "#SBATCH --nodes=1",
        "#SBATCH --ntasks=1",
        "#SBATCH --exclusive",  # Mininet, switch processes at real-time priority: a node to itself
        "#SBATCH --no-requeue",  # a failed task is reported and resubmitted by the next sweep, not rerun blind
        f"#SBATCH --output={shlex.quote(str(out / 'slurm' / '%A_%a.out'))}",
    ]
    if opts.partition:
        lines.append(f"#SBATCH --partition={opts.partition}")
    lines += [f"#SBATCH {a}" for a in opts.sbatch_args]
    lines += ["set -eu", "cells=("]
    lines += [f'  "{cell_args(c)}"  # {i}: {key(c)}' for i, c in enumerate(arr.cells)]
    cmd = shlex.join(_lanes_cmd() + ["lab", "sweep-task", "--sweep-out", str(out), "--repeats", str(repeats)])
    lines += [
        ")",
        f"cmd=({cmd} ${{cells[$SLURM_ARRAY_TASK_ID]}})",
        "# the lab needs root: a job of root's, or a sudo rule for this command without a password",
        '[ "$(id -u)" -eq 0 ] || cmd=(sudo -n "${cmd[@]}")',
        'exec "${cmd[@]}"',
    ]
    return "\n".join(lines) + "\n"


def _jobs_file(out: Path) -> Path:
    return out / "slurm" / "jobs.json"


def load_jobs(out: Path) -> list[dict]:
    """Every array this sweep directory submitted: {job_id, limit_min, tasks: [cell key per index]}."""
    try:
        return list(json.loads(_jobs_file(out).read_text())["jobs"])
    except (OSError, ValueError, KeyError, TypeError):
        return []


def submit(arr: Array, out: Path, repeats: int, opts: SlurmOptions, after: str | None) -> str:
    d = out / "slurm"
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"array-{time.strftime('%Y%m%dT%H%M%S')}-{arr.limit_min}min.sh"
    atomic.write_text(path, script(arr, out, repeats, opts))
    cmd = ["sbatch", "--parsable"] + ([f"--dependency=afterany:{after}"] if after else []) + [str(path)]
    r = slurm_queue.run(cmd)
    if r.returncode != 0:
        raise LanesError(f"sbatch refused the sweep's array ({path}): {r.stderr.strip() or r.stdout.strip()}")
    job_id = r.stdout.strip().split(";")[0]  # "id" or "id;cluster"
    if not job_id.isdigit():
        raise LanesError(f"sbatch gave no job id: {r.stdout.strip()!r}")
    jobs = load_jobs(out) + [{"job_id": job_id, "limit_min": arr.limit_min, "script": path.name,
                              "submitted_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                              "tasks": [key(c) for c in arr.cells],
                              "args": [cell_args(c) for c in arr.cells]}]  # fmt: skip
    atomic.write_text(_jobs_file(out), json.dumps({"jobs": jobs}, indent=1))
    return job_id


def in_flight(out: Path, cells: list[Cell]) -> dict[str, tuple[str, int]]:
    """Cells of earlier submissions whose tasks are still queued or running, with the settings the
    cells have now (a task of other settings is left to end; its cell is submitted again): cell
    key -> task."""
    jobs = load_jobs(out)
    if not jobs:
        return {}
    q = slurm_queue.queued([j["job_id"] for j in jobs])
    if q is None:
        raise LanesError("squeue failed: cannot tell which of this sweep's cells are still queued (is Slurm up?)")
    now = {key(c): cell_args(c) for c in cells}
    found = {}
    for job in jobs:
        tasks, args = job["tasks"], job.get("args") or [None] * len(job["tasks"])
        for i, k in enumerate(tasks):
            if (job["job_id"], i) in q and k in now and args[i] in (None, now[k]):
                found[k] = (job["job_id"], i)
    return found


def slurm_sweep(cells: list[Cell], out: Path, repeats: int, opts: SlurmOptions, dry_run: bool) -> list[dict] | None:
    """Submit what is not complete nor queued already, wait for it (unless told not to) and return
    one record per waited-for cell; None when nothing was waited for."""
    from lanes.lab.sweep.slurm_wait import wait_for

    todo = [c for c in cells if not is_complete(c, c.run_dir(out, repeats))]
    if dry_run:
        arrays = group(todo)
        print(f"# {len(todo)} of {len(cells)} cells not complete, {len(arrays)} job array(s); a sweep run for real "
              "waits for those still queued from an earlier submission instead of submitting them again")  # fmt: skip
        for i, arr in enumerate(arrays):
            chained = " (sbatch --dependency=afterany:<the array before>, to hold --max-parallel)"
            print(f"\n# array {i + 1}{chained if i and opts.max_parallel else ''}\n{script(arr, out, repeats, opts)}", end="")
        return None
    queued = in_flight(out, cells)
    fresh = [c for c in todo if key(c) not in queued]
    say(f"{len(cells) - len(todo)} of {len(cells)} cells already complete, {len(todo) - len(fresh)} still queued "
        f"from before, {len(fresh)} to submit")  # fmt: skip
    waiting = dict(queued)
    after = None
    for arr in group(fresh):
        # chained arrays keep --max-parallel over the whole sweep (it bounds each array on its own)
        arr.job_id = submit(arr, out, repeats, opts, after if opts.max_parallel else None)
        after = arr.job_id
        waiting |= {key(c): (arr.job_id, i) for i, c in enumerate(arr.cells)}
        say(f"submitted job array {arr.job_id}: {len(arr.cells)} cell(s), {arr.limit_min} min each")
    if not opts.wait:
        ids = sorted({j for j, _ in waiting.values()}, key=int)
        say(f"not waiting: {len(waiting)} cell(s) in job(s) {', '.join(ids) or '-'}; run the same command again "
            "to wait for them and write the report")  # fmt: skip
        return None
    if not waiting:
        return []
    by_key = {key(c): c for c in cells}
    return wait_for({k: (by_key[k], t) for k, t in waiting.items() if k in by_key}, out, repeats, opts.poll_s)


def check_options(opts: SlurmOptions) -> None:
    if opts.max_parallel is not None and opts.max_parallel < 1:
        raise LanesError(f"--max-parallel must be at least 1, got {opts.max_parallel}")
    if not 0.1 <= opts.poll_s <= 3600:
        raise LanesError(f"--poll must be 0.1 to 3600 s, got {opts.poll_s:g}")
    for a in opts.sbatch_args:
        if not a.startswith("-") or "\n" in a:
            raise LanesError(f"--sbatch-arg must be one sbatch option (e.g. --account=NAME), got {a!r}")
    if opts.partition is not None and (not opts.partition or any(ch.isspace() for ch in opts.partition)):
        raise LanesError(f"--partition: not a partition name: {opts.partition!r}")

"""Waiting for a sweep's Slurm tasks: a progress line whenever the counts change (pending, running,
done, failed), and for each task that ended without a complete cell its Slurm state, node and the
tail of its logs. Interrupting the wait leaves the jobs queued; the same sweep run again waits for
them instead of submitting them twice."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path

from lanes import atomic
from lanes.interrupt import terminate_as_interrupt
from lanes.lab.sweep import slurm_queue
from lanes.lab.sweep.matrix import Cell, fmt_duration, is_complete, log_path, say
from lanes.lab.sweep.slurm_queue import Task, TaskState

TAIL_LINES = 6
QUIET_PROGRESS_S = 600  # the counts are said again after this long even if none changed


def tail(path: Path, n: int = TAIL_LINES) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()[-n:]
    except OSError:
        return []


def _record(cell: Cell, out: Path, repeats: int, task: Task, st: TaskState, ok: bool) -> dict:
    """The cell's record: the task's own cell.json when it wrote one, with how Slurm saw the task."""
    path = cell.run_dir(out, repeats) / "cell.json"
    try:
        rec = json.loads(path.read_text())
    except (OSError, ValueError):
        rec = {**asdict(cell), "ok": False}
    rec["ok"] = ok
    rec["slurm"] = {**rec.get("slurm", {}), "job": f"{task[0]}_{task[1]}", "state": st.state, "node": st.node,
                    "exit_code": st.exit_code}  # fmt: skip
    if path.parent.is_dir():
        atomic.write_text(path, json.dumps(rec, indent=1))
    return rec


def failure_text(cell: Cell, out: Path, repeats: int, task: Task, st: TaskState) -> str:
    """What a failed task says: its state, node, exit and the last lines of its two logs."""
    slurm_log = out / "slurm" / f"{task[0]}_{task[1]}.out"
    lines = [f"{cell.name} r{cell.repeat} FAILED: task {task[0]}_{task[1]} {st.state}"
             + (f" on {st.node}" if st.node else "") + (f", exit {st.exit_code}" if st.exit_code else "")]  # fmt: skip
    for log in (slurm_log, log_path(cell, out, repeats)):
        t = tail(log)
        if t:
            lines.append(f"  {log} ends:")
            lines += [f"    {x}" for x in t]
    return "\n".join(lines)


def wait_for(waiting: dict[str, tuple[Cell, Task]], out: Path, repeats: int, poll_s: float) -> list[dict]:
    """Poll until every waited-for task has left the queue; one record per cell."""
    jobs = sorted({t[0] for _, t in waiting.values()}, key=int)
    t0 = time.monotonic()
    last, said_at = None, 0.0
    finished: dict[str, dict] = {}
    try:
        with terminate_as_interrupt():
            while True:
                q = slurm_queue.queued(jobs)
                if q is None:
                    say("squeue gave no answer; asking again")
                    time.sleep(poll_s)
                    continue
                gone = [k for k, (_, t) in waiting.items() if t not in q and k not in finished]
                states = slurm_queue.ended(jobs) if any(not _complete(waiting[k][0], out, repeats) for k in gone) else {}
                for k in gone:
                    cell, task = waiting[k]
                    ok = _complete(cell, out, repeats)
                    st = states.get(task, TaskState("COMPLETED" if ok else "UNKNOWN"))
                    finished[k] = _record(cell, out, repeats, task, st, ok)
                    if not ok:
                        say(failure_text(cell, out, repeats, task, st))
                active = [q[t] for k, (_, t) in waiting.items() if k not in finished and t in q]
                # why tasks wait, as Slurm says it (a partition's limit or a node down shows here)
                why = sorted({s.reason for s in active if s.pending and s.reason not in ("", "None")})
                counts = (sum(s.pending for s in active), ", ".join(why), sum(not s.pending for s in active),
                          sum(r["ok"] for r in finished.values()), sum(not r["ok"] for r in finished.values()))  # fmt: skip
                now = time.monotonic()
                if counts != last or now - said_at >= QUIET_PROGRESS_S:
                    say(f"[slurm, jobs {','.join(jobs)}, {fmt_duration(now - t0)}] {counts[0]} pending"
                        f"{f' ({counts[1]})' if counts[1] else ''}, {counts[2]} running, {counts[3]} done, "
                        f"{counts[4]} failed")  # fmt: skip
                    last, said_at = counts, now
                if len(finished) == len(waiting):
                    break
                time.sleep(poll_s)
    except KeyboardInterrupt:
        say(f"stopped waiting; the jobs keep running (scancel {' '.join(jobs)} to stop them). Run the same "
            "command again to wait for them and write the report.")  # fmt: skip
        raise
    failed = sorted(k for k, r in finished.items() if not r["ok"])
    say(f"[{len(finished)}/{len(waiting)} tasks ended] in {fmt_duration(time.monotonic() - t0)}, {len(failed)} failed"
        + (f" ({', '.join(failed)}): run the same command again to resubmit only those" if failed else ""))  # fmt: skip
    return list(finished.values())


def _complete(cell: Cell, out: Path, repeats: int) -> bool:
    return is_complete(cell, cell.run_dir(out, repeats))

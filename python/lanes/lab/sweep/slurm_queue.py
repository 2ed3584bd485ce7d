"""What Slurm says about a sweep's array tasks: squeue for the tasks still queued or running, then
sacct (or, where a site keeps no accounting, scontrol while the controller still holds the job) for
how a finished task ended. A task is named by (array job id, task index)."""

from __future__ import annotations

import getpass
import re
import subprocess
from dataclasses import dataclass

from lanes.errors import LanesError

Task = tuple[str, int]
# squeue's states of a task that has not ended yet
ACTIVE = {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED",
          "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED", "RESV_DEL_HOLD"}  # fmt: skip


@dataclass(frozen=True)
class TaskState:
    state: str  # Slurm's word: PENDING, RUNNING, COMPLETED, FAILED, TIMEOUT, CANCELLED, NODE_FAIL, ...
    node: str = ""
    exit_code: str = ""  # "code:signal", as Slurm prints it
    reason: str = ""

    @property
    def pending(self) -> bool:
        return self.state == "PENDING"


def run(cmd: list[str], timeout_s: float = 60) -> subprocess.CompletedProcess:
    """A Slurm command; a missing one is a clear error, not a traceback."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except FileNotFoundError as e:
        raise LanesError(f"{cmd[0]} not found: Slurm's client commands must be on PATH for --slurm") from e
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 1, "", f"{cmd[0]} gave no answer in {timeout_s:g} s")


def _task_id(text: str) -> Task | None:
    """"12_3" -> ("12", 3); a pending range that squeue did not expand ("12_[3-5]") -> None."""
    m = re.fullmatch(r"(\d+)_(\d+)", text.strip())
    return (m.group(1), int(m.group(2))) if m else None


def parse_squeue(text: str) -> dict[Task, TaskState]:
    """Lines of `squeue -h -r -o '%i|%T|%N|%r'`."""
    out = {}
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) < 4 or (task := _task_id(parts[0])) is None:
            continue
        out[task] = TaskState(parts[1].strip(), node=parts[2].strip(), reason=parts[3].strip())
    return out


def queued(job_ids: list[str]) -> dict[Task, TaskState] | None:
    """The tasks of these jobs that have not ended; None when squeue could not be asked (the
    caller tries again rather than take every task for finished). The user's whole queue is
    listed and filtered: `squeue -j` fails outright once a job has left the controller."""
    if not job_ids:
        return {}
    r = run(["squeue", "-h", "-r", "-u", getpass.getuser(), "-o", "%i|%T|%N|%r"])
    if r.returncode != 0:
        return None
    ids = set(job_ids)
    return {t: s for t, s in parse_squeue(r.stdout).items() if t[0] in ids}


def parse_sacct(text: str) -> dict[Task, TaskState]:
    """Lines of `sacct -n -P -X -o JobID,State,ExitCode,NodeList`; "CANCELLED by 0" -> CANCELLED."""
    out = {}
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) < 4 or (task := _task_id(parts[0])) is None:
            continue
        out[task] = TaskState(parts[1].split()[0] if parts[1].strip() else "UNKNOWN", node=parts[3].strip(),
                              exit_code=parts[2].strip())  # fmt: skip
    return out


def _field(line: str, key: str) -> str:
    m = re.search(rf"(?:^|\s){key}=(\S*)", line)
    return m.group(1) if m else ""


def parse_scontrol(text: str) -> dict[Task, TaskState]:
    """Lines of `scontrol show job -o JOB` (one record per line)."""
    out = {}
    for line in text.splitlines():
        job, idx = _field(line, "ArrayJobId"), _field(line, "ArrayTaskId")
        if not job or not idx.isdigit():
            continue
        node = _field(line, "NodeList")
        out[(job, int(idx))] = TaskState(_field(line, "JobState") or "UNKNOWN", node="" if node == "(null)" else node,
                                         exit_code=_field(line, "ExitCode"), reason=_field(line, "Reason"))  # fmt: skip
    return out


def ended(job_ids: list[str]) -> dict[Task, TaskState]:
    """How the tasks of these jobs ended, as far as Slurm still knows."""
    if not job_ids:
        return {}
    r = run(["sacct", "-n", "-P", "-X", "-j", ",".join(job_ids), "-o", "JobID,State,ExitCode,NodeList"])
    states = parse_sacct(r.stdout) if r.returncode == 0 else {}
    missing = [j for j in job_ids if not any(t[0] == j for t in states)]
    for j in missing:  # no accounting on this cluster (or not yet): ask the controller
        r = run(["scontrol", "show", "job", "-o", j])
        if r.returncode == 0:
            states |= parse_scontrol(r.stdout)
    return states

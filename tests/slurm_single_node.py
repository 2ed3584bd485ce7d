"""A one-node Slurm cluster for tests: munged, slurmctld and slurmd started by PID with their own key,
socket, ports, state and spool in a temporary directory (no system service is used or touched),
stopped and removed afterwards, also when the test fails. Raises SlurmUnavailable, with the
reason, when Slurm cannot start here."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BINARIES = ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "scancel", "sinfo"]


class SlurmUnavailable(Exception):
    pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _config(d: Path, node: str) -> str:
    return f"""ClusterName=lanestest
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={d}/munge.socket
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
ProctrackType=proctrack/pgid
TaskPlugin=task/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/linear
ReturnToService=2
MinJobAge=3600
KillWait=30
MailProg=/bin/true
NodeName={node} NodeAddr=127.0.0.1 CPUs={os.cpu_count() or 1} State=UNKNOWN
PartitionName=lab Nodes={node} Default=YES MaxTime=INFINITE State=UP
"""


def _tail(path: Path) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").splitlines()[-5:])
    except OSError:
        return "(no log)"


def _wait(what: str, ready, procs: list[tuple[str, subprocess.Popen, Path]], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ready():
            return
        for name, p, log in procs:
            if p.poll() is not None:
                raise SlurmUnavailable(f"{name} exited ({p.returncode}): {_tail(log)}")
        time.sleep(0.2)
    raise SlurmUnavailable(f"{what} not ready after {timeout_s:g} s: " + "; ".join(_tail(lg) for _, _, lg in procs))


@contextmanager
def single_node_slurm() -> Iterator[dict[str, str]]:
    """Yields the environment (SLURM_CONF set) in which Slurm's commands reach this cluster."""
    if os.geteuid() != 0:
        raise SlurmUnavailable("the lab's tasks need root, and so do slurmd's")
    missing = [b for b in BINARIES if shutil.which(b) is None]
    if missing:
        raise SlurmUnavailable(f"not installed: {', '.join(missing)} (make setup installs slurm-wlm and munge)")
    d = Path(tempfile.mkdtemp(prefix="lanes-slurm-"))
    os.chmod(d, 0o755)
    procs: list[tuple[str, subprocess.Popen, Path]] = []
    env: dict[str, str] = {}
    try:
        for sub in ("state", "spool", "log"):
            (d / sub).mkdir()
        key = d / "munge.key"
        key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o400)
        node = socket.gethostname().split(".")[0]
        conf = d / "slurm.conf"
        conf.write_text(_config(d, node))
        env = {**os.environ, "SLURM_CONF": str(conf)}

        def start(name: str, cmd: list[str]) -> None:
            log = d / "log" / f"{name}.log"
            with open(log, "w") as f:
                procs.append((name, subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env), log))

        start("munged", ["munged", "-F", "-f", f"--socket={d}/munge.socket", f"--key-file={key}",
                         f"--pid-file={d}/munged.pid", f"--seed-file={d}/munged.seed"])  # fmt: skip
        _wait("munged", lambda: (d / "munge.socket").exists(), procs)
        start("slurmctld", ["slurmctld", "-D", "-f", str(conf)])
        start("slurmd", ["slurmd", "-D", "-f", str(conf), "-N", node])

        def idle() -> bool:
            r = subprocess.run(["sinfo", "-h", "-o", "%t"], env=env, capture_output=True, text=True, check=False)
            return r.returncode == 0 and r.stdout.strip() == "idle"

        _wait("the node", idle, procs)
        yield env
    finally:
        _drain(procs, env or None)
        stepds = [pid for _, p, _ in procs if p.args[0] == "slurmd" for pid in _descendants(p.pid)]
        for _, p, _ in reversed(procs):  # ours only, by the handles we started them with
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        for pid in stepds:  # a job step our slurmd started that outlived it
            try:
                if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"slurmstepd"):
                    os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(d, ignore_errors=True)


def _drain(procs: list, env: dict[str, str] | None, timeout_s: float = 90) -> None:
    """Cancel what is still queued on this (private) cluster and wait for its steps to end, so
    slurmd is not stopped under a running job."""
    if env is None or not any(name == "slurmctld" and p.poll() is None for name, p, _ in procs):
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        r = subprocess.run(["squeue", "-h", "-o", "%A"], env=env, capture_output=True, text=True, check=False)
        ids = sorted(set(r.stdout.split()))
        if r.returncode != 0 or not ids:
            return
        subprocess.run(["scancel", *ids], env=env, capture_output=True, check=False)
        time.sleep(1)


def _descendants(root: int) -> list[int]:
    parent = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
                parent[int(d.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    out, frontier = [], [root]
    while frontier:
        kids = [pid for pid, pp in parent.items() if pp in frontier]
        out += kids
        frontier = kids
    return out

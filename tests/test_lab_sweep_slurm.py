"""`lanes lab sweep --slurm` for real, on a one-node Slurm cluster of the test's own (munged,
slurmctld and slurmd started with a generated config in a temporary directory): a sweep of three
short cells as one job array, one task cancelled while its run is under way; the sweep reports
that task with its Slurm state, and run again submits that cell alone. A local sweep over the same
directory then finds every cell complete: the Slurm tasks wrote what a local sweep writes."""

from __future__ import annotations

import csv
import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from slurm_single_node import SlurmUnavailable, single_node_slurm
from test_lab_run import leftovers

REPO = Path(__file__).resolve().parents[1]
LANES = str(REPO / ".venv" / "bin" / "lanes")
ALGS = ["no", "strict", "rlsp-drr"]

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="Mininet and slurmd need root"),
]


@pytest.fixture(scope="module")
def slurm_env() -> Iterator[dict[str, str]]:
    try:
        cluster = single_node_slurm()
        env = cluster.__enter__()
    except SlurmUnavailable as e:
        pytest.skip(f"Slurm cannot start here: {e}")
    try:
        yield env
    finally:
        cluster.__exit__(None, None, None)


def sweep_cmd(out: Path, slurm: bool = True) -> list[str]:
    # the shortest cells a sweep allows: 3-s PROACTIVE runs on the star
    return [LANES, "lab", "sweep", "--preset", "fast", "--topos", "star", "--cases", "proactive", "--algs", ",".join(ALGS),
            "--protos", "udp", "--link-mbps", "50", "--duration", "3", "--out", str(out)] + (
            ["--slurm", "--poll", "0.5", "--sbatch-arg=--job-name=lanes-test"] if slurm else [])  # fmt: skip


def squeue(env: dict[str, str]) -> dict[str, str]:
    r = subprocess.run(["squeue", "-h", "-r", "-o", "%i %T"], env=env, capture_output=True, text=True, check=True)
    return dict(line.split() for line in r.stdout.splitlines())


def test_slurm_sweep_cancelled_task_is_resubmitted_alone(tmp_path: Path, slurm_env: dict[str, str]) -> None:
    p = subprocess.Popen(sweep_cmd(tmp_path), env=slurm_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    victim = tmp_path / "star-proactive-no-udp.log"  # task 0's run log: its run has started
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (victim.exists() and "RUNNING" in squeue(slurm_env).values()):
        time.sleep(0.2)
    assert victim.exists(), "the first task's run did not start"
    job = json.loads((tmp_path / "slurm" / "jobs.json").read_text())["jobs"][0]["job_id"]
    assert squeue(slurm_env).get(f"{job}_0") == "RUNNING"
    subprocess.run(["scancel", f"{job}_0"], env=slurm_env, check=True)
    _, err = p.communicate(timeout=150)
    assert p.returncode == 0, err[-3000:]
    assert f"star-proactive-no-udp r1 FAILED: task {job}_0 CANCELLED" in err, err[-3000:]
    assert "0 pending, 0 running, 2 done, 1 failed" in err and f"{job}_0.out ends:" in err
    rows = list(csv.DictReader((tmp_path / "report" / "sweep.csv").open()))
    assert sorted(r["alg"] for r in rows) == ["rlsp-drr", "strict"]
    node = socket.gethostname()
    for alg in ("strict", "rlsp-drr"):
        d = tmp_path / f"star-proactive-{alg}-udp"
        for f in ("summary.json", "series.csv", "summary.csv", "cell.json"):
            assert (d / f).is_file(), (alg, f)
        rec = json.loads((d / "cell.json").read_text())
        assert rec["ok"] and rec["slurm"]["state"] == "COMPLETED" and rec["slurm"]["job"].startswith(f"{job}_")
        assert rec["machine"]["node"] == node and rec["machine"]["cpus"] == os.cpu_count()
        assert rec["machine"]["kernel"] == os.uname().release and rec["load1_start"] >= 0
    first = {a: (tmp_path / f"star-proactive-{a}-udp" / "cell.json").read_bytes() for a in ("strict", "rlsp-drr")}

    again = subprocess.run(sweep_cmd(tmp_path), env=slurm_env, capture_output=True, text=True, timeout=150, check=False)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "2 of 3 cells already complete, 0 still queued from before, 1 to submit" in again.stderr
    jobs = json.loads((tmp_path / "slurm" / "jobs.json").read_text())["jobs"]
    assert len(jobs) == 2 and jobs[1]["tasks"] == ["star-proactive-no-udp r1"]
    assert "0 pending, 0 running, 1 done, 0 failed" in again.stderr
    assert {a: (tmp_path / f"star-proactive-{a}-udp" / "cell.json").read_bytes() for a in first} == first
    rows = {r["alg"]: r for r in csv.DictReader((tmp_path / "report" / "sweep.csv").open())}
    assert sorted(rows) == sorted(ALGS) and rows["no"]["nodes"] == node
    # thesis 7.4 on star (N = 1, M = 3): strict rewrites the two lower classes, the others nothing
    assert [float(rows[a]["control_writes"]) for a in ALGS] == [0, 2, 0]

    local = subprocess.run(sweep_cmd(tmp_path, slurm=False), capture_output=True, text=True, timeout=120, check=False)
    assert local.returncode == 0, local.stderr[-2000:]
    assert "3 of 3 cells already complete, skipped" in local.stderr
    assert squeue(slurm_env) == {} and leftovers() == []

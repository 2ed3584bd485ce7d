"""`lanes lab sweep --slurm` without a cluster: cells grouped into job arrays by the time limit they
need, the sbatch script (its options, and that each array index runs its own cell), Slurm's
squeue/sacct/scontrol output read back, cells still queued from an earlier submission not submitted
again, and a failed task reported with its Slurm state and the tail of its logs."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path

import pytest
from lanes.errors import LanesError
from lanes.lab.sweep import slurm as sweep_slurm
from lanes.lab.sweep import slurm_queue, slurm_wait
from lanes.lab.sweep.matrix import PRESETS, Cell, plan_cells
from lanes.lab.sweep.slurm import SlurmOptions, check_options, group, limit_min, script
from lanes.lab.sweep.slurm_queue import TaskState, parse_sacct, parse_scontrol, parse_squeue
from lanes.lab_cli import register


def fast(cases: str = "proactive", algs: str = "no,strict,rlsp-drr", **kw: object) -> list[Cell]:
    return plan_cells(PRESETS["fast"], topos="star", cases=cases, algs=algs, protos="udp", **kw)  # type: ignore[arg-type]


def test_cells_are_grouped_by_the_time_limit_they_need() -> None:
    cells = fast(cases="proactive,mpi", mpi_timeout_s=600)
    arrays = group(cells)
    # proactive: 4 x (12 s + 25 s) + 300 s + 120 s = 568 s -> 10 min; mpi: its ping-pong's 600 s instead of 300
    assert [(a.limit_min, [c.case for c in a.cells]) for a in arrays] == [
        (10, ["proactive"] * 3), (limit_min(cells[3]), ["mpi"] * 3)]  # fmt: skip
    assert limit_min(cells[3]) >= 10 + 5  # 300 s more for the ping-pong


def test_the_script_asks_for_a_node_of_its_own_and_its_limit(tmp_path: Path) -> None:
    arr = group(fast())[0]
    opts = SlurmOptions(partition="lab", max_parallel=2, sbatch_args=["--account=net", "--qos=short"])
    text = script(arr, tmp_path, 1, opts)
    for line in ["#SBATCH --array=0-2%2", "#SBATCH --time=10", "#SBATCH --exclusive", "#SBATCH --nodes=1",
                 "#SBATCH --partition=lab", "#SBATCH --account=net", "#SBATCH --qos=short", "#SBATCH --no-requeue",
                 f"#SBATCH --output={tmp_path.resolve()}/slurm/%A_%a.out"]:  # fmt: skip
        assert line + "\n" in text, line
    assert 'cmd=(sudo -n "${cmd[@]}")' in text  # not root: the site's sudo rule
    assert "%2" not in script(arr, tmp_path, 1, SlurmOptions())


def _task_args(text: str, index: int, tmp_path: Path) -> list[str]:
    """What the script runs for one array index (the exec replaced by a print)."""
    path = tmp_path / "job.sh"
    path.write_text(text.replace('exec "${cmd[@]}"', 'printf "%s\\n" "${cmd[@]}"'))
    env = {**os.environ, "SLURM_ARRAY_TASK_ID": str(index)}
    r = subprocess.run(["bash", str(path)], env=env, capture_output=True, text=True, check=True)
    return r.stdout.splitlines()


def test_each_array_index_runs_its_own_cell(tmp_path: Path) -> None:
    cells = fast(repeats=2)
    text = script(group(cells)[0], tmp_path / "sw", 2, SlurmOptions())
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    for i, cell in enumerate(cells):
        argv = _task_args(text, i, tmp_path)
        if os.geteuid() != 0:
            argv = argv[argv.index("sudo") + 2:]
        lab = argv.index("lab")
        args = parser.parse_args(argv[lab:])
        assert args.lab_command == "sweep-task" and args.sweep_out == (tmp_path / "sw").resolve()
        got = Cell(args.topo, args.case, args.alg, args.proto, args.link_mbps, args.duration, args.mpi_iters,
                   args.repeat, args.mpi_timeout)  # fmt: skip
        assert got == cell and args.repeats == 2


def test_squeue_sacct_and_scontrol_are_read_per_task() -> None:
    q = parse_squeue("12_0|RUNNING|n3|None\n12_1|PENDING||Resources\n12_[2-4%2]|PENDING||JobArrayTaskLimit\n")
    assert q == {("12", 0): TaskState("RUNNING", node="n3", reason="None"),
                 ("12", 1): TaskState("PENDING", reason="Resources")}  # fmt: skip
    a = parse_sacct("12_0|COMPLETED|0:0|n3\n12_1|CANCELLED by 0|0:15|n4\n12_2|TIMEOUT|0:0|n5\n")
    assert a[("12", 1)] == TaskState("CANCELLED", node="n4", exit_code="0:15") and a[("12", 2)].state == "TIMEOUT"
    s = parse_scontrol("JobId=14 ArrayJobId=12 ArrayTaskId=1 JobName=lanes-sweep JobState=FAILED "
                       "Reason=NonZeroExitCode ExitCode=1:0 NodeList=n4 BatchHost=n4\n"
                       "JobId=12 ArrayJobId=12 ArrayTaskId=2-3 JobState=PENDING NodeList=(null)\n")  # fmt: skip
    assert s == {("12", 1): TaskState("FAILED", node="n4", exit_code="1:0", reason="NonZeroExitCode")}


class FakeSlurm:
    """sbatch, squeue, sacct and scontrol as a cluster would answer them."""

    def __init__(self) -> None:
        self.queue: dict[tuple[str, int], str] = {}
        self.ended: dict[tuple[str, int], str] = {}
        self.submitted: list[str] = []

    def __call__(self, cmd: list[str], timeout_s: float = 60) -> subprocess.CompletedProcess:
        ok = lambda out: subprocess.CompletedProcess(cmd, 0, out, "")  # noqa: E731
        if cmd[0] == "sbatch":
            job = str(100 + len(self.submitted))
            self.submitted.append(Path(cmd[-1]).read_text())
            return ok(f"{job};cluster\n")
        if cmd[0] == "squeue":
            return ok("".join(f"{j}_{i}|{st}|{'n1' if st == 'RUNNING' else ''}|None\n" for (j, i), st in self.queue.items()))
        if cmd[0] == "sacct":
            return subprocess.CompletedProcess(cmd, 1, "", "Slurm accounting storage is disabled\n")
        if cmd[0] == "scontrol":
            return ok("".join(f"JobId=9 ArrayJobId={j} ArrayTaskId={i} JobState={st} ExitCode=0:15 NodeList=n2\n"
                              for (j, i), st in self.ended.items() if j == cmd[-1]))  # fmt: skip
        raise AssertionError(cmd)


def test_cells_still_queued_are_waited_for_not_submitted_again(tmp_path: Path, monkeypatch) -> None:
    fake = FakeSlurm()
    monkeypatch.setattr(slurm_queue, "run", fake)
    cells = fast()
    opts = SlurmOptions(wait=False)
    assert sweep_slurm.slurm_sweep(cells, tmp_path, 1, opts, dry_run=False) is None
    assert len(fake.submitted) == 1 and "#SBATCH --array=0-2\n" in fake.submitted[0]
    jobs = json.loads((tmp_path / "slurm" / "jobs.json").read_text())["jobs"]
    assert [(j["job_id"], j["tasks"]) for j in jobs] == [("100", [f"{c.name} r1" for c in cells])]
    fake.queue = {("100", 1): "RUNNING", ("100", 2): "PENDING"}  # task 0 ended without a result
    sweep_slurm.slurm_sweep(cells, tmp_path, 1, opts, dry_run=False)
    assert len(fake.submitted) == 2 and "#SBATCH --array=0-0\n" in fake.submitted[1]
    assert "star-proactive-no-udp r1\n" in fake.submitted[1] and "strict" not in fake.submitted[1]
    # the same cells at another length: the queued tasks (of the old length) do not stand for them
    fake.queue = {("101", 0): "PENDING", ("100", 1): "RUNNING"}
    longer = fast(duration_s=20)
    sweep_slurm.slurm_sweep(longer, tmp_path, 1, opts, dry_run=False)
    assert "#SBATCH --array=0-2\n" in fake.submitted[2] and "--duration 20 " in fake.submitted[2]


def test_max_parallel_chains_the_arrays_so_it_holds_for_the_sweep(tmp_path: Path, monkeypatch) -> None:
    fake = FakeSlurm()
    calls: list[list[str]] = []
    monkeypatch.setattr(slurm_queue, "run", lambda cmd, timeout_s=60: (calls.append(cmd), fake(cmd))[1])
    sweep_slurm.slurm_sweep(fast(cases="proactive,mpi"), tmp_path, 1, SlurmOptions(max_parallel=1, wait=False), False)
    sb = [c for c in calls if c[0] == "sbatch"]
    assert "--dependency=afterany:100" not in sb[0] and "--dependency=afterany:100" in sb[1]
    assert all("#SBATCH --array=0-2%1\n" in s for s in fake.submitted)


def test_a_cancelled_task_is_reported_with_its_state_and_log_tail(tmp_path: Path, monkeypatch, capsys) -> None:
    fake = FakeSlurm()
    monkeypatch.setattr(slurm_queue, "run", fake)
    monkeypatch.setattr(slurm_wait.time, "sleep", lambda s: None)
    cells = fast(algs="no,strict")
    (tmp_path / "slurm").mkdir()
    (tmp_path / "slurm" / "7_0.out").write_text("sweep: star-proactive-no-udp r1 on n2\nslurmstepd: CANCELLED\n")
    (tmp_path / "star-proactive-no-udp.log").write_text("lab: starting\nlab: interrupted, cleaning up\n")
    done = cells[1].run_dir(tmp_path, 1)
    done.mkdir()
    (done / "summary.json").write_text(json.dumps({
        "params": {"topo": "star", "case": "proactive", "alg": "strict", "proto": "udp", "link_mbps": cells[1].link_mbps,
                   "duration_s": cells[1].duration_s}, "flows": {"a": {}}, "validity": {"warnings": []}}))  # fmt: skip
    fake.ended = {("7", 0): "CANCELLED"}
    polls = iter([{("7", 0): "PENDING", ("7", 1): "PENDING"}, {("7", 1): "RUNNING"}, {}])
    real_squeue = fake.__call__

    def squeue_then(cmd: list[str], timeout_s: float = 60) -> subprocess.CompletedProcess:
        if cmd[0] == "squeue":
            fake.queue = next(polls)
            return subprocess.CompletedProcess(cmd, 0, "".join(
                f"{j}_{i}|{st}||{'ReqNodeNotAvail' if st == 'PENDING' else 'None'}\n" for (j, i), st in fake.queue.items()), "")
        return real_squeue(cmd, timeout_s)

    monkeypatch.setattr(slurm_queue, "run", squeue_then)
    recs = slurm_wait.wait_for({f"{c.name} r1": (c, ("7", i)) for i, c in enumerate(cells)}, tmp_path, 1, 0.0)
    assert [r["ok"] for r in recs] == [False, True]
    err = capsys.readouterr().err
    assert "star-proactive-no-udp r1 FAILED: task 7_0 CANCELLED on n2, exit 0:15" in err
    assert "slurmstepd: CANCELLED" in err and "lab: interrupted, cleaning up" in err
    assert "2 pending (ReqNodeNotAvail), 0 running, 0 done, 0 failed" in err
    assert "0 pending, 0 running, 1 done, 1 failed" in err and "resubmit only those" in err
    assert not (cells[0].run_dir(tmp_path, 1) / "cell.json").exists()  # no directory of its own: nothing written
    assert json.loads((done / "cell.json").read_text())["slurm"]["state"] == "COMPLETED"


@pytest.mark.parametrize("opts", [SlurmOptions(max_parallel=0), SlurmOptions(poll_s=0), SlurmOptions(partition="a b"),
                                  SlurmOptions(sbatch_args=["account=x"])])  # fmt: skip
def test_bad_slurm_options_are_lanes_errors(opts: SlurmOptions) -> None:
    with pytest.raises(LanesError):
        check_options(opts)


def test_a_missing_slurm_command_is_a_lanes_error(monkeypatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(LanesError, match="squeue not found"):
        slurm_queue.queued(["1"])

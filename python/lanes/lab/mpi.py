"""The MPI case: our ping-pong (lanes/lab/mpi/pingpong.c, built by `make setup`) between the
high pair, started with MPICH's mpiexec inside the first host; the second rank is launched
through mnlaunch.sh, which enters the Mininet host with mnexec (no sshd). UCX is held to TCP
on the hosts' Mininet interfaces so the messages cross the emulated network, not shared memory."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from lanes.errors import LanesError

HERE = Path(__file__).resolve().parent / "mpi"
REPO = Path(__file__).resolve().parents[3]
BINARY = REPO / "build" / "lab" / "pingpong"
MAX_BYTES = 16384
ITERATIONS = 100
WARMUP_ROUNDS = 5  # pingpong.c's WARMUP: untimed round trips before each size's timed ones
TIMEOUT_S = 1800.0  # default limit on a run's ping-pong (--mpi-timeout)


def binary(out: Path) -> Path:
    if BINARY.exists() and BINARY.stat().st_mtime >= (HERE / "pingpong.c").stat().st_mtime:
        return BINARY
    if shutil.which("mpicc") is None:
        raise LanesError("the MPI ping-pong is not built and mpicc is missing (run `make setup`)")
    b = out / "pingpong"
    r = subprocess.run(
        ["mpicc", "-O2", "-o", str(b), str(HERE / "pingpong.c")], capture_output=True, text=True, check=False
    )
    if r.returncode != 0:
        raise LanesError(f"mpicc failed: {r.stderr.strip().splitlines()[-1:]}")
    return b


def start(net, topo, out: Path, procs, iterations: int = ITERATIONS) -> subprocess.Popen:
    a, b = topo.mpi_pair
    hosts_file = out / "mpi_hosts.txt"
    hosts_file.write_text(
        "".join(f"{h.ip} {net.host(n).pid} {net.host(n).defaultIntf().name}\n" for n, h in topo.hosts.items())
    )
    ha = net.host(a)
    dev = ha.defaultIntf().name
    env = {**os.environ, "LANES_MPI_HOSTS": str(hosts_file), "UCX_TLS": "tcp,self", "UCX_NET_DEVICES": dev}
    cmd = [
        "mpiexec", "-genvnone", "-launcher", "ssh", "-launcher-exec", str(HERE / "mnlaunch.sh"),
        "-iface", dev, "-hosts", f"{topo.hosts[a].ip},{topo.hosts[b].ip}", "-n", "2", "-ppn", "1",
        str(binary(out)), str(MAX_BYTES), str(iterations),
    ]  # fmt: skip
    return procs.start(ha, cmd, out / "mpi.txt", env=env)


def finished(out: Path) -> bool:
    path = out / "mpi.txt"
    return path.exists() and any(line.startswith(f"{MAX_BYTES} ") for line in path.read_text().splitlines())


SIZES = MAX_BYTES.bit_length()  # 1 B, 2 B, ... MAX_BYTES


def _results(out: Path) -> list[list[str]]:
    """The ping-pong's result lines so far: [size, avg_us, min_us, max_us]."""
    path = out / "mpi.txt"
    lines = path.read_text().splitlines() if path.exists() else []
    return [f for f in (ln.split() for ln in lines) if len(f) == 4 and f[0].isdigit()]


def progress(out: Path) -> str:
    """How far the running ping-pong is, for the progress line: sizes done and the last result."""
    rows = _results(out)
    if not rows:
        return f"ping-pong 0 of {SIZES} sizes"
    return f"ping-pong {len(rows)} of {SIZES} sizes, {rows[-1][0]} B at {float(rows[-1][1]) / 1000:.3g} ms"


def collect(out: Path, iterations: int = ITERATIONS) -> dict:
    path = out / "mpi.txt"
    rows = _results(out)
    lat = {f[0]: float(f[1]) for f in rows}
    mx = {f[0]: float(f[3]) for f in rows}
    if not lat:
        tail = path.read_text().strip().splitlines()[-3:] if path.exists() else []
        raise LanesError(f"the MPI ping-pong gave no results: {' | '.join(tail)}")
    # incomplete when the run stopped it before its largest size
    return {"latency_us": lat, "max_us": mx, "iterations": iterations, "complete": str(MAX_BYTES) in lat}


def payload_mbps(latency_us: dict[str, float], iterations: int, end_s: float, a: float, b: float) -> float:
    """The ping-pong's payload rate each way over [a, b] (run seconds), from its results alone:
    the sizes laid back to back, each at its mean round trip (warm-up rounds included), the last
    ending at end_s, when mpiexec exited. Each round trip carries the size once each way."""
    if b <= a:
        return 0.0
    carried, t, rounds = 0.0, end_s, WARMUP_ROUNDS + iterations
    for size in sorted(latency_us, key=int, reverse=True):
        took = rounds * latency_us[size] * 1e-6
        if took > 0:
            overlap = max(0.0, min(t, b) - max(t - took, a))
            carried += overlap / took * rounds * int(size)
        t -= took
    return carried * 8 / (b - a) / 1e6

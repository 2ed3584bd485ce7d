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
TIMEOUT_S = 1800


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


def collect(out: Path, iterations: int = ITERATIONS) -> dict:
    path = out / "mpi.txt"
    lat: dict[str, float] = {}
    mx: dict[str, float] = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        f = line.split()
        if len(f) == 4 and f[0].isdigit():
            lat[f[0]] = float(f[1])
            mx[f[0]] = float(f[3])
    if not lat:
        tail = path.read_text().strip().splitlines()[-3:] if path.exists() else []
        raise LanesError(f"the MPI ping-pong gave no results: {' | '.join(tail)}")
    return {"latency_us": lat, "max_us": mx, "iterations": iterations}

"""Starting and stopping a `lanes switch` process for the benchmarks and fuzzers: a free loopback
port, waiting until the switch listens (its command port, or its gRPC port) while checking it did
not die, and stopping it by its PID (SIGTERM, then SIGKILL after a grace period)."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

REPO = Path(__file__).resolve().parent.parent
LANES = str(REPO / ".venv" / "bin" / "lanes")


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on (the kernel's choice)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_tcp(port: int, p: subprocess.Popen, timeout: float = 30.0, host: str = "127.0.0.1") -> None:
    """Until something accepts on host:port; RuntimeError if `p` exits or `timeout` passes first."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((host, port), timeout=1).close()
            return
        except OSError:
            if p.poll() is not None:
                raise RuntimeError(
                    f"the switch exited with {p.returncode} before listening on {port}"
                ) from None
            if time.monotonic() > deadline:
                raise RuntimeError(f"the switch did not listen on {port} within {timeout:g} s") from None
            time.sleep(0.1)


def wait_grpc(addr: str, p: subprocess.Popen, timeout: float = 30.0) -> None:
    """Until a gRPC channel to `addr` is ready (the switch's readiness signal, as bmv2's)."""
    import grpc  # only the P4Runtime benchmarks need it

    ch = grpc.insecure_channel(addr)
    try:
        grpc.channel_ready_future(ch).result(timeout=timeout)
    except grpc.FutureTimeoutError:
        why = f"exited with {p.returncode}" if p.poll() is not None else f"not ready within {timeout:g} s"
        raise RuntimeError(f"the switch's gRPC server on {addr}: {why}") from None
    finally:
        ch.close()


def stop(p: subprocess.Popen, grace: float = 10.0) -> None:
    """SIGTERM, and SIGKILL if the process has not exited after `grace` seconds; reaped either way."""
    if p.poll() is None:
        p.terminate()
    try:
        p.wait(grace)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


@contextmanager
def running(
    args: list[str],
    *,
    tcp_port: int | None = None,
    grpc_addr: str | None = None,
    out: IO | int = subprocess.DEVNULL,
    prefix: tuple[str, ...] = (),
) -> Iterator[subprocess.Popen]:
    """`lanes ARGS...` (after `prefix`, e.g. `ip netns exec NS`), ready once it listens on
    `tcp_port` and/or serves gRPC on `grpc_addr`; stopped on exit, also on failure."""
    p = subprocess.Popen([*prefix, LANES, *args], stdout=out, stderr=subprocess.STDOUT)
    try:
        if grpc_addr is not None:
            wait_grpc(grpc_addr, p)
        if tcp_port is not None:
            wait_tcp(tcp_port, p)
        yield p
    finally:
        stop(p)


@contextmanager
def p4runtime_switch(
    *extra: str, out: IO | int = subprocess.DEVNULL
) -> Iterator[tuple[str, int, subprocess.Popen]]:
    """A switch without ports or program serving P4Runtime on loopback: (gRPC address, command
    port, process). `extra`: options after '--' (target options)."""
    gport, cport = free_port(), free_port()
    addr = f"127.0.0.1:{gport}"
    args = ["switch", "--no-p4", "--thrift-port", str(cport), "--", "--grpc-server-addr", addr, *extra]
    with running(args, grpc_addr=addr, out=out) as p:
        yield addr, cport, p


@contextmanager
def command_port_switch(
    program: Path | None, *extra: str, out: IO | int = subprocess.DEVNULL
) -> Iterator[tuple[int, subprocess.Popen]]:
    """A switch without P4Runtime running `program` (None: no program), ready on its command
    port: (command port, process). `extra`: more `lanes switch` options."""
    port = free_port()
    args = ["switch", str(program) if program else "--no-p4", "--no-grpc", "--thrift-port", str(port), *extra]
    with running(args, tcp_port=port, out=out) as p:
        yield port, p

"""Where the command port (bmv2's Thrift API and `lanes ctl`) listens: 127.0.0.1 unless
`--thrift-addr` says otherwise, and then a one-line warning that it has no authentication. Run
inside a network namespace the test creates (with a veth pair of its own), removed after."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from netns import LANES, is_root

ADDR = "10.250.0.1"
needs_root = pytest.mark.skipif(not is_root(), reason="needs root for a network namespace")


@pytest.fixture
def ns() -> Iterator[str]:
    name = f"lanes-thr-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        for cmd in (
            ["ip", "link", "set", "lo", "up"],
            ["ip", "link", "add", "v0", "type", "veth", "peer", "name", "v1"],
            ["ip", "addr", "add", f"{ADDR}/24", "dev", "v0"],
            ["ip", "link", "set", "v0", "up"],
            ["ip", "link", "set", "v1", "up"],
        ):
            subprocess.run(["ip", "netns", "exec", name, *cmd], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


def reaches(ns: str, addr: str, port: int) -> bool:
    code = f"import socket; socket.create_connection(({addr!r}, {port}), timeout=2).close()"
    r = subprocess.run(["ip", "netns", "exec", ns, "python3", "-c", code], capture_output=True)
    return r.returncode == 0


@contextmanager
def switch_in(ns: str, log: Path, port: int, *extra: str) -> Iterator[None]:
    with open(log, "w") as out:
        p = subprocess.Popen(
            [
                "ip",
                "netns",
                "exec",
                ns,
                LANES,
                "switch",
                "--no-p4",
                "--no-grpc",
                "--thrift-port",
                str(port),
                *extra,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 30
        while "ctl on" not in log.read_text():
            if p.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"switch did not start: {log.read_text()}")
            time.sleep(0.1)
        yield
    finally:
        p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


@needs_root
def test_by_default_the_port_is_on_loopback_only_and_no_warning(ns: str, tmp_path: Path) -> None:
    log = tmp_path / "switch.log"
    with switch_in(ns, log, 9090):
        assert reaches(ns, "127.0.0.1", 9090)
        assert not reaches(ns, ADDR, 9090), "the command port answered on a non-loopback address"
    assert "warning" not in log.read_text()


@needs_root
def test_another_address_is_served_with_a_one_line_warning(ns: str, tmp_path: Path) -> None:
    log = tmp_path / "switch.log"
    with switch_in(ns, log, 9090, "--thrift-addr", "0.0.0.0"):
        assert reaches(ns, ADDR, 9090)
    warnings = [line for line in log.read_text().splitlines() if "warning" in line]
    assert warnings == [
        "lanes switch: warning: the command port 0.0.0.0:9090 has no authentication (as bmv2's "
        "Thrift port): anyone who reaches it can rewrite every table"
    ]


def test_an_address_that_cannot_be_bound_is_one_line_and_exits_non_zero() -> None:
    r = subprocess.run(
        [LANES, "switch", "--no-p4", "--no-grpc", "--thrift-port", "0", "--thrift-addr", "256.1.1.1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode != 0
    err = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(err) == 1 and err[0].startswith("lanes: error: cannot listen on 256.1.1.1:0"), r.stderr
    assert "Traceback" not in r.stderr

"""The switch's text command port under bench/fuzz_textport.py for 30 s (a fixed seed, root: the
switch forwards between namespaces meanwhile): every line answered in one JSON line, errors in
one line, commands known to fail failing with the tables unchanged, the switch alive and
forwarding. And the fuzzer's findings, each kept as a regression test on a switch without ports."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from lanes.switch.control_server import MAX_LINE, answer
from p4rt_util import REPO, bench_module, switch_proc

fuzz_textport = bench_module("fuzz_textport")
vethns = bench_module("vethns")
PROGRAM = REPO / "p4" / "p4rt_test.json"


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.skipif(not vethns.is_root(), reason="needs root for network namespaces")
def test_thirty_seconds_of_text_commands_find_nothing() -> None:
    t = fuzz_textport.run(seconds=30, seed=1)
    assert t.findings == []
    assert t.ok > 300 and t.refused > 300 and t.probes >= 4  # both paths, and forwarding checked


class Port:
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.rfile = self.sock.makefile("rb")

    def ask(self, line: bytes) -> dict:
        self.sock.sendall(line + b"\n")
        return json.loads(self.rfile.readline())

    def close(self) -> None:
        self.rfile.close()
        self.sock.close()


def entries(port: int) -> str:
    p = Port(port)
    try:
        return p.ask(b"table_dump l2_fwd")["out"]
    finally:
        p.close()


def test_a_line_cut_short_by_a_client_that_leaves_is_not_run(tmp_path: Path) -> None:
    # finding: "table_delete l2_fwd 1" cut to "table_delete l2_fwd " + the client gone ran what
    # had come, so a cut "table_delete l2_fwd 12" deleted entry 1
    with open(tmp_path / "switch.log", "w") as log, switch_proc.command_port_switch(PROGRAM, out=log) as (port, _):
        p = Port(port)
        for mac in (1, 2):
            assert p.ask(f"table_add l2_fwd drop {mac} =>".encode())["ok"]
        before = entries(port)
        for cut in (b"table_delete l2_fwd 1", b"table_clear l2_fwd", b"table_add l2_fwd drop 7 =>"):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(cut)
            s.close()
        assert p.ask(b"table_num_entries l2_fwd") == {"ok": True, "out": "2"}
        assert entries(port) == before
        p.close()


def test_an_overlong_line_is_refused_in_one_line_and_the_connection_goes_on(tmp_path: Path) -> None:
    # finding: a line without a newline was gathered whole in memory (8 MiB and more)
    with open(tmp_path / "switch.log", "w") as log, switch_proc.command_port_switch(PROGRAM, out=log) as (port, _):
        p = Port(port)
        for size in (MAX_LINE + 1, 8 << 20):
            r = p.ask(b"table_add l2_fwd drop " + b"9" * size + b" =>")
            assert r == {"ok": False, "error": f"line longer than {MAX_LINE} bytes: refused"}
        assert p.ask(b"table_add l2_fwd drop " + b"0" * (MAX_LINE - 30) + b"9 =>")["ok"]  # within the limit
        assert p.ask(b"table_num_entries l2_fwd") == {"ok": True, "out": "1"}
        p.close()


def test_bad_numbers_are_refused_and_change_nothing(tmp_path: Path) -> None:
    # findings: "0xé1" panicked in the switch (no answer, the connection closed); "0x" was 0;
    # handles and ports past 32 bits were taken modulo 2^32; table_indirect_delete deleted an
    # entry of a direct table
    with open(tmp_path / "switch.log", "w") as log, switch_proc.command_port_switch(PROGRAM, out=log) as (port, _):
        p = Port(port)
        added = {"ok": True, "out": "Entry has been added with handle 0", "handle": 0}
        assert p.ask(b"table_add l2_fwd set_port 5 => 2") == added
        before = entries(port)
        for line in ("table_add l2_fwd drop 0xé1 =>", "table_add l2_fwd drop 0x =>", "table_delete l2_fwd 4294967296",
                     "table_modify l2_fwd drop 4294967296 =>", "table_indirect_delete l2_fwd 0",
                     "set_port_rate 4294967297 1Mbps"):  # fmt: skip
            r = p.ask(line.encode())
            assert r["ok"] is False and "\n" not in r["error"] and r["error"], (line, r)
        assert entries(port) == before
        p.close()
    assert "panicked" not in (tmp_path / "switch.log").read_text()


def test_a_fault_in_a_command_is_answered_in_one_line() -> None:
    def broken(line: str) -> tuple[str, int | None]:
        raise RuntimeError("first line\nsecond line")

    r = answer(broken, "show_ports")
    assert r == {"ok": False, "error": "internal error: RuntimeError: first line second line"}
    assert answer(lambda line: ("fine", None), "show_ports") == {"ok": True, "out": "fine"}


def test_clients_that_leave_before_their_answers_leave_no_trace(tmp_path: Path) -> None:
    log_path = tmp_path / "switch.log"
    with open(log_path, "w") as log, switch_proc.command_port_switch(PROGRAM, out=log) as (port, _):
        for _ in range(20):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"help\n" * 200 + b"table_dump l2_fwd\n")
            s.close()
        p = Port(port)
        assert p.ask(b"show_ports")["ok"]
        p.close()
    assert "Traceback" not in log_path.read_text()

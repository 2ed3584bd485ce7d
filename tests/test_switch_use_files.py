"""`simple_switch --use-files`: ports are pcap files (NAME_in.pcap read, NAME_out.pcap written) as
in bmv2, with regular files and with FIFOs filled while the switch runs (the way p4c's bmv2 test
driver feeds it, entries added with bmv2's simple_switch_CLI meanwhile). Frames shorter than an
Ethernet header go through; a frame the program drops is not written."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from pcap_records import HEADER, pcap_bytes, read_frames

BIN = Path(sys.executable).parent
SIMPLE_SWITCH = str(BIN / "simple_switch")
CLI = str(BIN / "simple_switch_CLI")
P4RT_TEST = Path(__file__).resolve().parent.parent / "p4" / "p4rt_test.json"

# p4rt_test: l2_fwd (exact dstAddr) forwards or drops; acl (ternary etherType, range ingress_port)
# sends what has no Ethernet header (its etherType reads 0) from port 1 to port 2
ENTRIES = [
    "table_add l2_fwd set_port 00:00:00:00:00:02 => 2",
    "table_add l2_fwd set_port 00:00:00:00:00:01 => 1",
    "table_add l2_fwd drop 00:00:00:00:00:03 =>",
    "table_add acl set_port 0x0000&&&0xffff 1->1 => 2 10",
]


def frame(dst: int, fill: int) -> bytes:
    return bytes([0, 0, 0, 0, 0, dst, 0, 0, 0, 0, 0, 9]) + b"\x08\x00" + bytes([fill]) * 46


RUNT = bytes.fromhex("deadbeef01")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(cwd: Path, thrift: int, *extra: str) -> subprocess.Popen:
    # "-i N@NAME" as one argument, as p4c's driver passes it
    cmd = [SIMPLE_SWITCH, "--use-files", "0", "--log-file", "switch.log", "--log-flush",
           "--dump-packet-data", "10240", "--thrift-port", str(thrift), "--device-id", "7",
           "-i 1@s1-eth1", "-i 2@s1-eth2", *extra, str(P4RT_TEST)]  # fmt: skip
    return subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def wait_for(what: str, ready, sw: subprocess.Popen, limit_s: float = 60) -> None:
    deadline = time.monotonic() + limit_s
    while not ready():
        if sw.poll() is not None:
            raise AssertionError(f"switch exited while waiting for {what}: {sw.stdout.read()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


def stop(sw: subprocess.Popen) -> str:
    sw.send_signal(signal.SIGTERM)
    out, _ = sw.communicate(timeout=30)
    assert sw.returncode in (0, -signal.SIGTERM), out
    return out


def test_files_in_frames_out_shorter_than_ethernet_too(tmp_path: Path) -> None:
    (tmp_path / "entries.txt").write_text("\n".join(ENTRIES) + "\n")
    a, dropped = frame(2, 0xAA), frame(3, 0xBB)
    (tmp_path / "s1-eth1_in.pcap").write_bytes(pcap_bytes([(1.0, a), (1.1, dropped), (1.2, RUNT)]))
    (tmp_path / "s1-eth2_in.pcap").write_bytes(HEADER)
    sw = start(tmp_path, free_port(), "--commands", "entries.txt")
    out2, log_file = tmp_path / "s1-eth2_out.pcap", tmp_path / "switch.log.txt"
    try:
        wait_for("two frames out of port 2", lambda: len(read_frames(out2)) >= 2, sw)
        wait_for("the log file", lambda: log_file.exists() and "file port(s)" in log_file.read_text(), sw)
    finally:
        log = stop(sw)
    assert read_frames(out2) == [a, RUNT], log
    assert read_frames(tmp_path / "s1-eth1_out.pcap") == []


def open_fifo_for_writing(path: Path, sw: subprocess.Popen) -> int:
    """Open as p4c's driver does, once the switch has it open for reading."""
    fds: list[int] = []

    def opened() -> bool:
        try:
            fds.append(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            return False
        return True

    wait_for(f"the switch to open {path.name}", opened, sw)
    os.set_blocking(fds[0], True)
    return fds[0]


def test_fifos_filled_while_running_as_p4c_driver_does(tmp_path: Path) -> None:
    for n in (1, 2):
        os.mkfifo(tmp_path / f"s1-eth{n}_in.pcap")
    thrift = free_port()
    sw = start(tmp_path, thrift)
    try:
        fds = []
        for n in (1, 2):  # each opened and given its header in turn, as the driver's PcapWriter does
            fds.append(open_fifo_for_writing(tmp_path / f"s1-eth{n}_in.pcap", sw))
            os.write(fds[-1], HEADER)

        def listening() -> bool:
            try:
                socket.create_connection(("127.0.0.1", thrift), timeout=1).close()
            except OSError:
                return False
            return True

        wait_for("the thrift port", listening, sw)
        cli = subprocess.run([CLI, "--thrift-port", str(thrift)], input="\n".join(ENTRIES) + "\n",
                             capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
        assert cli.returncode == 0 and "Error" not in cli.stdout, cli.stdout + cli.stderr
        to2, to1 = frame(2, 0x11), frame(1, 0x22)
        # port 2's frame carries the earlier timestamp: inputs are merged earliest first
        os.write(fds[0], pcap_bytes([(5.0, to2), (5.2, RUNT)])[len(HEADER) :])
        os.write(fds[1], pcap_bytes([(4.0, to1)])[len(HEADER) :])
        for fd in fds:
            os.close(fd)
        out1, out2 = tmp_path / "s1-eth1_out.pcap", tmp_path / "s1-eth2_out.pcap"
        wait_for("every frame out", lambda: len(read_frames(out1)) + len(read_frames(out2)) >= 3, sw)
    finally:
        log = stop(sw)
    assert read_frames(out1) == [to1], log
    assert read_frames(out2) == [to2, RUNT], log


def run_switch_expecting_error(*args: str) -> str:
    r = subprocess.run([SIMPLE_SWITCH, *args], capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("simple_switch: error: "), r.stderr
    return lines[0]


def test_simple_switch_refuses_bad_options_in_one_line(tmp_path: Path) -> None:
    prog = str(P4RT_TEST)
    assert "--use-files" in run_switch_expecting_error("--use-files", "-1", "-i", "1@x", prog)
    assert "nanomsg" in run_switch_expecting_error("--packet-in", "ipc:///tmp/x.ipc", prog)
    assert "--frobnicate" in run_switch_expecting_error("--frobnicate", prog)
    assert "--pcap" in run_switch_expecting_error("--use-files", "0", "--pcap", str(tmp_path), prog)
    assert "not below" in run_switch_expecting_error("--max-port-count", "4", "-i", "5@x", prog)
    assert "extern modules" in run_switch_expecting_error(prog, "--", "--load-modules", "x.so")
    assert "511" in run_switch_expecting_error(prog, "--", "--drop-port", "64")
    r = subprocess.run([SIMPLE_SWITCH, "--version"], capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 0 and "lanes switch" in r.stdout, r.stderr


def test_a_missing_input_file_stops_the_switch_with_its_name(tmp_path: Path) -> None:
    sw = start(tmp_path, free_port())
    out, _ = sw.communicate(timeout=60)
    assert sw.returncode == 1, out
    assert "s1-eth1_in.pcap" in out and "simple_switch: error:" in out, out

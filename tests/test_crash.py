"""`kill -9` in the middle of a run. The P4Runtime server is a thread of the switch process (one
process per switch, ARCHITECTURE decision 6), so it cannot die alone: killing the switch takes
its gRPC and command ports with it, and the P4Runtime session's other side, the controller, is
the part that can die on its own. Checked:

- the switch killed while a controller writes and traffic flows: the controller's next call
  fails at once (no hang), the ports are free, what the switch had captured reads as whole
  frames only, and a switch restarted on the same interfaces and ports starts empty (nothing of
  the dead one's tables) and serves P4Runtime and forwards again;
- the controller killed mid-stream: the switch goes on forwarding, forgets the dead session (a
  new controller takes the same election id), and every entry read back is a whole one;
- a lab switch killed mid-sweep: the run stops, its cell is recorded as failed and has no
  summary (nothing half-done is taken for a result), `lanes lab clean` leaves nothing behind,
  and resuming the sweep redoes that cell.

Root: namespaces and Mininet."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
import pytest
from lanes.p4runtime.client import Client
from lanes.p4runtime.p4info_file import load_p4info
from lanes.p4runtime.proto import p4r
from p4rt_util import JSON, L2_FWD, P4INFO, bench_module, l2_entry, primary, upd, wait_for
from pcap_records import read_frames
from test_lab_run import leftovers

switch_proc = bench_module("switch_proc")
vethns = bench_module("vethns")
REPO = Path(__file__).resolve().parents[1]

pytestmark = [
    pytest.mark.root,
    pytest.mark.slow,
    pytest.mark.skipif(not vethns.is_root(), reason="needs root for network namespaces"),
]


def mac_int(hosts, i: int) -> int:
    return int(hosts.mac(i).replace(":", ""), 16)


def switch_args(hosts, gport: int, cport: int, *extra: str) -> list[str]:
    return [switch_proc.LANES, "switch", str(JSON), *hosts.ports(),
            "--thrift-port", str(cport), *extra, "--", "--grpc-server-addr", f"127.0.0.1:{gport}", "--cpu-port", "255"]  # fmt: skip


def start_switch(hosts, gport: int, cport: int, log: Path, *extra: str) -> subprocess.Popen:
    p = hosts.start(None, *switch_args(hosts, gport, cport, *extra), log=log)
    switch_proc.wait_grpc(f"127.0.0.1:{gport}", p)
    switch_proc.wait_tcp(cport, p)
    return p


def forwarding_entries(c: Client, hosts) -> None:
    c.write([upd(p4r.Update.INSERT, l2_entry(mac_int(hosts, i), port=i)) for i in (1, 2)])


def refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except ConnectionRefusedError:
        return True
    return False


def test_a_killed_switch_frees_its_ports_and_a_restarted_one_serves_again(tmp_path: Path) -> None:
    gport, cport = switch_proc.free_port(), switch_proc.free_port()
    with vethns.Hosts(2) as hosts:
        pcap = tmp_path / "pcap"
        pcap.mkdir()
        sw = start_switch(hosts, gport, cport, tmp_path / "a.log", "--pcap", str(pcap))
        c = primary(f"127.0.0.1:{gport}")
        forwarding_entries(c, hosts)
        assert hosts.ping(1, 2, count=3) == 3
        # a controller writing and traffic flowing while the switch is killed
        errors: list[grpc.StatusCode] = []
        stop = threading.Event()

        def writer() -> None:
            n = 0
            while not stop.is_set():
                kind = p4r.Update.INSERT if n % 2 == 0 else p4r.Update.DELETE
                try:
                    c.write([upd(kind, l2_entry(0x0200_0000_0000 + n // 2, port=2))])
                except grpc.RpcError as e:
                    errors.append(e.code())
                    return
                n += 1

        t = threading.Thread(target=writer, daemon=True)
        t.start()
        flood = hosts.start(1, "ping", "-n", "-q", "-i", "0.002", "-s", "1000", hosts.ip(2))
        time.sleep(2)
        os.kill(sw.pid, signal.SIGKILL)
        killed = time.monotonic()
        t.join(timeout=30)
        stop.set()
        assert errors and errors[0] == grpc.StatusCode.UNAVAILABLE, errors
        assert time.monotonic() - killed < 10, "the controller waited for a dead switch"
        flood.kill()
        c.close()
        assert sw.wait(timeout=10) == -signal.SIGKILL
        assert refused(gport) and refused(cport)  # the P4Runtime server died with the switch
        # what the dead switch captured: whole frames only (a record it was cut off in is not one)
        out = read_frames(pcap / f"{hosts.ifaces[1]}_out.pcap")
        assert len(out) > 10 and {len(f) for f in out} <= {98, 1042}, sorted({len(f) for f in out})
        # the same interfaces and ports again
        sw2 = start_switch(hosts, gport, cport, tmp_path / "b.log")
        c2 = primary(f"127.0.0.1:{gport}")  # the same election id, a pipeline pushed anew
        table = p4r.Entity()
        table.table_entry.table_id = L2_FWD
        assert c2.read([table]) == []  # the dead switch's entries are gone, not half there
        forwarding_entries(c2, hosts)
        assert hosts.ping(1, 2, count=3) == 3
        c2.close()
        assert sw2.poll() is None


CONTROLLER = """
import sys
from lanes.p4runtime.client import Client
from lanes.p4runtime.p4info_file import load_p4info
from lanes.p4runtime.proto import p4r
c = Client(sys.argv[1], device_id=0, election_id=5)
assert c.arbitrate(5).status.code == 0
from pathlib import Path
c.set_pipeline(load_p4info(Path(sys.argv[2])), Path(sys.argv[3]).read_bytes())
def entry(mac, port, kind=p4r.Update.INSERT):
    te = p4r.TableEntry(table_id=L2_FWD)
    te.match.add(field_id=1).exact.value = mac.to_bytes(6, "big")
    te.action.action.action_id = 16777219
    te.action.action.params.add(param_id=1, value=port.to_bytes(2, "big"))
    u = p4r.Update(type=kind)
    u.entity.table_entry.CopyFrom(te)
    return u
c.write([entry(int(sys.argv[4 + i], 16), i + 1) for i in (0, 1)])
print("ready", flush=True)
n = 0
while True:  # batches of 100 inserts, then of their deletes, and PacketOuts, until killed
    kind = p4r.Update.INSERT if n % 2 == 0 else p4r.Update.DELETE
    c.write([entry(0x020000000000 + k, 2, kind) for k in range(100)])
    c.packet_out(bytes(60), {1: (2).to_bytes(2, "big")})
    n += 1
""".replace("L2_FWD", str(L2_FWD))


def test_a_killed_controller_leaves_the_switch_serving_and_its_session_free(tmp_path: Path) -> None:
    gport, cport = switch_proc.free_port(), switch_proc.free_port()
    with vethns.Hosts(2) as hosts:
        sw = start_switch(hosts, gport, cport, tmp_path / "switch.log")
        macs = [hosts.mac(i).replace(":", "") for i in (1, 2)]
        ctrl = subprocess.Popen([sys.executable, "-c", CONTROLLER, f"127.0.0.1:{gport}", str(P4INFO), str(JSON), *macs],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        try:
            assert ctrl.stdout.readline().strip() == "ready", ctrl.stderr.read()
            time.sleep(1.5)  # mid-stream: batches of writes and PacketOuts going
        finally:
            ctrl.kill()
            ctrl.wait()
        assert hosts.ping(1, 2, count=3) == 3  # forwarding never depended on the controller
        # the dead session is dropped: a new controller gets its election id and is primary
        c = Client(f"127.0.0.1:{gport}", device_id=0, election_id=5)
        assert wait_for(lambda: c.arbitrate(5).status.code == 0, timeout=10)
        table = p4r.Entity()
        table.table_entry.table_id = L2_FWD
        held = c.read([table])
        assert len(held) in (2, 102), len(held)  # a batch is applied whole or not at all
        for e in held:
            te = e.table_entry
            assert len(te.match) == 1 and len(te.match[0].exact.value) in range(1, 7)
            assert te.action.action.action_id == 16777219 and len(te.action.action.params) == 1
        c.set_pipeline(load_p4info(P4INFO), JSON.read_bytes())  # the new primary may push
        c.close()
        stats = subprocess.run([switch_proc.LANES, "ctl", "--thrift-port", str(cport), "-c", "p4runtime_stats"],
                               capture_output=True, text=True, timeout=30, check=False)  # fmt: skip
        assert stats.returncode == 0 and json.loads(stats.stdout)["packet_outs"] > 0, stats
        assert sw.poll() is None


def run_state(run_dir: Path) -> dict:
    """The state file of the lab run writing `run_dir` (what `lanes lab clean` reads)."""
    for f in Path("/run/lanes-lab").glob("*.json"):
        st = json.loads(f.read_text())
        try:
            cmdline = Path(f"/proc/{st['owner']}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if str(run_dir) in cmdline:
            return st
    raise AssertionError(f"no lab run state for {run_dir}")


def test_a_lab_switch_killed_mid_sweep_fails_only_its_cell_and_a_resume_redoes_it(tmp_path: Path) -> None:
    cmd = [switch_proc.LANES, "lab", "sweep", "--preset", "fast", "--topos", "star", "--cases", "proactive",
           "--algs", "strict", "--protos", "udp", "--link-mbps", "20", "--duration", "10", "--out", str(tmp_path)]  # fmt: skip
    cell = tmp_path / "star-proactive-strict-udp"
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not (cell / "telemetry.jsonl").exists() and p.poll() is None:
        time.sleep(0.2)
    assert (cell / "telemetry.jsonl").exists(), "the cell did not reach its traffic phase"
    # the run's own record of its switches, as `lanes lab clean` reads it
    os.kill(run_state(cell)["switch_pids"][0], signal.SIGKILL)
    _, err = p.communicate(timeout=180)
    assert "FAILED" in err and "Traceback" not in err, err[-2000:]
    record = json.loads((cell / "cell.json").read_text())
    assert record["ok"] is False and record["exit_code"] != 0
    assert not (cell / "summary.json").exists()
    assert "died" in (tmp_path / "star-proactive-strict-udp.log").read_text()
    clean = subprocess.run([switch_proc.LANES, "lab", "clean"], capture_output=True, text=True, timeout=120, check=False)
    assert clean.returncode == 0 and leftovers() == [], clean.stderr
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert again.returncode == 0 and "already complete" not in again.stderr, again.stderr[-2000:]
    assert json.loads((cell / "cell.json").read_text())["ok"] and (cell / "summary.json").is_file()

"""Idle timeouts over P4Runtime and bmv2's Thrift API, on a switch without ports but with a CPU
port: an entry with idle_timeout_ns that no packet hits is reported to the primary client in an
IdleTimeoutNotification, once per idle period; a PacketOut that hits it restarts its idle time
(read back as time_since_last_hit) and it is reported again; entries without a timeout never
are. simple_switch_CLI's table_set_timeout sets the same timeout and table_dump shows its life."""

from __future__ import annotations

import json
import queue
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from lanes.p4runtime.client import Client
from lanes.p4runtime.proto import p4i, p4r
from p4rt_util import loopback_switch
from test_switch_clone import upd
from test_switch_selector import ETHERTYPE, selector_program
from test_switch_thrift import CLI

INSERT = p4r.Update.INSERT
CPU = 255
TABLE, SET_PORT = 33554433, 16777217
TTL_NS = 300_000_000


def idle_program(path: Path) -> bytes:
    """The selector test's program with `ecmp` a direct table that keeps hit times."""
    prog = json.loads(selector_program(path).read_text())
    ingress = prog["pipelines"][0]
    ingress["action_profiles"] = []
    t = ingress["tables"][0]
    del t["action_profile"]
    t.update(type="simple", support_timeout=True)
    return json.dumps(prog).encode()


def p4info() -> p4i.P4Info:
    info = p4i.P4Info()
    info.pkg_info.arch = "v1model"
    t = info.tables.add()
    t.preamble.id, t.preamble.name, t.preamble.alias = TABLE, "ingress.ecmp", "ecmp"
    t.match_fields.add(id=1, name="hdr.ethernet.etherType", bitwidth=16, match_type=p4i.MatchField.EXACT)
    t.action_refs.add(id=SET_PORT)
    t.action_refs.add(id=16777218)
    t.idle_timeout_behavior = p4i.Table.NOTIFY_CONTROL
    t.size = 16
    a = info.actions.add()
    a.preamble.id, a.preamble.name, a.preamble.alias = SET_PORT, "ingress.set_port", "set_port"
    a.params.add(id=1, name="port", bitwidth=9)
    d = info.actions.add()
    d.preamble.id, d.preamble.name, d.preamble.alias = 16777218, "ingress.drop", "drop"
    return info


def entry(ethertype: int, ttl_ns: int = 0) -> p4r.Entity:
    te = p4r.TableEntry(table_id=TABLE, idle_timeout_ns=ttl_ns)
    te.match.add(field_id=1).exact.value = ethertype.to_bytes(2, "big")
    te.action.action.action_id = SET_PORT
    te.action.action.params.add(param_id=1, value=b"\x01")
    return p4r.Entity(table_entry=te)


def frame(ethertype: int) -> bytes:
    return bytes.fromhex("000000000002000000000001") + ethertype.to_bytes(2, "big") + bytes(46)


@pytest.fixture
def switch() -> Iterator[tuple[str, int]]:
    with loopback_switch(target=("--cpu-port", str(CPU))) as s:
        yield s


def notified(c: Client, wait: float) -> list[int]:
    """Ethertypes of the entries in the next IdleTimeoutNotification ([] if none in `wait` s)."""
    try:
        n = c.next_message("idle_timeout_notification", timeout=wait)
    except queue.Empty:
        return []
    assert all(te.idle_timeout_ns == TTL_NS for te in n.table_entry)
    return sorted(int.from_bytes(te.match[0].exact.value, "big") for te in n.table_entry)


def test_idle_entries_are_notified_once_per_idle_period(switch: tuple[str, int], tmp_path: Path) -> None:
    c = Client(switch[0], election_id=10)
    try:
        assert c.arbitrate(10).status.code == 0
        c.set_pipeline(p4info(), idle_program(tmp_path / "p.json"))
        c.write([upd(INSERT, entry(ETHERTYPE, TTL_NS)), upd(INSERT, entry(0x0800))])
        want = p4r.Entity(table_entry=p4r.TableEntry(table_id=TABLE))
        want.table_entry.time_since_last_hit.elapsed_ns = 0
        life = {
            int.from_bytes(e.table_entry.match[0].exact.value, "big"): (
                e.table_entry.idle_timeout_ns,
                e.table_entry.time_since_last_hit.elapsed_ns,
            )
            for e in c.read([want])
        }
        assert life[0x0800][0] == 0 and life[ETHERTYPE][0] == TTL_NS
        assert life[ETHERTYPE][1] < TTL_NS
        started = time.monotonic()
        assert notified(c, 5) == [ETHERTYPE]
        assert time.monotonic() - started >= 0.2  # not before most of its timeout passed
        assert notified(c, 0.8) == []  # once per idle period
        c.packet_out(frame(ETHERTYPE))  # a hit: idle again from now
        time.sleep(0.05)
        elapsed = [e.table_entry.time_since_last_hit.elapsed_ns for e in c.read([want])
                   if e.table_entry.idle_timeout_ns]  # fmt: skip
        assert elapsed and elapsed[0] < TTL_NS
        assert notified(c, 5) == [ETHERTYPE]
    finally:
        c.close()


def test_cli_table_set_timeout_and_life(switch: tuple[str, int], tmp_path: Path) -> None:
    if not Path(CLI).exists():
        pytest.fail("simple_switch_CLI not installed (make setup)")
    c = Client(switch[0], election_id=10)
    try:
        assert c.arbitrate(10).status.code == 0
        c.set_pipeline(p4info(), idle_program(tmp_path / "p.json"))
    finally:
        c.close()
    cmds = f"table_add ecmp set_port {ETHERTYPE:#x} => 1\ntable_set_timeout ecmp 0 2500\ntable_dump ecmp\n"
    r = subprocess.run([CLI, "--thrift-port", str(switch[1])], input=cmds, capture_output=True, text=True,
                       timeout=60, check=False)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert "timeout is 2500ms" in r.stdout, r.stdout

"""Helpers of the P4Runtime tests: a `lanes switch` on 127.0.0.1 (no ports) and requests."""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest
from lanes.p4runtime.client import Client, write_errors
from lanes.p4runtime.p4info_file import load_p4info
from lanes.p4runtime.proto import p4r

REPO = Path(__file__).resolve().parents[1]


def bench_module(name: str):
    """bench/NAME.py, loaded once under its own name (the benchmarks import it so too)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "bench" / f"{name}.py")
        assert spec and spec.loader
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


switch_proc = bench_module("switch_proc")
LANES = switch_proc.LANES
free_port = switch_proc.free_port
P4INFO = REPO / "p4" / "p4rt_test.p4info.txtpb"
JSON = REPO / "p4" / "p4rt_test.json"

# ids in p4/p4rt_test.p4info.txtpb (pinned by @id in p4rt_test.p4; NoAction has p4c's id)
L2_FWD, ACL = 33554435, 33554436
NO_ACTION, DROP, SET_PORT, SEND_TO_CPU = 21257015, 16777218, 16777219, 16777220
PORT_COUNTER, ACL_COUNTER, PORT_METER, ACL_METER, LAST_LEN = (
    301989889,
    318767105,
    335544321,
    352321537,
    369098753,
)


@contextmanager
def loopback_switch(
    *extra: str, device_id: int = 0, target: tuple[str, ...] = ()
) -> Iterator[tuple[str, int]]:
    """A switch without ports; yields (gRPC address, ctl port). `target`: options after '--'."""
    gport, cport = free_port(), free_port()
    addr = f"127.0.0.1:{gport}"
    args = ["switch", "--no-p4", "--device-id", str(device_id), "--thrift-port", str(cport), *extra]
    with switch_proc.running([*args, "--", "--grpc-server-addr", addr, *target], grpc_addr=addr):
        yield addr, cport


@pytest.fixture(scope="module")
def switch() -> Iterator[tuple[str, int]]:
    """One port-less switch per test module (import this fixture and `client` to use them)."""
    with loopback_switch() as s:
        yield s


@pytest.fixture
def client(switch: tuple[str, int]) -> Iterator[Client]:
    """The primary client of `switch`, p4rt_test pushed (VERIFY_AND_COMMIT: empty tables)."""
    c = primary(switch[0], election_id=100)
    yield c
    c.close()


def primary(addr: str, election_id: int = 1, device_id: int = 0, push: bool = True) -> Client:
    c = Client(addr, device_id=device_id, election_id=election_id)
    a = c.arbitrate(election_id)
    assert a.status.code == 0, a
    if push:
        c.set_pipeline(load_p4info(P4INFO), JSON.read_bytes())
    return c


def l2_entry(mac: int, port: int | None = 1) -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=L2_FWD)
    te.match.add(field_id=1).exact.value = mac.to_bytes(max(6, (mac.bit_length() + 7) // 8), "big")
    if port is not None:
        te.action.action.action_id = SET_PORT
        te.action.action.params.add(param_id=1, value=bytes([port]))
    return te


def acl_entry(
    ethertype: int, mask: int, lo: int, hi: int, prio: int, port: int | None = None
) -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=ACL, priority=prio)
    fm = te.match.add(field_id=1)
    fm.ternary.value = ethertype.to_bytes(2, "big")
    fm.ternary.mask = mask.to_bytes(2, "big")
    fm = te.match.add(field_id=2)
    fm.range.low = lo.to_bytes(2, "big")
    fm.range.high = hi.to_bytes(2, "big")
    if port is None:
        te.action.action.action_id = SEND_TO_CPU
    else:
        te.action.action.action_id = SET_PORT
        te.action.action.params.add(param_id=1, value=bytes([port]))
    return te


def upd(kind: int, te: p4r.TableEntry) -> p4r.Update:
    u = p4r.Update(type=kind)
    u.entity.table_entry.CopyFrom(te)
    return u


def rpc_code(fn, *args) -> grpc.StatusCode:
    """The status code a call fails with (OK if it does not)."""
    try:
        fn(*args)
    except grpc.RpcError as e:
        return e.code()
    return grpc.StatusCode.OK


def write_code(client: Client, updates: list) -> grpc.StatusCode:
    """The per-update status code of a one-update Write (OK if it succeeds)."""
    try:
        client.write(updates)
    except grpc.RpcError as e:
        errs = write_errors(e)
        if e.code() != grpc.StatusCode.UNKNOWN or len(errs) != 1:
            return e.code()
        return next(c for c in grpc.StatusCode if c.value[0] == errs[0][0])
    return grpc.StatusCode.OK


def wait_for(pred, timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False

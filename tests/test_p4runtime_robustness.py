"""Robustness: 300 seeded random Write and Read requests (unknown ids, wrong match kinds, values
of any length, bad priorities, out-of-range indices, every entity kind) against the P4Runtime
server. Every refusal must be a proper status code, never an internal error."""

from __future__ import annotations

import random

import grpc
from lanes.p4runtime.client import write_errors
from lanes.p4runtime.proto import p4r
from p4rt_util import ACL, L2_FWD, LAST_LEN, PORT_COUNTER, PORT_METER, loopback_switch, primary

rnd = random.Random(1)


def rb() -> bytes:
    return bytes(rnd.randrange(256) for _ in range(rnd.choice([0, 1, 2, 3, 6, 7, 20])))


def rand_te() -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=rnd.choice([L2_FWD, ACL, 0, 5, L2_FWD]))
    for _ in range(rnd.choice([0, 1, 1, 2, 3])):
        fm = te.match.add(field_id=rnd.choice([0, 1, 2, 3]))
        k = rnd.choice(["exact", "lpm", "ternary", "range", "optional"])
        if k == "exact":
            fm.exact.value = rb()
        elif k == "lpm":
            fm.lpm.value = rb()
            fm.lpm.prefix_len = rnd.choice([-1, 0, 8, 48, 49])
        elif k == "ternary":
            fm.ternary.value = rb()
            fm.ternary.mask = rb()
        elif k == "range":
            fm.range.low = rb()
            fm.range.high = rb()
        else:
            fm.optional.value = rb()
    te.priority = rnd.choice([0, 0, 1, 5, -3, 2**31 - 1])
    if rnd.random() < 0.8:
        a = te.action.action
        a.action_id = rnd.choice([21257015, 16777218, 16777219, 16777220, 1, 0])
        for _ in range(rnd.choice([0, 1, 1, 2])):
            a.params.add(param_id=rnd.choice([0, 1, 2]), value=rb())
    if rnd.random() < 0.1:
        te.is_default_action = True
    if rnd.random() < 0.1:
        te.counter_data.packet_count = rnd.choice([-1, 5, 2**63 - 1])
        te.counter_data.byte_count = rnd.choice([-(2**63), 0, 64])
    if rnd.random() < 0.1:
        te.meter_config.cir = rnd.choice([-1, 0, 10])
        te.meter_config.pir = rnd.choice([0, 5, 20])
    return te


def rand_entity() -> p4r.Entity:
    r = rnd.random()
    e = p4r.Entity()
    if r < 0.6:
        e.table_entry.CopyFrom(rand_te())
    elif r < 0.7:
        e.counter_entry.counter_id = rnd.choice([PORT_COUNTER, 0, 7])
        e.counter_entry.data.packet_count = rnd.choice([-1, 3])
        if rnd.random() < 0.7:
            e.counter_entry.index.index = rnd.choice([-1, 0, 511, 512])
    elif r < 0.8:
        e.register_entry.register_id = rnd.choice([LAST_LEN, 0, 9])
        if rnd.random() < 0.7:
            e.register_entry.index.index = rnd.choice([-5, 3, 600])
        e.register_entry.data.bitstring = rb()
    elif r < 0.9:
        e.meter_entry.meter_id = rnd.choice([PORT_METER, 3])
        e.meter_entry.index.index = rnd.choice([0, 1000])
        e.meter_entry.config.cir = rnd.choice([-1, 1, 100, 2**63 - 1])
        e.meter_entry.config.pir = rnd.choice([0, 2**63 - 1])
        e.meter_entry.config.pburst = rnd.choice([0, 2**63 - 1])
    elif r < 0.95:
        e.direct_counter_entry.table_entry.CopyFrom(rand_te())
    else:
        e.direct_meter_entry.table_entry.CopyFrom(rand_te())
    return e


def test_random_requests_get_status_codes_not_crashes() -> None:
    bad: list[str] = []
    refused = 0
    with loopback_switch() as (addr, _):
        c = primary(addr)
        try:
            for _ in range(300):
                n = rnd.choice([1, 1, 3, 10])
                ups = [
                    p4r.Update(type=rnd.choice([0, 1, 2, 3, 1, 1]), entity=rand_entity()) for _ in range(n)
                ]
                try:
                    c.write(ups)
                except grpc.RpcError as e:
                    errs = write_errors(e)
                    if e.code() != grpc.StatusCode.UNKNOWN or len(errs) != n:
                        bad.append(f"write: {e.code()} {e.details()}")
                    refused += sum(1 for code, _ in errs if code)
                    bad += [f"write: {code} {msg}" for code, msg in errs if code in (2, 13)]
                try:
                    c.read([rand_entity() for _ in range(rnd.choice([1, 2]))])
                except grpc.RpcError as e:
                    if e.code() in (grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL):
                        bad.append(f"read: {e.code()} {e.details()}")
            # the server still works after all that
            c.write([p4r.Update(type=p4r.Update.INSERT, entity=p4r.Entity(table_entry=_good()))])
        finally:
            c.close()
    assert bad == []
    assert refused > 300  # most random updates are malformed and were refused one by one


def _good() -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=L2_FWD)
    te.match.add(field_id=1).exact.value = b"\xaa\xbb\xcc\x00\x00\x01"
    te.action.action.action_id = 16777219
    te.action.action.params.add(param_id=1, value=b"\x01")
    return te

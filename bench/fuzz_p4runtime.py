"""Structure-aware fuzzing of the P4Runtime server: valid Write requests bent in one or two places
(wrong table, field, action or parameter ids, widths over the field's, prefixes past the width,
masks that do not cover the value, ranges the wrong way round, priorities missing or where none
belongs, unknown update types, huge batches), reads with bad ids, and pipeline pushes with a bad
P4Info or JSON, against a real `lanes switch` on loopback.

Checks, per request: an answer within the deadline (no hang), the switch still alive (no crash),
every refused update answered with one of the codes the P4Runtime spec gives for it (never
UNKNOWN or INTERNAL), and an update the server accepted agrees with a model of the tables (an
INSERT of a key it holds, a MODIFY or DELETE of one it does not, is a finding). At the end the
tables read back must hold exactly the model's keys (no leaked entry).

    .venv/bin/python bench/fuzz_p4runtime.py [--seconds 600] [--seed N] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from lanes.p4runtime.client import Client, write_errors
from lanes.p4runtime.p4info_file import load_p4info
from lanes.p4runtime.proto import p4r

sys.path.insert(0, str(Path(__file__).resolve().parent))
from switch_proc import REPO, p4runtime_switch  # noqa: E402

P4INFO = REPO / "p4" / "p4rt_test.p4info.txtpb"
JSON = REPO / "p4" / "p4rt_test.json"
L2_FWD, ACL = 33554435, 33554436
NO_ACTION, DROP, SET_PORT, SEND_TO_CPU = 21257015, 16777218, 16777219, 16777220
# what the spec allows a refused update to be answered with
ALLOWED = {"INVALID_ARGUMENT", "NOT_FOUND", "ALREADY_EXISTS", "OUT_OF_RANGE", "RESOURCE_EXHAUSTED",
           "UNIMPLEMENTED", "FAILED_PRECONDITION", "PERMISSION_DENIED"}  # fmt: skip
CODE_NAME = {c.value[0]: c.name for c in grpc.StatusCode}
DEADLINE_S = 30.0


@dataclass
class Tally:
    requests: int = 0
    updates: int = 0
    accepted: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    findings: list[str] = field(default_factory=list)


def rand_bytes(rng: random.Random, n: int) -> bytes:
    return bytes(rng.getrandbits(8) for _ in range(n))


def field_value(rng: random.Random, bits: int) -> bytes:
    """Mostly a value of the field's width; sometimes one byte too many, a high bit past the
    width, or empty."""
    r = rng.random()
    if r < 0.08:
        return b""
    if r < 0.16:
        return rand_bytes(rng, (bits + 7) // 8 + 1)
    v = rng.getrandbits(bits if r > 0.24 else bits + 3) or 1
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


def l2_key(rng: random.Random, te: p4r.TableEntry) -> None:
    if rng.random() < 0.05:
        return  # an exact field left out
    fm = te.match.add(field_id=1 if rng.random() > 0.05 else rng.choice([0, 2, 99]))
    if rng.random() < 0.05:
        fm.lpm.value, fm.lpm.prefix_len = field_value(rng, 48), rng.randint(0, 60)  # wrong kind
    else:
        # small MACs, so that inserts, modifies and deletes meet the same keys
        fm.exact.value = rng.randint(1, 64).to_bytes(1, "big") if rng.random() < 0.7 else field_value(rng, 48)


def acl_key(rng: random.Random, te: p4r.TableEntry) -> None:
    if rng.random() > 0.1:
        fm = te.match.add(field_id=1)
        value, mask = rng.choice([0x0800, 0x86DD, 0x88CC, rng.getrandbits(16)]), rng.choice([0xFFFF, 0xFF00, 0, 0x00F0])
        if rng.random() < 0.8:
            value &= mask  # else: bits outside the mask, to be refused
        fm.ternary.value = value.to_bytes(2, "big") if rng.random() > 0.05 else field_value(rng, 16)
        fm.ternary.mask = mask.to_bytes(2, "big")
    if rng.random() > 0.1:
        fm = te.match.add(field_id=2 if rng.random() > 0.03 else 1)
        lo, hi = rng.randint(0, 8), rng.randint(0, 8)
        fm.range.low, fm.range.high = lo.to_bytes(1, "big"), hi.to_bytes(1, "big")
        if rng.random() < 0.05:
            fm.range.high = field_value(rng, 9)
    te.priority = rng.choice([1, 2, 3, 10]) if rng.random() > 0.05 else rng.choice([0, -1, 2**31 - 1])


def action(rng: random.Random, te: p4r.TableEntry) -> None:
    a = te.action.action
    a.action_id = rng.choice([SET_PORT, SET_PORT, DROP, NO_ACTION, SEND_TO_CPU, 7, 0])
    if a.action_id == SET_PORT or rng.random() < 0.05:
        n = 1 if rng.random() > 0.05 else rng.choice([0, 2])
        for i in range(n):
            a.params.add(param_id=1 + i if rng.random() > 0.03 else 9, value=field_value(rng, 9))


def table_entry(rng: random.Random) -> p4r.TableEntry:
    table = rng.choice([L2_FWD, L2_FWD, ACL, ACL, 1, 0])
    te = p4r.TableEntry(table_id=table)
    if table == ACL:
        acl_key(rng, te)
    else:
        l2_key(rng, te)
        if rng.random() < 0.03:
            te.priority = 5  # a priority on an exact table
    if rng.random() > 0.02:
        action(rng, te)
    return te


def key_of(te: p4r.TableEntry) -> tuple | None:
    """The entry's match key as the model holds it (None: not a key the server could accept)."""
    if te.table_id == L2_FWD:
        if len(te.match) != 1 or not te.match[0].HasField("exact"):
            return None
        return (L2_FWD, int.from_bytes(te.match[0].exact.value, "big"))
    if te.table_id == ACL:
        parts: dict[int, tuple] = {1: (0, 0), 2: (0, 511)}
        for fm in te.match:
            if fm.HasField("ternary"):
                v, m = int.from_bytes(fm.ternary.value, "big"), int.from_bytes(fm.ternary.mask, "big")
                parts[fm.field_id] = (v & m, m)
            elif fm.HasField("range"):
                parts[fm.field_id] = (int.from_bytes(fm.range.low, "big"), int.from_bytes(fm.range.high, "big"))
        return (ACL, parts[1], parts[2], te.priority)
    return None


def one_write(rng: random.Random, c: Client, model: set, t: Tally) -> None:
    n = rng.choice([1, 1, 1, 2, 5, 20]) if rng.random() > 0.01 else rng.randint(1000, 3000)
    updates = []
    for _ in range(n):
        u = p4r.Update(type=rng.choice([p4r.Update.INSERT] * 4 + [p4r.Update.MODIFY, p4r.Update.DELETE] * 2
                                        + [p4r.Update.UNSPECIFIED]))  # fmt: skip
        u.entity.table_entry.CopyFrom(table_entry(rng))
        updates.append(u)
    req = p4r.WriteRequest(device_id=c.device_id)
    c._election(req)  # the client's election id and role, as every write carries
    req.updates.extend(updates)
    t.requests += 1
    t.updates += n
    try:
        c._write(req, timeout=DEADLINE_S)
        codes = [0] * n
    except grpc.RpcError as e:
        if e.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
            t.findings.append(f"Write of {n} updates: no answer within {DEADLINE_S:.0f} s")
            return
        errs = write_errors(e)
        if len(errs) != n:
            t.findings.append(f"Write of {n} updates: {e.code().name} with {len(errs)} per-update errors")
            return
        codes = [code for code, _ in errs]
    for u, code in zip(updates, codes, strict=True):
        te, key = u.entity.table_entry, key_of(u.entity.table_entry)
        if code:
            name = CODE_NAME.get(code, str(code))
            t.refused[name] = t.refused.get(name, 0) + 1
            if name not in ALLOWED:
                t.findings.append(f"update refused with {name}: {te}".replace("\n", " "))
            continue
        t.accepted += 1
        if key is None:
            t.findings.append(f"accepted an update with no valid key: {te}".replace("\n", " "))
        elif u.type == p4r.Update.INSERT:
            if key in model:
                t.findings.append(f"INSERT of a key already held accepted: {key}")
            model.add(key)
        elif key not in model:
            t.findings.append(f"{p4r.Update.Type.Name(u.type)} of a key not held accepted: {key}")
        elif u.type == p4r.Update.DELETE:
            model.discard(key)


def one_read(rng: random.Random, c: Client, t: Tally) -> None:
    e = p4r.Entity()
    e.table_entry.table_id = rng.choice([0, L2_FWD, ACL, 12345])
    req = p4r.ReadRequest(device_id=c.device_id if rng.random() > 0.05 else 99)
    req.entities.append(e)
    t.requests += 1
    try:
        for _ in c._read(req, timeout=DEADLINE_S):
            pass
    except grpc.RpcError as err:
        if err.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
            t.findings.append("Read: no answer within the deadline")
        elif err.code().name not in ALLOWED:
            t.findings.append(f"Read refused with {err.code().name}: {err.details()}")


def bad_pipeline(rng: random.Random, c: Client, t: Tally) -> None:
    """A pipeline push the server must refuse, leaving the running one and its tables alone."""
    info = load_p4info(P4INFO)
    device = JSON.read_bytes()
    r = rng.random()
    if r < 0.4:
        info.tables[rng.randrange(len(info.tables))].preamble.id = rng.choice([0, 7, info.actions[0].preamble.id])
    elif r < 0.7:
        device = device[: rng.randrange(1, len(device))]
    else:
        device = rand_bytes(rng, rng.randint(0, 200))
    req = p4r.SetForwardingPipelineConfigRequest(device_id=c.device_id,
                                                 action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)  # fmt: skip
    c._election(req)
    req.config.p4info.CopyFrom(info)
    req.config.p4_device_config = device
    t.requests += 1
    try:
        c._set(req, timeout=DEADLINE_S)
        t.findings.append(f"a bad pipeline push was accepted (variant {r:.2f})")
    except grpc.RpcError as err:
        if err.code().name not in ALLOWED:
            t.findings.append(f"bad pipeline refused with {err.code().name}: {err.details()}")


def read_keys(c: Client) -> set:
    keys = set()
    for table in (L2_FWD, ACL):
        e = p4r.Entity()
        e.table_entry.table_id = table
        for ent in c.read([e]):
            k = key_of(ent.table_entry)
            keys.add(k if k is not None else ("unreadable", str(ent)))
    return keys


def fuzz(addr: str, seconds: float, seed: int, alive=lambda: True, progress=None) -> Tally:
    rng, t, model = random.Random(seed), Tally(), set()
    c = Client(addr, device_id=0, election_id=1)
    assert c.arbitrate(1).status.code == 0
    c.set_pipeline(load_p4info(P4INFO), JSON.read_bytes())
    end, next_note = time.monotonic() + seconds, time.monotonic() + 30
    while time.monotonic() < end and len(t.findings) < 20:
        r = rng.random()
        if r < 0.85:
            one_write(rng, c, model, t)
        elif r < 0.97:
            one_read(rng, c, t)
        else:
            bad_pipeline(rng, c, t)
        if not alive():
            t.findings.append("the switch died")
            return t
        if progress and time.monotonic() >= next_note:
            progress(t, len(model))
            next_note += 30
    try:
        held = read_keys(c)
    except grpc.RpcError as err:
        t.findings.append(f"reading the tables back: {err.code().name}: {err.details()}")
        return t
    if held != model:
        t.findings.append(f"tables hold {len(held)} keys, the model {len(model)}: "
                          f"{sorted(map(str, held ^ model))[:5]}")  # fmt: skip
    return t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", type=Path, help="write the totals here")
    a = ap.parse_args()

    def note(t: Tally, held: int) -> None:
        print(f"fuzz_p4runtime: {t.requests} requests, {t.updates} updates, {t.accepted} accepted, "
              f"{held} entries held, {len(t.findings)} findings", file=sys.stderr, flush=True)  # fmt: skip

    t0 = time.monotonic()
    with p4runtime_switch() as (addr, _, p):
        t = fuzz(addr, a.seconds, a.seed, alive=lambda: p.poll() is None, progress=note)
    out = {"seconds": round(time.monotonic() - t0, 1), "seed": a.seed, "requests": t.requests,
           "updates": t.updates, "accepted": t.accepted, "refused": t.refused, "findings": t.findings}  # fmt: skip
    print(json.dumps(out, indent=1))
    if a.json:
        a.json.write_text(json.dumps(out, indent=1) + "\n")
    return 1 if t.findings else 0


if __name__ == "__main__":
    sys.exit(main())

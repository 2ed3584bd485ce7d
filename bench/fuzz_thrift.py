"""Fuzzing bmv2's Thrift API on `lanes switch --thrift-port` with bmv2's own generated client:
table adds, modifies, deletes and default actions with random names, match parameters (types,
widths, prefixes, masks, ranges), action data and priorities; counter, register and meter calls
with random names, indexes and values.

Checks, per call: it returns or raises one of the API's own errors (InvalidTableOperation and
the like); a closed connection or an application error is a finding, and so is a dead switch.
A table model (handles the switch gave) is the oracle: at the end each table's entries read
back are exactly the model's handles.

    .venv/bin/python bench/fuzz_thrift.py [--seconds 600] [--seed N] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from bm_runtime.standard import Standard
from bm_runtime.standard import ttypes as T
from thrift.protocol import TBinaryProtocol, TMultiplexedProtocol
from thrift.transport import TSocket, TTransport

sys.path.insert(0, str(Path(__file__).resolve().parent))
from switch_proc import REPO, command_port_switch  # noqa: E402

PROGRAM = REPO / "p4" / "p4rt_test.json"
TABLES = ["MyIngress.l2_fwd", "MyIngress.acl"]
ACTIONS = ["MyIngress.set_port", "MyIngress.drop", "NoAction", "MyIngress.send_to_cpu"]
API_ERRORS = (T.InvalidTableOperation, T.InvalidCounterOperation, T.InvalidMeterOperation,
              T.InvalidRegisterOperation)  # fmt: skip


@dataclass
class Tally:
    calls: int = 0
    ok: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    findings: list[str] = field(default_factory=list)


def some_bytes(rng: random.Random, usual: int) -> bytes:
    n = usual if rng.random() < 0.8 else rng.choice([0, 1, usual + 1, usual - 1 if usual > 1 else 2, 64])
    return bytes(rng.getrandbits(8) for _ in range(max(0, n)))


def match_param(rng: random.Random, kind: str, nbytes: int, bits: int) -> T.BmMatchParam:
    kind = kind if rng.random() < 0.9 else rng.choice(["exact", "lpm", "ternary", "range", "valid"])
    P = T.BmMatchParamType
    if kind == "exact":
        return T.BmMatchParam(type=P.EXACT, exact=T.BmMatchParamExact(some_bytes(rng, nbytes)))
    if kind == "lpm":
        return T.BmMatchParam(type=P.LPM, lpm=T.BmMatchParamLPM(some_bytes(rng, nbytes), rng.randint(-1, bits + 2)))
    if kind == "ternary":
        return T.BmMatchParam(type=P.TERNARY, ternary=T.BmMatchParamTernary(some_bytes(rng, nbytes), some_bytes(rng, nbytes)))
    if kind == "range":
        return T.BmMatchParam(type=P.RANGE, range=T.BmMatchParamRange(some_bytes(rng, nbytes), some_bytes(rng, nbytes)))
    return T.BmMatchParam(type=P.VALID, valid=T.BmMatchParamValid(rng.random() < 0.5))


def key_for(rng: random.Random, table: str) -> list[T.BmMatchParam]:
    if table == "MyIngress.l2_fwd":
        params = [match_param(rng, "exact", 6, 48)]
    else:
        params = [match_param(rng, "ternary", 2, 16), match_param(rng, "range", 2, 9)]
    if rng.random() < 0.05:
        params = params[:-1] if rng.random() < 0.5 else params + params[:1]
    return params


def action_data(rng: random.Random, action: str) -> list[bytes]:
    n = 1 if action == "MyIngress.set_port" else 0
    if rng.random() < 0.05:
        n = rng.choice([0, 1, 2])
    return [some_bytes(rng, 2) for _ in range(n)]


def call(t: Tally, fn, *args):
    """Runs one API call; an API error is an answer, anything else a finding (re-raised)."""
    t.calls += 1
    try:
        out = fn(*args)
        t.ok += 1
        return out
    except API_ERRORS as e:
        name = f"{type(e).__name__}:{getattr(e, 'code', '?')}"
        t.refused[name] = t.refused.get(name, 0) + 1
        raise


def step(rng: random.Random, c, model: dict[str, set[int]], t: Tally) -> None:
    table = rng.choice(TABLES) if rng.random() > 0.03 else rng.choice(["", "nosuch", "MyIngress.port_counter"])
    action = rng.choice(ACTIONS) if rng.random() > 0.03 else rng.choice(["", "nosuch", "MyIngress.port_stats"])
    r = rng.random()
    try:
        if r < 0.45:
            prio = rng.choice([0, 1, 5, 100]) if rng.random() > 0.05 else rng.choice([-1, -(2**31), 2**31 - 1])
            opts = T.BmAddEntryOptions(priority=prio)
            h = call(t, c.bm_mt_add_entry, 0, table, key_for(rng, table), action, action_data(rng, action), opts)
            if table not in model:
                t.findings.append(f"add to {table!r} accepted")
            elif h in model[table]:
                t.findings.append(f"add to {table} returned handle {h}, already held")
            else:
                model[table].add(h)
        elif r < 0.6:
            h = rng.choice(sorted(model.get(table, set())) or [0]) if rng.random() < 0.8 else rng.randint(-5, 2**31 - 1)
            call(t, c.bm_mt_delete_entry, 0, table, h)
            if h not in model.get(table, set()):
                t.findings.append(f"delete of handle {h} not held in {table!r} accepted")
            model[table].discard(h)
        elif r < 0.7:
            h = rng.choice(sorted(model.get(table, set())) or [0]) if rng.random() < 0.8 else rng.randint(-5, 2**31 - 1)
            call(t, c.bm_mt_modify_entry, 0, table, h, action, action_data(rng, action))
            if h not in model.get(table, set()):
                t.findings.append(f"modify of handle {h} not held in {table!r} accepted")
        elif r < 0.75:
            call(t, c.bm_mt_set_default_action, 0, table, action, action_data(rng, action))
        elif r < 0.85:
            name = rng.choice(["MyIngress.port_counter", "MyIngress.acl_counter", "nosuch"])
            idx = rng.choice([0, 1, 511, 512, -1, 2**31 - 1])
            if rng.random() < 0.5:
                call(t, c.bm_counter_read, 0, name, idx)
            else:
                call(t, c.bm_counter_write, 0, name, idx, T.BmCounterValue(rng.randint(-5, 2**40), rng.randint(-5, 2**40)))
        elif r < 0.95:
            name = rng.choice(["MyIngress.last_len", "nosuch", "MyIngress.port_counter"])
            idx = rng.choice([0, 1, 511, 512, -1])
            if rng.random() < 0.5:
                call(t, c.bm_register_read, 0, name, idx)
            else:
                call(t, c.bm_register_write, 0, name, idx, rng.choice([0, 1, 2**32, -1, 2**62]))
        elif r < 0.98:
            name = rng.choice(["MyIngress.port_meter", "MyIngress.acl_meter", "nosuch"])
            rates = [T.BmMeterRateConfig(rng.random() * rng.choice([1, 1e9, -1]), rng.randint(-1, 10**6))
                     for _ in range(rng.choice([2, 2, 1, 3, 0]))]  # fmt: skip
            call(t, c.bm_meter_set_rates, 0, name, rng.choice([0, 511, 512, -1]), rates)
        else:
            call(t, c.bm_mt_get_entries, 0, table)
    except API_ERRORS:
        pass


def switch():
    """The switch the fuzzer runs against: (command port, process)."""
    return command_port_switch(PROGRAM)


def fuzz(port: int, seconds: float, seed: int, alive=lambda: True, progress=None) -> Tally:
    rng, t = random.Random(seed), Tally()
    model: dict[str, set[int]] = {name: set() for name in TABLES}
    sock = TSocket.TSocket("127.0.0.1", port)
    sock.setTimeout(30_000)  # no answer in 30 s is a hang
    transport = TTransport.TBufferedTransport(sock)
    c = Standard.Client(TMultiplexedProtocol.TMultiplexedProtocol(TBinaryProtocol.TBinaryProtocol(transport), "standard"))
    transport.open()
    end, next_note = time.monotonic() + seconds, time.monotonic() + 30
    try:
        while time.monotonic() < end and len(t.findings) < 20:
            try:
                step(rng, c, model, t)
            except Exception as e:  # noqa: BLE001 - anything but the API's own errors is a finding
                t.findings.append(f"{type(e).__name__}: {e}")
                return t
            if not alive():
                t.findings.append("the switch died")
                return t
            if progress and time.monotonic() >= next_note:
                progress(t)
                next_note += 30
        for table in TABLES:
            held = {e.entry_handle for e in c.bm_mt_get_entries(0, table)}
            if held != model[table]:
                t.findings.append(f"{table} holds {len(held)} entries, the model {len(model[table])}")
    finally:
        transport.close()
    return t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()

    def note(t: Tally) -> None:
        print(f"fuzz_thrift: {t.calls} calls, {t.ok} answered, {len(t.findings)} findings", file=sys.stderr, flush=True)

    t0 = time.monotonic()
    with switch() as (port, p):
        t = fuzz(port, a.seconds, a.seed, alive=lambda: p.poll() is None, progress=note)
    out = {"seconds": round(time.monotonic() - t0, 1), "seed": a.seed, "calls": t.calls, "answered": t.ok,
           "refused": t.refused, "findings": t.findings}  # fmt: skip
    print(json.dumps(out, indent=1))
    if a.json:
        a.json.write_text(json.dumps(out, indent=1) + "\n")
    return 1 if t.findings else 0


if __name__ == "__main__":
    sys.exit(main())

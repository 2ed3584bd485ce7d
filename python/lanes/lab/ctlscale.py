"""Control-plane cost of a prioritisation change as the network grows (thesis 7.4 and the
conference paper's discussion: strict needs N*M writes per change, RL-SP-DRR N): N lanes switch
processes (no ports, loopback P4Runtime only), M classes per switch in tm_basic's src_ip_prio
table, then the RUNTIME change repeated; each write is one P4Runtime Write RPC, sent one after the
other as the lab's controller does. Reports writes and wall time per change.

    .venv/bin/python -m lanes.lab.ctlscale [--switches 1,4,8,16] [--classes 3,10,30] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from lanes.errors import LanesError
from lanes.lab.p4rt import P4RuntimeTables
from lanes.lab.sweep.matrix import loadavg

REPO = Path(__file__).resolve().parents[3]
PROGRAM = REPO / "p4" / "tm_basic.json"
P4INFO = REPO / "p4" / "tm_basic.p4info.txtpb"
QUANTUM = 7000
LINK_BPS = 100e6 / 8


def _prefix(k: int) -> str:
    return f"10.{k // 250}.{k % 250}.0/24"


def start_switches(n: int, base_port: int) -> list[subprocess.Popen]:
    lanes = str(Path(sys.executable).with_name("lanes"))
    procs = []
    for i in range(n):
        cmd = [lanes, "switch", "--no-p4", "--device-id", "0", "--thrift-port", str(base_port + 2 * i + 1),
               "--", "--grpc-server-addr", f"127.0.0.1:{base_port + 2 * i}"]  # fmt: skip
        procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return procs


def change(tables: list[P4RuntimeTables], m: int, alg: str, prioritise: bool) -> tuple[list[float], list[float]]:
    """One RUNTIME change: class 0 is the high class. strict rewrites every class's rate (N*M
    writes), rlsp-drr only the high class's priority and rate (N). Returns the seconds each write
    took: the first to each switch, and the ones that followed it to the same switch."""
    first: list[float] = []
    then: list[float] = []
    for t in tables:
        for k in range(m if alg == "strict" else 1):
            share = (0.6 if k == 0 else 0.4 / (m - 1)) if prioritise else 1 / m
            prio = (7 if k == 0 else 5) if prioritise else 5
            t0 = time.perf_counter()
            t.modify_class(_prefix(k), prio, round(share * LINK_BPS), QUANTUM)
            (then if k else first).append(time.perf_counter() - t0)
    return first, then


def measure(n: int, m: int, repeats: int, base_port: int) -> list[dict]:
    procs = start_switches(n, base_port)
    tables: list[P4RuntimeTables] = []
    try:
        for i in range(n):
            tables.append(P4RuntimeTables(f"s{i}", base_port + 2 * i, 0, P4INFO, PROGRAM))
        t0 = time.perf_counter()
        for t in tables:
            for k in range(m):
                t.add_class(_prefix(k), 5, round(LINK_BPS / m), QUANTUM)
        setup_s = time.perf_counter() - t0
        out = []
        for alg in ("strict", "rlsp-drr"):
            walls, writes, firsts, thens = [], 0, [], []
            for r in range(2 * repeats):  # on, off, on, off ...
                began = time.perf_counter()
                first, then = change(tables, m, alg, prioritise=r % 2 == 0)
                walls.append(time.perf_counter() - began)
                writes = len(first) + len(then)
                firsts += first
                thens += then
            out.append({"switches": n, "classes": m, "alg": alg, "writes_per_change": writes,
                        "wall_ms_median": round(1e3 * statistics.median(walls), 2),
                        "wall_ms_max": round(1e3 * max(walls), 2),
                        "ms_per_write": round(1e3 * statistics.median(walls) / writes, 3),
                        # a switch's first write of a change against the ones right after it
                        "first_write_ms_median": round(1e3 * statistics.median(firsts), 3),
                        "next_write_ms_median": round(1e3 * statistics.median(thens), 3) if thens else None,
                        "setup_writes": n * m, "setup_s": round(setup_s, 3), "load1": loadavg()})  # fmt: skip
        return out
    finally:
        for t in tables:
            t.close()
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def _ints(s: str, what: str) -> list[int]:
    try:
        v = [int(x) for x in s.split(",") if x]
    except ValueError:
        raise LanesError(f"--{what}: expected comma-separated numbers, got '{s}'") from None
    if not v or min(v) < 1:
        raise LanesError(f"--{what}: numbers of at least 1, got '{s}'")
    return v


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--switches", default="1,4,8,16")
    ap.add_argument("--classes", default="3,10,30")
    ap.add_argument("--repeats", type=int, default=5, help="changes on and off, each")
    ap.add_argument("--port", type=int, default=19700, help="first loopback port (two per switch)")
    a = ap.parse_args(argv)
    try:
        ns, ms = _ints(a.switches, "switches"), _ints(a.classes, "classes")
        if max(ms) > 250 * 250 or not 1 <= a.repeats <= 100:
            raise LanesError("--classes at most 62500, --repeats 1 to 100")
        for n in ns:
            for m in ms:
                print(f"ctlscale: {n} switches x {m} classes ...", file=sys.stderr, flush=True)
                for row in measure(n, m, a.repeats, a.port):
                    print(json.dumps(row), flush=True)
    except LanesError as e:
        print(f"ctlscale: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

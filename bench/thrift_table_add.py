"""table_add throughput on the switch's command port, three ways, against a `lanes switch`
started here on 127.0.0.1 without ports (p4/p4rt_test, exact table l2_fwd):

- bmv2's simple_switch_CLI (Thrift), N `table_add` lines on its stdin;
- `lanes ctl` (the text protocol), the same N lines on its stdin;
- the generated Thrift client calling bm_mt_add_entry N times (no CLI parsing or printing).

Each CLI run is timed with N and with 1 command; the rate is (N - 1) / (t_N - t_1), so process
start-up and simple_switch_CLI's JSON download are left out. The table is cleared between runs.

    .venv/bin/python bench/thrift_table_add.py [--entries 2000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = REPO / ".venv" / "bin"
PROGRAM = REPO / "p4" / "p4rt_test.json"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lines(n: int) -> str:
    return "".join(f"table_add l2_fwd set_port 02:00:00:00:{i >> 8 & 0xFF:02x}:{i & 0xFF:02x} => {1 + i % 4}\n"
                   for i in range(n))  # fmt: skip


def timed(cmd: list[str], stdin: str) -> float:
    t = time.perf_counter()
    r = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=600, check=False)
    dt = time.perf_counter() - t
    if r.returncode != 0 or "Error" in r.stdout or "Invalid" in r.stdout:
        sys.exit(f"thrift_table_add: {cmd[0]} failed: {(r.stderr or r.stdout)[-300:]}")
    return dt


def clear(port: int) -> None:
    subprocess.run(
        [str(BIN / "lanes"), "ctl", "--thrift-port", str(port), "-c", "table_clear l2_fwd"], check=True
    )


def cli_rate(cmd: list[str], port: int, n: int) -> float:
    clear(port)
    t1 = timed(cmd, lines(1))
    clear(port)
    tn = timed(cmd, lines(n))
    clear(port)
    return (n - 1) / (tn - t1)


def client_rate(port: int, n: int) -> float:
    from bm_runtime.standard import Standard
    from bm_runtime.standard.ttypes import (
        BmAddEntryOptions,
        BmMatchParam,
        BmMatchParamExact,
        BmMatchParamType,
    )
    from thrift.protocol import TBinaryProtocol, TMultiplexedProtocol
    from thrift.transport import TSocket, TTransport

    clear(port)
    tr = TTransport.TBufferedTransport(TSocket.TSocket("127.0.0.1", port))
    c = Standard.Client(
        TMultiplexedProtocol.TMultiplexedProtocol(TBinaryProtocol.TBinaryProtocol(tr), "standard")
    )
    tr.open()
    opts = BmAddEntryOptions(priority=0)
    keys = [
        [
            BmMatchParam(
                type=BmMatchParamType.EXACT,
                exact=BmMatchParamExact((0x0200_0000_0000 + i).to_bytes(6, "big")),
            )
        ]
        for i in range(n)
    ]
    t = time.perf_counter()
    for i, k in enumerate(keys):
        c.bm_mt_add_entry(0, "MyIngress.l2_fwd", k, "MyIngress.set_port", [bytes([0, 1 + i % 4])], opts)
    dt = time.perf_counter() - t
    tr.close()
    clear(port)
    return n / dt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entries", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    if a.entries < 2 or a.runs < 1:
        sys.exit("thrift_table_add: --entries must be at least 2 and --runs at least 1")
    port = free_port()
    sw = subprocess.Popen(
        [str(BIN / "lanes"), "switch", str(PROGRAM), "--no-grpc", "--thrift-port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if sw.poll() is not None or time.monotonic() > deadline:
                    sys.exit("thrift_table_add: the switch did not start")
                time.sleep(0.1)
        ways = {
            "simple_switch_CLI (Thrift)": lambda: cli_rate(
                [str(BIN / "simple_switch_CLI"), "--thrift-port", str(port)], port, a.entries
            ),
            "lanes ctl (text)": lambda: cli_rate(
                [str(BIN / "lanes"), "ctl", "--thrift-port", str(port)], port, a.entries
            ),
            "Thrift client, bm_mt_add_entry": lambda: client_rate(port, a.entries),
        }
        result = {"entries": a.entries, "load_avg": round(os.getloadavg()[0], 1), "per_s": {}}
        for name, fn in ways.items():
            rates = []
            for r in range(a.runs):
                print(f"{name}: run {r + 1}/{a.runs}", file=sys.stderr, flush=True)
                rates.append(fn())
            result["per_s"][name] = round(statistics.median(rates))
        print(json.dumps(result, indent=1))
    finally:
        sw.terminate()
        sw.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())

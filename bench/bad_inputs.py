"""Bad inputs across every `lanes` subcommand: each must fail with one line on stderr naming the
problem, a non-zero exit and no traceback. Writes a table (input, the error, exit code, seconds)
to bench/results/bad_inputs.md and its raw JSON; tests/test_bad_inputs.py runs the same table.

    .venv/bin/python bench/bad_inputs.py [--lanes PATH] [--out-md FILE] [--out-json FILE]

Run as root (as CI does): a few cases open a switch port. Nothing listens or sends traffic.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TM_BASIC_JSON = str(REPO / "p4" / "tm_basic.json")
TM_BASIC_P4 = str(REPO / "p4" / "tm_basic.p4")
# a port nothing listens on (TCP port 9 is "discard"; refused on loopback unless a service runs)
CLOSED_PORT = "9"


@dataclass
class Case:
    command: str
    what: str
    argv: list[str]
    expect: str  # a piece of the one error line
    files: dict[str, str] = field(default_factory=dict)


CASES = [
    Case("lanes", "unknown subcommand", ["bogus"], "invalid choice: 'bogus'"),
    Case("sim", "scenario file missing", ["sim", "missing.toml", "--out", "o.json"], "cannot read scenario"),
    Case("sim", "scenario not TOML", ["sim", "bad.toml", "--out", "o.json"], "bad.toml: scenario line",
         {"bad.toml": "x = [\n"}),
    Case("sim", "scenario value of the wrong type", ["sim", "t.toml", "--out", "o.json"], "t.toml: scenario line 1",
         {"t.toml": "[port]\nrate = 'fast'\n"}),
    Case("sim", "no --out", ["sim", "x.toml"], "required: --out"),
    Case("switch", "program file missing", ["switch", "missing.json"], "no such program file"),
    Case("switch", "program not JSON", ["switch", "bad.json"], "bad.json: JSON: not valid JSON",
         {"bad.json": '{"not": "bmv2'}),
    Case("switch", "JSON that is not a bmv2 program", ["switch", "empty.json"], "empty.json",
         {"empty.json": "{}"}),
    Case("switch", "port rate without a port", ["switch", "--port-rate", "fast", TM_BASIC_JSON], "must look like N@RATE"),
    Case("switch", "interface spec without a port number", ["switch", "-i", "foo", TM_BASIC_JSON], "must look like N@IFACE"),
    Case("switch", "interface that does not exist", ["switch", "-i", "1@nosuchif0", TM_BASIC_JSON],
         "no interface named 'nosuchif0'"),
    Case("switch", "Thrift port out of range", ["switch", "--thrift-port", "99999", TM_BASIC_JSON], "port must be 0-65535"),
    Case("switch", "P4Runtime address without a port", ["switch", TM_BASIC_JSON, "--", "--grpc-server-addr", "nonsense"],
         "is not HOST:PORT"),
    Case("switch", "TLS key file missing", ["switch", TM_BASIC_JSON, "--", "--grpc-server-ssl", "--grpc-server-cert",
                                             "no.crt", "--grpc-server-key", "no.key"], "no.crt"),
    Case("switch", "unknown option", ["switch", "--bogus", TM_BASIC_JSON], "unrecognized arguments: --bogus"),
    Case("ctl", "no switch on the port", ["ctl", "--thrift-port", CLOSED_PORT, "-c", "table_dump x"],
         f"no switch on 127.0.0.1:{CLOSED_PORT}"),
    Case("load-runtime", "runtime file missing", ["load-runtime", "missing.json"], "cannot read missing.json"),
    Case("load-runtime", "runtime file not JSON", ["load-runtime", "bad.json"], "bad.json: not JSON",
         {"bad.json": '{"target": "bmv2'}),
    Case("load-runtime", "P4Info the runtime file names is missing", ["load-runtime", "rt.json"],
         "p4info file not found: nope.txt",
         {"rt.json": '{"target": "bmv2", "p4info": "nope.txt", "bmv2_json": "nope.json", "table_entries": []}'}),
    Case("consolidate", "trace missing", ["consolidate", "delay", "missing.csv", "--cores", "4"], "missing.csv: cannot read"),
    Case("consolidate", "trace with a value that is not a number", ["consolidate", "delay", "bad.csv", "--cores", "4"],
         "bad.csv:2: not a number", {"bad.csv": "a,b\n1,zz\n"}),
    Case("fabric", "unknown engine", ["fabric", "route", "net.topo", "--engine", "bogus", "--out", "o.dump"],
         "invalid choice: 'bogus'"),
    Case("fabric", "tables to check missing", ["fabric", "check", "missing.topo", "missing.dump"], "cannot read missing.dump"),
    Case("lab", "unknown topology", ["lab", "run", "--topo", "bogus", "--out", "x"], "unknown topology 'bogus'"),
    Case("lab", "unknown scheduler", ["lab", "run", "--alg", "bogus", "--out", "x"], "unknown algorithm 'bogus'"),
    Case("lab", "negative duration", ["lab", "run", "--duration", "-5", "--out", "x"], "--duration must be at least"),
    Case("lab", "report of a run directory that does not exist", ["lab", "report", "--out", "r", "missing_dir"],
         "missing_dir: no such run directory"),
    Case("p4c", "source missing", ["p4c", "missing.p4"], "missing.p4: no such file"),
    Case("p4c", "syntax error", ["p4c", "bad.p4"], "bad.p4:1:", {"bad.p4": "header h { bit<8> a; } parser"}),
    Case("p4c", "construct the switch cannot run", ["p4c", "ext.p4"], "extern function 'f' is not supported",
         {"ext.p4": "#include <core.p4>\n#include <v1model.p4>\nextern void f();\n"
                    "struct H {} struct M {}\n"
                    "parser P(packet_in p, out H h, inout M m, inout standard_metadata_t s) { state start { transition accept; } }\n"
                    "control V(inout H h, inout M m) { apply {} }\n"
                    "control I(inout H h, inout M m, inout standard_metadata_t s) { apply { f(); } }\n"
                    "control E(inout H h, inout M m, inout standard_metadata_t s) { apply {} }\n"
                    "control C(inout H h, inout M m) { apply {} }\n"
                    "control D(packet_out p, in H h) { apply {} }\n"
                    "V1Switch(P(), V(), I(), E(), C(), D()) main;\n"}),
]  # fmt: skip


@dataclass
class Outcome:
    case: Case
    exit_code: int
    stderr: str
    seconds: float

    @property
    def lines(self) -> list[str]:
        return [x for x in self.stderr.splitlines() if x.strip()]

    @property
    def ok(self) -> bool:
        return (
            self.exit_code != 0
            and len(self.lines) == 1
            and self.case.expect in self.lines[0]
            and "Traceback" not in self.stderr
        )


def run_case(lanes: str, case: Case, timeout_s: float = 60.0) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="lanes-bad-") as d:
        for name, text in case.files.items():
            Path(d, name).write_text(text)
        env = dict(os.environ, PYTHONWARNINGS="ignore")
        t0 = time.monotonic()
        try:
            p = subprocess.run([lanes, *case.argv], cwd=d, env=env, capture_output=True, text=True,
                               timeout=timeout_s, stdin=subprocess.DEVNULL)  # fmt: skip
            code, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired as e:
            code, err = -9, f"timed out after {timeout_s:.0f} s: {e.stderr or ''}"
        return Outcome(case, code, err, time.monotonic() - t0)


def markdown(outcomes: list[Outcome], lanes: str) -> str:
    ok = sum(o.ok for o in outcomes)
    slow = [o for o in outcomes if o.seconds > 1.0]
    over = "".join(f" ({o.case.command}, {o.case.what}: {o.seconds:.2f} s)" for o in slow)
    rows = "\n".join(
        f"| {o.case.command} | {o.case.what} | `lanes {' '.join(o.case.argv).replace(str(REPO) + '/', '')}` "
        f"| {(o.lines[0] if o.lines else '(nothing)').replace('|', '/').replace(str(REPO) + '/', '')} "
        f"| {o.exit_code} | {o.seconds:.2f} | {'yes' if o.ok else 'NO'} |"
        for o in outcomes
    )
    return f"""# Bad inputs, one line each

`.venv/bin/python bench/bad_inputs.py` ({time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())},
{platform.node() or "this machine"}, load {os.getloadavg()[0]:.1f}; `{Path(lanes).name}` as installed by make setup).
Each input is run in an empty directory holding only the files it names; "one line" means
exactly one non-empty line on stderr holding the expected words, a non-zero exit and no
traceback. Seconds are wall time of the whole process, interpreter start included, on a shared
2-core machine. tests/test_bad_inputs.py runs the same table (without timing it).

Raw: `bench/results/bad_inputs.json`.

| command | bad input | run | error line | exit | s | one line |
|---|---|---|---|---|---|---|
{rows}

{ok} of {len(outcomes)} fail with one line; {len(outcomes) - len(slow)} of {len(outcomes)} within a second{over}.
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lanes", default=str(REPO / ".venv" / "bin" / "lanes"))
    ap.add_argument("--out-md", type=Path, default=REPO / "bench" / "results" / "bad_inputs.md")
    ap.add_argument("--out-json", type=Path, default=REPO / "bench" / "results" / "bad_inputs.json")
    a = ap.parse_args()
    if not Path(a.lanes).exists():
        print(f"bad_inputs: no lanes command at {a.lanes} (run make setup)", file=sys.stderr)
        return 2
    outcomes = []
    for i, case in enumerate(CASES, 1):
        o = run_case(a.lanes, case)
        print(f"[{i}/{len(CASES)}] {case.command}: {case.what}: {'ok' if o.ok else 'NOT ONE LINE'} ({o.seconds:.2f} s)",
              flush=True)  # fmt: skip
        outcomes.append(o)
    a.out_json.write_text(json.dumps([
        {"command": o.case.command, "what": o.case.what, "argv": o.case.argv, "expect": o.case.expect,
         "exit_code": o.exit_code, "stderr": o.stderr, "seconds": round(o.seconds, 3), "one_line": o.ok}
        for o in outcomes], indent=1) + "\n")  # fmt: skip
    a.out_md.write_text(markdown(outcomes, a.lanes))
    print(f"bad_inputs: {sum(o.ok for o in outcomes)} of {len(outcomes)} one line; {a.out_md}")
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())

"""`lanes p4c`: the compiler from the command line writes the bmv2 JSON and P4Info the switch and
P4Runtime server load; a bad program gives one line `file:line:col: error: ...` and exit 1."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from lanes._native import p4c_compile

REPO = Path(__file__).resolve().parents[1]
LANES = str(REPO / ".venv" / "bin" / "lanes")


def test_compiles_tm_basic_to_the_committed_files(tmp_path: Path) -> None:
    out, info = tmp_path / "tm.json", tmp_path / "tm.p4info.txtpb"
    r = subprocess.run(
        [LANES, "p4c", str(REPO / "p4" / "tm_basic.p4"), "-o", str(out), "--p4runtime-files", str(info)],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text()) == json.loads((REPO / "p4" / "tm_basic.json").read_text())
    assert info.read_text() == (REPO / "p4" / "tm_basic.p4info.txtpb").read_text()
    # p4c's id for the table: kind byte 2, then the name's hash
    assert 'id: 37375156\n    name: "MyIngress.ipv4_lpm"' in info.read_text()


def test_error_is_one_line_with_the_place(tmp_path: Path) -> None:
    src = (REPO / "p4" / "l3_basic.p4").read_text().replace("hdr.ipv4.ttl - 1", "hdr.ipv4.tttl - 1")
    bad = tmp_path / "bad.p4"
    bad.write_text(src)
    r = subprocess.run([LANES, "p4c", str(bad)], check=False, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    line = next(i for i, text in enumerate(src.splitlines(), 1) if "tttl" in text)
    col = src.splitlines()[line - 1].index("tttl") + 1
    assert lines[0].startswith(f"{bad}:{line}:{col}: error: header ipv4_t (hdr.ipv4) has no field 'tttl'")
    assert not (tmp_path / "bad.json").exists()


def test_defines_and_include_dirs_reach_the_compiler(tmp_path: Path) -> None:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "port.p4").write_text("const bit<9> OUT = PORT;\n")
    prog = tmp_path / "prog.p4"
    prog.write_text(PORT_PROG)  # includes "port.p4": not beside it, found through -I
    json_text, _ = p4c_compile(str(prog), [str(inc)], [("PORT", "7")])
    doc = json.loads(json_text)
    prims = [p for a in doc["actions"] for p in a["primitives"]]
    assert {"type": "hexstr", "value": "0x7"} in [p["parameters"][1] for p in prims if p["op"] == "assign"]


PORT_PROG = """#include <v1model.p4>
#include "port.p4"
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
struct headers { ethernet_t eth; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { sm.egress_spec = OUT; } }
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_new_refusals_are_one_line_with_the_place(tmp_path: Path) -> None:
    """Functions are compiled now, recursion is refused; int and bit do not mix without a cast."""
    cases = [
        (
            "bit<9> f(in bit<9> v) { return f(v); }",
            "sm.egress_spec = f(1);",
            "return f(v)",
            7,
            "function 'f' calls itself: recursion is not allowed in P4",
        ),
        (
            "",
            "int<8> x = -1; bit<8> y = 2; bit<8> z = x + y;",
            "x + y",
            2,
            "type mismatch: int<8> + bit<8>; P4-16 does not mix int and bit",
        ),
    ]
    for decl, stmt, where, shift, msg in cases:
        src = PORT_PROG.replace('#include "port.p4"', decl).replace("sm.egress_spec = OUT;", stmt)
        bad = tmp_path / "refused.p4"
        bad.write_text(src)
        r = subprocess.run([LANES, "p4c", str(bad)], check=False, capture_output=True, text=True, timeout=60)
        assert r.returncode == 1
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1, r.stderr
        line = next(i for i, text in enumerate(src.splitlines(), 1) if where in text)
        col = src.splitlines()[line - 1].index(where) + 1 + shift
        assert lines[0].startswith(f"{bad}:{line}:{col}: error: {msg}"), lines[0]

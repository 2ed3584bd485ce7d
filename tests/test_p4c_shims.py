"""`p4c-bm2-ss` and `p4c` in the venv: lanes's compiler under p4c's names and options, as bmv2's
test driver, p4-utils and the P4 tutorials call them; bad input is one line and exit 1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parent.parent
L3 = REPO / "p4" / "l3_basic.p4"


def run(tool: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / tool), *args], capture_output=True, text=True, timeout=120,
                          check=False, cwd=cwd)  # fmt: skip


def one_line_error(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


def test_p4c_bm2_ss_writes_the_json_file_and_p4info(tmp_path: Path) -> None:
    out, info = tmp_path / "x.json", tmp_path / "x.p4info.txt"
    r = run("p4c-bm2-ss", "--p4v", "16", "--emit-externs", "-o", str(out), "--p4runtime-files",
            str(info), str(L3))  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text()) == json.loads((REPO / "p4" / "l3_basic.json").read_text())
    assert info.read_text() == (REPO / "p4" / "l3_basic.p4info.txtpb").read_text()


def test_p4c_writes_into_the_output_directory_and_p4info_by_extension(tmp_path: Path) -> None:
    out = tmp_path / "build"
    r = run("p4c", "--target", "bmv2", "--arch", "v1model", "--std", "p4-16", "-o", str(out),
            "--p4runtime-files", f"{out}/l3.p4info.json,{out}/l3.p4info.bin", str(L3))  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert json.loads((out / "l3_basic.json").read_text())["program"]
    tables = [t["preamble"]["name"] for t in json.loads((out / "l3.p4info.json").read_text())["tables"]]
    assert "MyIngress.ipv4_lpm" in tables
    assert (out / "l3.p4info.bin").stat().st_size > 0
    r = run("p4c", "-o", str(out), "--p4runtime-file", str(out / "old.txt"), "--p4runtime-format",
            "text", str(L3))  # fmt: skip
    assert r.returncode == 0 and "MyIngress.ipv4_lpm" in (out / "old.txt").read_text(), r.stderr


def test_includes_and_defines_reach_the_compiler(tmp_path: Path) -> None:
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "port.p4").write_text("const bit<9> OUT = PORT;\n")
    prog = tmp_path / "prog.p4"
    prog.write_text(
        '#include <core.p4>\n#include <v1model.p4>\n#include "port.p4"\n'
        "struct m {}\nstruct h {}\n"
        "parser P(packet_in p, out h hh, inout m mm, inout standard_metadata_t s) { state start { transition accept; } }\n"
        "control V(inout h hh, inout m mm) { apply {} }\n"
        "control I(inout h hh, inout m mm, inout standard_metadata_t s) { apply { s.egress_spec = OUT; } }\n"
        "control E(inout h hh, inout m mm, inout standard_metadata_t s) { apply {} }\n"
        "control C(inout h hh, inout m mm) { apply {} }\n"
        "control D(packet_out p, in h hh) { apply {} }\n"
        "V1Switch(P(), V(), I(), E(), C(), D()) main;\n"
    )
    r = run(
        "p4c-bm2-ss", "-I", str(tmp_path / "inc"), "-D", "PORT=3", "-o", str(tmp_path / "p.json"), str(prog)
    )
    assert r.returncode == 0, r.stderr
    assert "PORT" in one_line_error(run("p4c-bm2-ss", "-I", str(tmp_path / "inc"), "-o",
                                        str(tmp_path / "q.json"), str(prog)))  # fmt: skip


def test_bad_input_is_one_line_and_exit_1(tmp_path: Path) -> None:
    bad = tmp_path / "bad.p4"
    bad.write_text("control {\n")
    assert "bad.p4:" in one_line_error(run("p4c-bm2-ss", "-o", str(tmp_path / "b.json"), str(bad)))
    assert "no such file" in one_line_error(run("p4c-bm2-ss", str(tmp_path / "none.p4")))
    assert "P4-16" in one_line_error(run("p4c-bm2-ss", "--std", "p4-14", str(L3)))
    assert "v1model" in one_line_error(run("p4c", "--arch", "psa", str(L3)))
    assert "--bogus" in one_line_error(run("p4c", "--bogus", str(L3)))
    assert not (tmp_path / "b.json").exists()

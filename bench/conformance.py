"""p4c's bmv2 STF tests against lanes: every testdata/p4_16_samples/*-bmv2.p4 that has an .stf,
run through p4c's own, unmodified backends/bmv2/run-bmv2-test.py with the venv's bin first on
PATH (so `p4c-bm2-ss`, `simple_switch` and `simple_switch_CLI` are lanes's and bmv2's CLI).

Each program gets a result: refused by the compiler (its one-line reason), or compiled and then
passed, failed (the first mismatch the driver reports) or timed out. A compiled program's P4Info
(`lanes p4c --p4runtime-files`) is compared with the one p4c committed for it
(p4_16_samples_outputs/NAME.p4.p4info.txtpb): equal, or the first difference. The report (Markdown) has a
table per program, the totals of all programs and of the v1model ones, and p4c's bmv2 XFAIL list
(from its CMake files) apart. p4c is not copied anywhere: the driver runs from DIR.

    .venv/bin/python bench/conformance.py --p4c DIR [--p4c-commit SHA] [--timeout 120]
        [--only GLOB] [--out bench/results/conformance.md]
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conformance_outcome import Outcome, classify
from conformance_p4info import P4InfoVerdict, compare_files
from conformance_report import Row, write_report

REPO = Path(__file__).resolve().parents[1]
BIN = REPO / ".venv" / "bin"
TOOLS = ("simple_switch", "simple_switch_CLI", "p4c-bm2-ss", "psa_switch", "psa_switch_CLI", "p4c-bm2-psa")


class Refusal(Exception):
    pass


def p4c_commit(p4c: Path, given: str | None) -> str:
    if given:
        return given
    r = subprocess.run(["git", "-C", str(p4c), "rev-parse", "--show-toplevel", "HEAD"],
                       capture_output=True, text=True, check=False)  # fmt: skip
    lines = r.stdout.split()
    if r.returncode == 0 and len(lines) == 2 and Path(lines[0]).resolve() == p4c.resolve():
        return lines[1]
    raise Refusal(f"{p4c} is not a git checkout: give the commit it holds with --p4c-commit")


def xfail_list(p4c: Path) -> set[str]:
    """Programs in XFAIL_TESTS of p4c's bmv2 CMake files (paths relative to the checkout)."""
    names: set[str] = set()
    cmake = [
        *p4c.joinpath("backends", "bmv2").rglob("CMakeLists.txt"),
        *p4c.joinpath("backends", "bmv2").rglob("*.cmake"),
    ]
    for f in cmake:
        # comments first: they hold parentheses
        text = re.sub(r"#[^\n]*", "", f.read_text(errors="replace"))
        for block in re.finditer(
            r"(?:set\s*\(\s*XFAIL_TESTS|list\s*\(\s*APPEND\s+XFAIL_TESTS)(.*?)\)", text, re.S
        ):
            names.update(re.findall(r"testdata/\S+?\.p4\b", block.group(1)))
    return names


def arch_of(program: Path) -> str:
    text = program.read_text(errors="replace")
    for arch in ("v1model", "psa", "pna"):
        # p4c's bmv2 PSA programs include bmv2/psa.p4
        if re.search(rf'#include\s*[<"](?:bmv2/)?{arch}\.p4[>"]', text):
            return arch
    return "other"


def programs(p4c: Path, only: str | None) -> list[Path]:
    found = sorted(
        p
        for p in p4c.joinpath("testdata", "p4_16_samples").glob("*-bmv2.p4")
        if p.with_suffix(".stf").is_file()
    )
    return [p for p in found if only is None or fnmatch.fnmatch(p.name, only)]


def make_build_dir(work: Path, bin_dir: Path) -> Path:
    """What the driver expects of a p4c build directory: config.h saying simple_switch and
    psa_switch exist, and the compiler binaries in it."""
    build = work / "build"
    build.mkdir()
    build.joinpath("config.h").write_text(
        "/* lanes bench/conformance.py */\n#define HAVE_SIMPLE_SWITCH 1\n#define HAVE_PSA_SWITCH 1\n"
    )
    for tool in ("p4c-bm2-ss", "p4c-bm2-psa"):
        build.joinpath(tool).symlink_to(bin_dir / tool)
    return build


def run_one(p4c: Path, program: Path, build: Path, work: Path, env: dict, timeout_s: float) -> Outcome:
    test_dir = Path(tempfile.mkdtemp(prefix=program.stem + ".", dir=work))
    cmd = [sys.executable, str(p4c / "backends" / "bmv2" / "run-bmv2-test.py"), str(p4c), str(program),
           "-bd", str(build), "-td", str(test_dir), "-ll", "INFO"]  # fmt: skip
    if arch_of(program) == "psa":
        cmd.append("-p")  # p4c-bm2-psa, psa_switch, psa_switch_CLI
    # its own session, so a timeout ends the driver and the switch and CLI it started
    p = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True)  # fmt: skip
    try:
        out, _ = p.communicate(timeout=timeout_s)
        returncode: int | None = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        returncode = None
    # paths in messages relative to the checkout, as p4c's own lists name programs
    return classify(returncode, out.replace(f"{p4c}/", ""), timeout_s)


def p4info_verdict(p4c: Path, program: Path, work: Path) -> tuple[P4InfoVerdict | None, float]:
    """Ours against p4c's committed P4Info (None when p4c has none for the program), and the
    wall time of that `lanes p4c` run (process start included)."""
    reference = p4c / "testdata" / "p4_16_samples_outputs" / f"{program.name}.p4info.txtpb"
    out = Path(tempfile.mkdtemp(prefix=program.stem + ".p4info.", dir=work))
    start = time.monotonic()
    r = subprocess.run([str(BIN / "lanes"), "p4c", str(program), "-o", str(out / "prog.json"),
                        "--p4runtime-files", str(out / "prog.p4info.txtpb")],
                       capture_output=True, text=True, check=False)  # fmt: skip
    took = time.monotonic() - start
    if not reference.is_file():
        return None, took
    if r.returncode:
        return P4InfoVerdict(False, f"not written: {(r.stderr.strip().splitlines() or ['?'])[0]}"), took
    return compare_files(out / "prog.p4info.txtpb", reference), took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--p4c", type=Path, required=True, metavar="DIR", help="a p4c checkout (sources)")
    ap.add_argument("--p4c-commit", help="the commit DIR holds, if it is not a git checkout")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per program")
    ap.add_argument("--only", metavar="GLOB", help="only programs whose file name matches")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "conformance.md")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (driver logs)")
    a = ap.parse_args()
    try:
        return run(a)
    except Refusal as e:
        print(f"conformance: error: {e}", file=sys.stderr)
        return 1


def run(a: argparse.Namespace) -> int:
    driver = a.p4c / "backends" / "bmv2" / "run-bmv2-test.py"
    if not driver.is_file():
        raise Refusal(f"{driver} not found: --p4c must be a p4c source checkout")
    missing = [t for t in TOOLS if not (BIN / t).exists()]
    if missing:
        raise Refusal(f"{', '.join(missing)} not in {BIN}: run make setup")
    for module in ("ptf", "ply"):
        if subprocess.run(
            [sys.executable, "-c", f"import {module}"], capture_output=True, check=False
        ).returncode:
            raise Refusal(
                f"python module {module} missing: pip install -r bench/requirements-conformance.txt"
            )
    commit = p4c_commit(a.p4c, a.p4c_commit)
    xfail = xfail_list(a.p4c)
    todo = programs(a.p4c, a.only)
    if not todo:
        raise Refusal("no *-bmv2.p4 program with an .stf matched")
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    work = Path(tempfile.mkdtemp(prefix="lanes-conformance."))
    build = make_build_dir(work, BIN)
    rows: list[Row] = []
    try:
        for i, program in enumerate(todo, 1):
            start = time.monotonic()
            outcome = run_one(a.p4c, program, build, work, env, a.timeout)
            p4info, compile_s = p4info_verdict(a.p4c, program, work)
            rel = str(program.relative_to(a.p4c))
            rows.append(
                Row(
                    program.name,
                    arch_of(program),
                    rel in xfail,
                    outcome,
                    time.monotonic() - start,
                    p4info if outcome.compiled else None,
                    compile_s,
                )  # fmt: skip
            )
            why = f": {outcome.detail}" if outcome.detail else ""
            print(f"[{i}/{len(todo)}] {program.name}: {outcome.result} ({time.monotonic() - start:.1f} s){why}"[:200],
                  flush=True)  # fmt: skip
    finally:
        if a.keep:
            print(f"conformance: driver logs in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    write_report(a.out, rows, xfail, commit, a.timeout, a.only)
    print(f"conformance: {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

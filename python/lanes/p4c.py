"""`lanes p4c PROG.p4`: compile a P4-16 v1model or PSA program to the bmv2 JSON the switch loads and its
P4Info (options named as p4c-bm2-ss's). The compiler is Rust (crates/p4c), called in-process."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lanes.errors import LanesError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "p4c",
        help="compile a P4-16 v1model or PSA program to bmv2 JSON and P4Info",
        description="Compile PROG.p4 (P4-16, v1model with the lanes traffic-manager metadata) to the "
        "bmv2 JSON the switch loads and, with --p4runtime-files, its P4Info in protobuf text format "
        "(ids as p4c assigns them). <core.p4>, <v1model.p4> and <psa.p4> are built in (p4/include); "
        "the architecture is the program's main package (V1Switch or PSA_Switch). "
        "Errors: one line 'file:line:col: error: ...', exit status 1.",
    )
    p.add_argument("program", help="the .p4 source")
    p.add_argument("-o", "--output", help="bmv2 JSON to write (default: PROG.json beside the source)")
    p.add_argument("--p4runtime-files", metavar="FILE", help="P4Info (.txtpb / .txt) to write")
    p.add_argument("--arch", choices=("v1model", "psa"),
                   help="the architecture the program must be (default: whichever it instantiates)")  # fmt: skip
    p.add_argument("-I", dest="include", action="append", default=[], metavar="DIR", help="include directory")
    p.add_argument(
        "-D", dest="define", action="append", default=[], metavar="NAME[=VALUE]", help="define a macro"
    )
    p.set_defaults(func=run)


def compile_source(program: str | Path, include: list, define: list[str]) -> tuple[str, str]:
    """The bmv2 JSON and P4Info text of a program, with -I directories and -D NAME[=VALUE]
    defines; ValueError carries the compiler's one-line error."""
    from lanes import _native

    src = Path(program)
    if not src.is_file():
        raise LanesError(f"{src}: no such file")
    defines = [(name, value if eq else "1") for name, eq, value in (d.partition("=") for d in define)]
    return _native.p4c_compile(str(src), [str(d) for d in include], defines)


def program_arch(json_text: str) -> str:
    """The architecture of a compiled program: PSA's JSON has psa_switch's two parsers."""
    return "psa" if '"name": "egress_parser"' in json_text else "v1model"


def run(args: argparse.Namespace) -> int:
    src = Path(args.program)
    try:
        json_text, p4info = compile_source(src, args.include, args.define)
    except ValueError as e:
        print(e, file=sys.stderr)  # the compiler's one-line file:line:col: error: ...
        return 1
    found = program_arch(json_text)
    if args.arch and args.arch != found:
        raise LanesError(f"--arch {args.arch}: {src} is a {found} program")
    out = Path(args.output) if args.output else src.with_suffix(".json")
    try:
        out.write_text(json_text + "\n")
        if args.p4runtime_files:
            Path(args.p4runtime_files).write_text(p4info)
    except OSError as e:
        raise LanesError(f"cannot write output: {e}") from e
    return 0

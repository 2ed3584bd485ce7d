"""`p4c-bm2-ss` and `p4c`: lanes's P4-16 compiler under p4c's names and options.

`p4c-bm2-ss -o FILE.json PROG.p4` writes the JSON to FILE (`p4c-bm2-psa` the same for PSA programs); `p4c --target bmv2 --arch v1model
-o DIR PROG.p4` writes DIR/PROG.json, as the real tools do. P4Info goes where `--p4runtime-files`
says, in the format its extension asks for (.json, .bin, else text); `--p4runtime-file` with
`--p4runtime-format` is the older spelling. Options that do not change lanes's output (`--p4v 16`,
`--std p4-16`, `--emit-externs`, warning switches) are accepted; P4-14 and other architectures are
refused (PSA programs: `--arch psa`, or `p4c-bm2-psa`). A program the compiler refuses gives its one-line `file:line:col: error: ...` and exit 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lanes.compat.oneline_parser import OneLineParser
from lanes.errors import LanesError
from lanes.p4c import compile_source, program_arch

P4INFO_FORMATS = ("text", "json", "binary")


def build_parser(prog: str, output_is_dir: bool, arch: str = "v1model") -> argparse.ArgumentParser:
    p = OneLineParser(prog=prog, description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("program", help="the .p4 source")
    p.add_argument("-o", "--output", metavar="DIR" if output_is_dir else "FILE",
                   help="output directory (PROG.json is written there)" if output_is_dir
                   else "bmv2 JSON to write (default: PROG.json in the working directory)")  # fmt: skip
    p.add_argument("-b", "--target", default="bmv2")
    p.add_argument("-a", "--arch", default=arch)
    p.add_argument("--p4v", default="16")
    p.add_argument("--std", default="p4-16")
    p.add_argument("--p4runtime-files", metavar="FILES", help="comma-separated P4Info files to write")
    p.add_argument("--p4runtime-file", metavar="FILE", help="P4Info file (format: --p4runtime-format)")
    p.add_argument("--p4runtime-format", choices=P4INFO_FORMATS, default="binary")
    p.add_argument("--emit-externs", action="store_true", help="accepted: unknown externs are refused")
    p.add_argument("--parser-inline-opt", action="store_true", help="accepted, no effect")
    p.add_argument("-I", dest="include", action="append", default=[], metavar="DIR")
    p.add_argument("-D", dest="define", action="append", default=[], metavar="NAME[=VALUE]")
    for w in ("--Wdisable", "--Wwarn", "--Werror"):
        p.add_argument(w, nargs="?", const="", action="append", help="accepted, no effect")
    return p


def check_dialect(a: argparse.Namespace) -> None:
    if a.p4v not in ("16", "p4-16", "p4_16") or a.std not in ("p4-16", "p4_16", "16"):
        raise LanesError("only P4-16 is supported (--p4v 16, --std p4-16)")
    if a.target not in ("bmv2", "bmv2-ss-p4org"):
        raise LanesError(f"--target {a.target}: only bmv2 is supported")
    if a.arch not in ("v1model", "psa"):
        raise LanesError(f"--arch {a.arch}: only v1model and psa are supported")


def p4info_outputs(a: argparse.Namespace) -> list[tuple[Path, str]]:
    """(path, format) of every P4Info to write."""
    out = []
    for name in filter(None, (a.p4runtime_files or "").split(",")):
        suffix = Path(name).suffix
        out.append((Path(name), "json" if suffix == ".json" else "binary" if suffix == ".bin" else "text"))
    if a.p4runtime_file:
        out.append((Path(a.p4runtime_file), a.p4runtime_format))
    return out


def encode_p4info(text: str, fmt: str) -> str | bytes:
    """P4Info from the compiler's protobuf text format into `fmt`."""
    if fmt == "text":
        return text
    from google.protobuf import json_format, text_format

    from lanes.p4runtime.proto import p4i

    msg = text_format.Parse(text, p4i.P4Info())
    return json_format.MessageToJson(msg) + "\n" if fmt == "json" else msg.SerializeToString()


def compile_program(a: argparse.Namespace, json_out: Path) -> int:
    try:
        json_text, p4info = compile_source(a.program, a.include, a.define)
    except ValueError as e:
        print(str(e).splitlines()[0] if str(e) else "compilation failed", file=sys.stderr)
        return 1
    found = program_arch(json_text)
    if found != a.arch:
        raise LanesError(f"--arch {a.arch}: {a.program} is a {found} program")
    try:
        json_out.write_text(json_text + "\n")
        for path, fmt in p4info_outputs(a):
            data = encode_p4info(p4info, fmt)
            path.write_bytes(data) if isinstance(data, bytes) else path.write_text(data)
    except OSError as e:
        raise LanesError(f"cannot write output: {e.filename}: {e.strerror}") from None
    return 0


def run_tool(prog: str, argv: list[str], output_is_dir: bool, arch: str = "v1model") -> int:
    a = build_parser(prog, output_is_dir, arch).parse_args(argv)
    try:
        check_dialect(a)
        stem = Path(a.program).stem
        if output_is_dir:
            out_dir = Path(a.output or ".")
            try:
                out_dir.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise LanesError(f"cannot make output directory {out_dir}: {e.strerror}") from None
            json_out = out_dir / f"{stem}.json"
        else:
            json_out = Path(a.output or f"{stem}.json")
        return compile_program(a, json_out)
    except LanesError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 1


def p4c_bm2_ss() -> int:
    return run_tool("p4c-bm2-ss", sys.argv[1:], output_is_dir=False)


def p4c_bm2_psa() -> int:
    return run_tool("p4c-bm2-psa", sys.argv[1:], output_is_dir=False, arch="psa")


def p4c() -> int:
    return run_tool("p4c", sys.argv[1:], output_is_dir=True)

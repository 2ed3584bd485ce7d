"""`simple_switch` and `simple_switch_grpc`: lanes's switch under bmv2's names and command line.

`psa_switch` is the same switch for PSA programs (the architecture is read from the JSON).
`simple_switch` has no P4Runtime server, as bmv2's has none; `simple_switch_grpc` serves it on
`--grpc-server-addr` (after '--'). Everything else is `lanes switch`'s (python/lanes/switch/args.py).
"""

from __future__ import annotations

import os
import sys

from lanes.compat.oneline_parser import OneLineParser
from lanes.errors import LanesError

# gRPC's C core logs at INFO to stderr unless told otherwise; set before grpc is imported
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")


def run_switch(prog: str, argv: list[str], grpc: bool) -> int:
    from lanes.switch.args import add_arguments
    from lanes.switch.cli import run

    target: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, target = argv[:cut], argv[cut + 1 :]
    parser = OneLineParser(prog=prog, description=f"lanes switch with bmv2 {prog}'s command line")
    add_arguments(parser)
    args = parser.parse_args(argv)
    args.target_args = target
    if not grpc:
        args.no_grpc = True
    try:
        return int(run(args) or 0)
    except LanesError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def simple_switch() -> int:
    return run_switch("simple_switch", sys.argv[1:], grpc=False)


def simple_switch_grpc() -> int:
    return run_switch("simple_switch_grpc", sys.argv[1:], grpc=True)


def psa_switch() -> int:
    return run_switch("psa_switch", sys.argv[1:], grpc=False)

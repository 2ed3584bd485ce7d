"""The `lanes` command: one subcommand per part, each registered from its own module."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import NoReturn

from lanes.errors import LanesError

# gRPC's C core logs at INFO to stderr unless told otherwise (e.g. "Got goaway" when a switch
# stops under a client at Ctrl-C); lanes reports what matters itself. Set before any subcommand
# imports grpc; a value the user set wins.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

# Subcommand modules by command name; each defines register(subparsers) and sets `func` on its
# parsers. Only the named command's module is imported (a `lanes p4c` need not load gRPC or numpy).
SUBCOMMANDS = {
    "sim": "lanes.sim.cli",
    "switch": "lanes.switch.cli",
    "ctl": "lanes.ctl",
    "load-runtime": "lanes.load_runtime",
    "consolidate": "lanes.consolidate.cli",
    "fabric": "lanes.fabric.cli",
    "lab": "lanes.lab_cli",
    "p4c": "lanes.p4c",
}


DESCRIPTION = (
    "lanes: a lane for latency-critical HPC traffic on shared networks. A P4 software switch with a "
    "traffic manager (FIFO, strict priority, RL-SP-DRR), a Mininet lab that runs the experiments, a "
    "simulator, and InfiniBand fat-tree routing and VM consolidation tools."
)


class OneLineParser(argparse.ArgumentParser):
    """argparse with a usage error on one line (the problem and where to read more), not the
    whole usage block before it; subcommands' parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every subcommand, or only `command`'s when it names one."""
    parser = OneLineParser(prog="lanes", description=DESCRIPTION)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    names = [command] if command in SUBCOMMANDS else list(SUBCOMMANDS)
    for name in names:
        importlib.import_module(SUBCOMMANDS[name]).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # options after a bare '--' belong to the target (bmv2 grammar: lanes switch ... -- --grpc-...)
    target_args: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, target_args = argv[:cut], argv[cut + 1 :]
    parser = build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    args.target_args = target_args
    try:
        return int(args.func(args) or 0)
    except LanesError as e:
        print(f"lanes: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("lanes: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

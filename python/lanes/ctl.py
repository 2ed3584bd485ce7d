"""`lanes ctl`: simple_switch_CLI-like client of a running switch's command port."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

from lanes.switch.command_client import CommandClient


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "ctl",
        help="table and queue commands to a running switch",
        description="Send simple_switch_CLI-style commands (from -c, or stdin one per line) to a switch. "
        "'help' lists them. bmv2's own simple_switch_CLI works on the same port too; the traffic "
        "manager's commands (byte rates, bursts, quanta, schedulers) are here only.",
    )
    p.add_argument("--thrift-port", type=int, default=9090, help="the switch's --thrift-port")
    p.add_argument("-c", "--command", action="append", help="a command to run (repeatable)")
    p.add_argument("--keep-going", action="store_true", help="go on after a command fails")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    ctl = CommandClient(args.thrift_port)
    interactive = not args.command and sys.stdin.isatty()
    lines = args.command or _stdin_lines(interactive)
    failed = 0
    try:
        for line in lines:
            if not line.strip() or line.strip().startswith("#"):
                continue
            try:
                out = ctl.run(line)
                if out:
                    print(out)
            except ValueError as e:
                failed += 1
                print(f"lanes ctl: error: {line.strip()}: {e}", file=sys.stderr)
                if not (interactive or args.keep_going):
                    return 1
    finally:
        ctl.close()
    return 1 if failed else 0


def _stdin_lines(interactive: bool) -> Iterator[str]:
    while True:
        try:
            line = input("lanes> ") if interactive else sys.stdin.readline()
        except EOFError:
            return
        if not interactive and not line:
            return
        yield line

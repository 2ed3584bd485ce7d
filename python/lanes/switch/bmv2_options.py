"""simple_switch options that lanes accepts so bmv2 tooling can start it unchanged.

Some change what the switch does (`--use-files`, `--log-file`, `--max-port-count`); the others are
accepted for the command lines of bmv2's test drivers, p4-utils and the P4 tutorials and have no
effect, each said in its help: lanes does not dump packet bytes into its log (`--dump-packet-data`) or
publish bmv2's nanomsg event stream (`--nanolog`) or notifications (`--notifications-addr`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lanes.errors import LanesError


def add_bmv2_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--use-files", type=int, metavar="WAIT",
                   help="ports are pcap files: -i N@NAME reads NAME_in.pcap (a file or FIFO) and writes "
                   "NAME_out.pcap; frames are processed WAIT seconds after the inputs are open")  # fmt: skip
    p.add_argument("--log-file", type=Path, metavar="PATH",
                   help="write the switch's messages and bmv2's per-packet log (see -L) to PATH.txt (bmv2 adds .txt too)")  # fmt: skip
    p.add_argument("--log-flush", action="store_true", help="accepted: every log line is written at once")
    p.add_argument("--dump-packet-data", type=int, metavar="N",
                   help="accepted, no effect: the per-packet log has no packet bytes")  # fmt: skip
    p.add_argument("--nanolog", metavar="ADDR",
                   help="accepted, no effect: bmv2's nanomsg event stream is not published")  # fmt: skip
    p.add_argument("--notifications-addr", metavar="ADDR",
                   help="accepted, no effect: learning notifications go to P4Runtime clients")  # fmt: skip
    p.add_argument("--max-port-count", type=int, metavar="N", help="ports are numbered below N (at most 511)")
    p.add_argument("--packet-in", metavar="ADDR", help="refused: nanomsg ports are not supported")
    p.add_argument("-v", "--version", action="store_true", help="print the version and exit")


def check_bmv2_arguments(a: argparse.Namespace, port_numbers: list[int]) -> None:
    """Refuse what lanes cannot do, in one line."""
    if a.packet_in is not None:
        raise LanesError("--packet-in: nanomsg ports are not supported (use -i N@IFACE or --use-files)")
    if a.use_files is not None:
        if a.use_files < 0:
            raise LanesError(f"--use-files wait must be 0 or more seconds, got {a.use_files}")
        if a.pcap is not None:
            raise LanesError("--pcap with --use-files: the port files already hold every frame")
    if a.dump_packet_data is not None and a.dump_packet_data < 0:
        raise LanesError(f"--dump-packet-data must be 0 or more, got {a.dump_packet_data}")
    if a.max_port_count is not None:
        if not 1 <= a.max_port_count <= 511:
            raise LanesError(f"--max-port-count must be 1 to 511, got {a.max_port_count}")
        too_high = [n for n in port_numbers if n >= a.max_port_count]
        if too_high:
            raise LanesError(f"port {too_high[0]} is not below --max-port-count {a.max_port_count}")


def add_bmv2_target_arguments(t: argparse.ArgumentParser) -> None:
    """simple_switch's target options (after '--') that lanes accepts."""
    t.add_argument("--enable-swap", action="store_true")  # a config swap is always allowed
    t.add_argument("--drop-port", type=int, default=511)
    t.add_argument("--load-modules")


def check_bmv2_target_arguments(t: argparse.Namespace) -> None:
    if t.drop_port != 511:
        raise LanesError(f"--drop-port {t.drop_port}: lanes's drop port is 511")
    if t.load_modules is not None:
        raise LanesError("--load-modules: lanes cannot load bmv2 extern modules")

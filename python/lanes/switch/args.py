"""The command line of `lanes switch`: bmv2 simple_switch_grpc's grammar plus lanes options.

lanes switch [-i N@IFACE]... [--device-id N] [--thrift-port P] [--pcap [DIR]] [--no-p4 | JSON]
             [--use-files WAIT] [--log-file PATH] [--scheduler S] [--port-rate N@RATE]...
             [--queue-depth N] [--commands FILE]
             [-- --grpc-server-addr HOST:PORT --cpu-port N --priority-queues N
                 --grpc-server-ssl --grpc-server-cert PEM --grpc-server-key PEM
                 --grpc-server-cacert PEM --grpc-server-with-client-auth]
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from lanes.errors import LanesError
from lanes.p4runtime.tls import TlsConfig, add_tls_arguments, tls_config
from lanes.switch.bmv2_options import (
    add_bmv2_arguments,
    add_bmv2_target_arguments,
    check_bmv2_arguments,
    check_bmv2_target_arguments,
)
from lanes.switch.modes import DROP_POLICIES, TM_MODELS, WAKE_MODES

LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "off"]
SCHEDULERS = ["fifo", "strict", "drr", "rlsp-drr", "rlsp-drr-borrow"]


@dataclass
class SwitchArgs:
    interfaces: list[tuple[int, str]]
    json: Path | None
    device_id: int = 0
    thrift_port: int = 9090
    thrift_addr: str = "127.0.0.1"
    pcap: Path | None = None
    log_console: bool = False
    scheduler: str = "strict"
    tm_model: str = "lanes"
    port_rates: dict[int, float] = field(default_factory=dict)
    default_rate_bps: float = 10e9
    queue_depth: int = 64
    drop: str = "tail"
    buffer_bytes: int | None = None
    commands: Path | None = None
    runtime_json: Path | None = None
    grpc_addr: str = "127.0.0.1:9559"
    grpc_tls: TlsConfig | None = None
    cpu_port: int | None = None
    priority_queues: int = 8
    no_grpc: bool = False
    batch_us: float | None = None  # None: each port its own window (the switch's batch_window.rs)
    rx_mode: str = "packet"
    poll_us: float = 0.0
    reply_poll_us: float = 100.0
    wake: str = "leading"
    # bmv2's --use-files WAIT: ports are pcap files, read after WAIT seconds
    use_files_wait: int | None = None
    log_file: Path | None = None
    log_level: str = "trace"


def parse_rate(text: str) -> float:
    """`100Mbps`, `1Gbps`, `2.5e9` -> bits per second (the switch's own parser)."""
    from lanes import _native

    try:
        return float(_native.parse_rate_bps(text.strip()))
    except ValueError as e:
        raise LanesError(str(e)) from None


def _port_at(text: str, what: str) -> tuple[int, str]:
    # p4c's bmv2 driver passes "-i 0@pcap0" as one argument: the value then starts with a space
    text = text.strip()
    num, sep, rest = text.partition("@")
    if not sep or not num.isdigit() or not rest:
        raise LanesError(f"{what} '{text}' must look like N@{'IFACE' if what == '-i' else 'RATE'}")
    n = int(num)
    if n > 510:
        raise LanesError(f"port {n} out of range (0-510)")
    return n, rest


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("json", nargs="?", type=Path, help="bmv2 JSON program (or --no-p4)")
    p.add_argument(
        "-i", "--interface", action="append", default=[], metavar="N@IFACE", help="attach port N to IFACE"
    )
    p.add_argument("--device-id", type=int, default=0)
    p.add_argument("--thrift-port", type=int, default=9090,
                   help="command port: bmv2's Thrift API (simple_switch_CLI) and `lanes ctl`")  # fmt: skip
    p.add_argument("--thrift-addr", default="127.0.0.1", metavar="ADDR",
                   help="address the command port listens on (default 127.0.0.1, this machine only): like "
                        "bmv2's it has no authentication, so anyone who reaches it can rewrite every table")  # fmt: skip
    p.add_argument("--pcap", type=Path, nargs="?", const=Path("."), metavar="DIR",
                   help="write IFACE_in.pcap and IFACE_out.pcap here (default: the working directory)")  # fmt: skip
    p.add_argument(
        "--no-p4", action="store_true", help="start without a program; wait for one over P4Runtime"
    )
    p.add_argument("--log-console", action="store_true",
                   help="bmv2's per-packet log on stdout (see -L), and a status line on stderr every 10 s")  # fmt: skip
    p.add_argument("-L", "--log-level", default="trace", choices=LOG_LEVELS,
                   help="level of the log --log-console and --log-file write: trace and debug give bmv2's "
                   "per-packet lines (trace adds each action's primitives); default trace, as bmv2")  # fmt: skip
    p.add_argument("--scheduler", default="strict", help=f"per-port scheduler: {', '.join(SCHEDULERS)}")
    p.add_argument("--tm-model", default="lanes", choices=TM_MODELS,
                   help="lanes: paced TM (default); bmv2: a model of bmv2's TM, egress queues served unpaced "
                   "into a 128-packet output buffer drained at line rate (to compare with the thesis)")  # fmt: skip
    p.add_argument("--port-rate", action="append", default=[], metavar="N@RATE", help="line rate of port N")
    p.add_argument("--default-rate", default="10Gbps", help="line rate of ports without --port-rate")
    p.add_argument("--queue-depth", type=int, default=64, help="packets per queue")
    p.add_argument("--drop", default="tail", choices=DROP_POLICIES,
                   help="what a full queue drops: the arrival (tail) or a random packet of it and the queue")  # fmt: skip
    p.add_argument("--buffer-bytes", type=int, help="buffer shared by each port's queues")
    p.add_argument("--commands", type=Path, help="simple_switch_CLI commands to run at start")
    p.add_argument(
        "--runtime-json", type=Path, help="P4 tutorials runtime.json to apply at start (P4Runtime)"
    )
    p.add_argument("--no-grpc", action="store_true", help="do not start the P4Runtime server")
    p.add_argument("--batch-us", type=float, metavar="US",
                   help="frames due within this many microseconds leave together (0: each at its own time; "
                        "default: each port four full frames at its own rate, 250 to 500 us)")  # fmt: skip
    p.add_argument("--poll-us", type=float, default=0.0, metavar="US",
                   help="after its last frame the data plane looks at the rings this long before it sleeps: "
                        "a reply within it skips a wake-up, at the cost of a busy core meanwhile (default 0: off)")  # fmt: skip
    p.add_argument("--reply-poll-us", type=float, default=100.0, metavar="US",
                   help="with nothing queued, look at the rings up to this long for the answer of a port just sent to, "
                        "where that port answered that quickly before (default 100; 0: off)")  # fmt: skip
    p.add_argument("--wake", choices=WAKE_MODES, default="leading",
                   help="what wakes a data plane that waits for a departure early: frames that lead their port "
                        "and a top-class frame left queued after a turn (default 'leading'), also the top strict "
                        "class's arrivals behind a few of its own ('high': more wake-ups), or only arrivals that "
                        "lead their port ('arrivals')")  # fmt: skip
    p.add_argument("--rx-mode", choices=["packet", "afxdp"], default="packet",
                   help="port sockets: AF_PACKET (default) or AF_XDP with an XDP redirect program")  # fmt: skip
    add_bmv2_arguments(p)


def _target_parser() -> argparse.ArgumentParser:
    t = argparse.ArgumentParser(prog="lanes switch ... --", add_help=False)
    t.add_argument("--grpc-server-addr", default="127.0.0.1:9559")
    t.add_argument("--cpu-port", type=int)
    t.add_argument("--priority-queues", type=int, default=8)
    add_tls_arguments(t)
    add_bmv2_target_arguments(t)
    return t


def to_switch_args(a: argparse.Namespace, target: list[str]) -> SwitchArgs:
    t, unknown = _target_parser().parse_known_args(target)
    if unknown:
        raise LanesError(f"unknown target option(s) after '--': {' '.join(unknown)}")
    check_bmv2_target_arguments(t)
    if a.json is None and not a.no_p4:
        raise LanesError("give a JSON program or --no-p4")
    if a.json is not None and not a.json.is_file():
        raise LanesError(f"no such program file: {a.json}")
    if a.scheduler not in SCHEDULERS and a.scheduler not in ("no", "rl-sp-drr"):
        raise LanesError(f"unknown scheduler '{a.scheduler}' (expected one of {', '.join(SCHEDULERS)})")
    if not 1 <= t.priority_queues <= 32:
        raise LanesError(f"--priority-queues must be 1 to 32, got {t.priority_queues}")
    if a.queue_depth < 1:
        raise LanesError(f"--queue-depth must be at least 1, got {a.queue_depth}")
    if a.batch_us is not None and not 0 <= a.batch_us <= 10_000:
        raise LanesError(f"--batch-us must be 0 to 10000, got {a.batch_us:g}")
    if not 0 <= a.poll_us <= 10_000:
        raise LanesError(f"--poll-us must be 0 to 10000, got {a.poll_us:g}")
    if not 0 <= a.reply_poll_us <= 10_000:
        raise LanesError(f"--reply-poll-us must be 0 to 10000, got {a.reply_poll_us:g}")
    interfaces = [_port_at(i, "-i") for i in a.interface]
    nums = [n for n, _ in interfaces]
    if len(set(nums)) != len(nums):
        raise LanesError("a port number is given twice with -i")
    check_bmv2_arguments(a, nums)
    rates = {}
    for r in a.port_rate:
        n, rate = _port_at(r, "--port-rate")
        if n not in nums:
            raise LanesError(f"--port-rate {r}: port {n} has no -i interface")
        rates[n] = parse_rate(rate)
    return SwitchArgs(
        interfaces=interfaces,
        json=a.json,
        device_id=a.device_id,
        thrift_port=a.thrift_port,
        thrift_addr=a.thrift_addr,
        pcap=a.pcap,
        log_console=a.log_console,
        scheduler=a.scheduler,
        tm_model=a.tm_model,
        port_rates=rates,
        default_rate_bps=parse_rate(a.default_rate),
        queue_depth=a.queue_depth,
        drop=a.drop,
        buffer_bytes=a.buffer_bytes,
        commands=a.commands,
        runtime_json=a.runtime_json,
        grpc_addr=t.grpc_server_addr,
        grpc_tls=tls_config(t),
        cpu_port=t.cpu_port,
        priority_queues=t.priority_queues,
        no_grpc=a.no_grpc,
        batch_us=a.batch_us,
        rx_mode=a.rx_mode,
        poll_us=a.poll_us,
        reply_poll_us=a.reply_poll_us,
        wake=a.wake,
        use_files_wait=a.use_files,
        log_file=a.log_file,
        log_level=a.log_level,
    )

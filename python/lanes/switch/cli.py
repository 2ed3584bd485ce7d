"""`lanes switch`: start a switch process (data plane thread in Rust, control plane here)."""

from __future__ import annotations

import argparse
import ipaddress
import json
import signal
import sys
import threading
import time

from lanes.errors import LanesError
from lanes.switch.args import add_arguments, to_switch_args
from lanes.switch.switch_log import SwitchLog


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "switch",
        help="run a P4 switch (simple_switch_grpc command line)",
        description="Run a lanes switch. Same command line as bmv2's simple_switch_grpc; "
        "target options (--grpc-server-addr, --cpu-port, --priority-queues, --grpc-server-ssl ...) go "
        "after '--'. The command port (--thrift-port) listens on 127.0.0.1 only: it has no authentication.",
    )
    add_arguments(p)
    p.set_defaults(func=run)


def tls_words(tls: object) -> str:
    if tls is None:
        return " (plain gRPC)"
    return " over TLS" + (", client certificates required" if getattr(tls, "client_auth", False) else "")


def is_loopback(addr: str) -> bool:
    """Whether a listening address is reachable from this machine only."""
    try:
        return ipaddress.ip_address(addr).is_loopback
    except ValueError:
        return addr == "localhost"


def run(args: argparse.Namespace) -> int:
    from lanes import _native
    from lanes.switch.control_server import serve

    if getattr(args, "version", False):
        print(f"lanes switch {_native.__version__} (simple_switch command line)")
        return 0
    sa = to_switch_args(args, getattr(args, "target_args", []))
    log = SwitchLog(sa.log_file)
    rates = dict(sa.port_rates)
    if sa.use_files_wait is None:
        rates.update(kernel_port_rates(sa.interfaces, sa.port_rates, log))
    ports = [(n, iface, rates.get(n)) for n, iface in sa.interfaces]
    try:
        sw = _native.Switch(
            ports,
            rate_bps=sa.default_rate_bps,
            scheduler=sa.scheduler,
            queues=sa.priority_queues,
            depth_pkts=sa.queue_depth,
            drop=sa.drop,
            buffer_bytes=sa.buffer_bytes,
            pcap_dir=str(sa.pcap) if sa.pcap else None,
            cpu_port=sa.cpu_port,
            batch_ns=None if sa.batch_us is None else round(sa.batch_us * 1000),
            use_files_wait_s=sa.use_files_wait,
            rx_mode=sa.rx_mode,
            poll_ns=round(sa.poll_us * 1000),
            reply_poll_ns=round(sa.reply_poll_us * 1000),
            tm_model=sa.tm_model,
            wake_top_class=sa.wake == "high",
            wake_after_turn=sa.wake != "arrivals",
        )
    except (RuntimeError, ValueError) as e:
        raise LanesError(f"cannot start the switch: {e}") from None
    if sa.log_console or sa.log_file is not None:
        # bmv2's per-packet log: stdout and/or PATH.txt, each program loaded from now on
        try:
            sw.set_trace_log(sa.log_level, console=sa.log_console, file=None if log.path is None else str(log.path))
        except RuntimeError as e:
            raise LanesError(f"cannot write log file {log.path}: {e}") from None
    stop = threading.Event()
    servers = []
    try:
        if sa.json is not None:
            try:
                sw.load_program(sa.json.read_text())
            except ValueError as e:
                raise LanesError(f"{sa.json}: {e}") from None
        if sa.commands is not None:
            run_commands_file(sw, sa.commands)
        sw.start_ports()
        config, thrift = _thrift_api(sw, sa)
        try:
            servers.append(serve(sa.thrift_port, sw.command_answer, thrift, sa.thrift_addr))
        except (OSError, OverflowError) as e:
            why = getattr(e, "strerror", None) or str(e)
            raise LanesError(f"cannot listen on {sa.thrift_addr}:{sa.thrift_port}: {why}") from None
        if not is_loopback(sa.thrift_addr):
            log.line(
                f"lanes switch: warning: the command port {sa.thrift_addr}:{sa.thrift_port} has no "
                "authentication (as bmv2's Thrift port): anyone who reaches it can rewrite every table"
            )
        if not sa.no_grpc:
            servers.append(_start_p4runtime(sw, sa))
            if hasattr(servers[-1], "wrap_command"):  # `lanes ctl p4runtime_stats`
                servers[0].run_command = servers[-1].wrap_command(sw.command_answer)
            if config is not None and hasattr(servers[-1], "service"):
                config.attach_p4runtime(servers[-1].service)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, lambda *_: stop.set())
        log.line(
            f"lanes switch: {len(ports)} {'file ' if sa.use_files_wait is not None else ''}port(s), "
            f"scheduler {sa.scheduler}{', TM model bmv2' if sa.tm_model == 'bmv2' else ''}, ctl on {sa.thrift_addr}:{sa.thrift_port}"
            + ("" if sa.no_grpc else f", P4Runtime on {sa.grpc_addr}{tls_words(sa.grpc_tls)}")
        )
        last = time.monotonic()
        while not stop.wait(0.5):
            if not sw.is_running():
                try:
                    sw.stop()  # raises the loop's error
                except RuntimeError as e:
                    raise LanesError(f"data plane failed: {e}") from None
                raise LanesError("the data plane stopped")
            if sa.log_console and time.monotonic() - last >= 10:
                last = time.monotonic()
                print(status_line(json.loads(sw.stats_json())), file=sys.stderr, flush=True)
    finally:
        for s in servers:
            if s is not None:
                s.shutdown() if hasattr(s, "shutdown") else s.stop(0)
        try:
            sw.stop()
        except RuntimeError as e:
            raise LanesError(f"data plane failed: {e}") from None
    return 0


def kernel_port_rates(
    interfaces: list[tuple[int, str]], given: dict[int, float], log: SwitchLog
) -> dict[int, float]:
    """Line rates of ports whose interface (or veth peer) the kernel rate-limits, where --port-rate
    gives none; each one said at start."""
    from lanes.switch.kernel_rates import kernel_rate

    rates = {}
    for n, iface in interfaces:
        found = None if n in given else kernel_rate(iface)
        if found is not None:
            rates[n], where = found
            log.line(f"lanes switch: port {n} ({iface}) at {rates[n] / 1e6:g} Mb/s, the kernel's rate limit "
                     f"on {where} (--port-rate {n}@RATE to choose another)")  # fmt: skip
    return rates


def _start_p4runtime(sw: object, sa: object):
    from lanes.p4runtime.server import start_server  # grpc loads only for a switch that serves it

    return start_server(sw, sa)


def _thrift_api(sw: object, sa: object):
    """bmv2's Thrift API for the command port: (running config, processor), or (None, why not)."""
    from lanes.switch.thrift import server as thrift_server

    why = thrift_server.available()
    if why is not None:
        return None, why
    from lanes.switch.thrift.context import RunningConfig, SwitchContext

    config = RunningConfig(sa.json.read_text() if sa.json is not None else None)
    ctx = SwitchContext(
        sw=sw, config=config, device_id=sa.device_id, thrift_port=sa.thrift_port, interfaces=sa.interfaces
    )
    return config, thrift_server.build_processor(ctx)


def run_commands_file(sw: object, path) -> None:
    try:
        lines = path.read_text().splitlines()
    except OSError as e:
        raise LanesError(f"cannot read {path}: {e.strerror}") from None
    for n, line in enumerate(lines, 1):
        try:
            sw.command(line)  # type: ignore[attr-defined]
        except ValueError as e:
            raise LanesError(f"{path}:{n}: {e}") from None


def status_line(stats: dict) -> str:
    parts = [
        f"p{p['port']} rx {p['rx_pkts']} tx {p['tx_pkts']} q {sum(q['depth_pkts'] for q in p['queues'])}"
        for p in stats["ports"]
    ]
    drops = sum(stats["drops"].values())
    return "lanes switch: " + ", ".join(parts) + f", drops {drops}"

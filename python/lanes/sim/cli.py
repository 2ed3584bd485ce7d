"""`lanes sim`: run a scenario through the discrete-event simulator, write JSON and a plot."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from lanes.errors import LanesError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "sim",
        help="simulate egress ports and schedulers in virtual time",
        description="Run a TOML scenario (see scenarios/README.md) through the TM in virtual time.",
    )
    p.add_argument("scenario", type=Path, help="scenario file (TOML)")
    p.add_argument("--out", type=Path, required=True, help="where to write the result JSON")
    p.add_argument("--plot", type=Path, help="also draw throughput per flow over time (PNG)")
    p.add_argument("--quiet", action="store_true", help="no progress or summary on the terminal")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from lanes import _native

    try:
        text = args.scenario.read_text()
    except OSError as e:
        raise LanesError(f"cannot read scenario {args.scenario}: {e.strerror}") from None
    try:
        result = json.loads(_native.simulate_toml(text, progress=not args.quiet))
    except ValueError as e:
        raise LanesError(f"{args.scenario}: {e}") from None
    result["scenario"] = str(args.scenario)
    _write(args.out, json.dumps(result, indent=1))
    if args.plot:
        from lanes.sim.plot import plot_result

        args.plot.parent.mkdir(parents=True, exist_ok=True)
        plot_result(result, args.plot, title=args.scenario.stem)
    if not args.quiet:
        print(summary(result))
    return 0


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    except OSError as e:
        raise LanesError(f"cannot write {path}: {e.strerror}") from None


def summary(result: dict) -> str:
    """A short table: one line per flow, then per port."""
    lines = [f"{'flow':<12} {'offered Mb/s':>12} {'thrput Mb/s':>12} {'loss %':>7} {'p99 delay us':>12}"]
    for name, f in result["flows"].items():
        lines.append(
            f"{name:<12} {f['offered_bps'] / 1e6:>12.3f} {f['throughput_bps'] / 1e6:>12.3f} "
            f"{f['loss_pct']:>7.2f} {f['delay_ns']['p99'] / 1e3:>12.2f}"
        )
    for name, p in result["ports"].items():
        lines.append(f"port {name}: {p['scheduler']}, utilisation {100 * p['utilisation']:.2f} %")
    ev = result["stats"]
    lines.append(f"{ev['packet_events']} packet events in {ev['wall_s']:.2f} s")
    return "\n".join(lines)

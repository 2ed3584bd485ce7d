"""`lanes load-runtime FILE`: push a P4 tutorials runtime.json to a running switch over
P4Runtime (the pipeline from its p4info and bmv2_json, then its multicast groups, clone
sessions and table entries)."""

from __future__ import annotations

import argparse
import sys

import grpc

from lanes.errors import LanesError

BATCH = 500


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "load-runtime",
        help="push a runtime.json (P4 tutorials format) over P4Runtime",
        description="Connect to a switch's P4Runtime server, win arbitration, push the pipeline named "
        "by the file's p4info and bmv2_json (unless --no-pipeline), then write its table entries.",
    )
    p.add_argument("file", help="runtime.json")
    p.add_argument("--grpc-addr", default="127.0.0.1:9559", help="the switch's --grpc-server-addr")
    p.add_argument("--device-id", type=int, default=0)
    p.add_argument("--election-id", type=int, default=1, help="election id to bid with (low 64 bits)")
    p.add_argument("--no-pipeline", action="store_true", help="only write entries (pipeline already pushed)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for the switch")
    p.set_defaults(func=run)


def _primary(client: object, election_id: int, timeout: float) -> None:
    a = client.arbitrate(election_id, timeout=timeout)  # type: ignore[attr-defined]
    if a.status.code == grpc.StatusCode.NOT_FOUND.value[0]:
        # no primary now: bid again with the highest election id the switch has seen
        top = (a.election_id.high << 64) | a.election_id.low
        a = client.arbitrate(max(top, election_id), timeout=timeout)  # type: ignore[attr-defined]
    if a.status.code != grpc.StatusCode.OK.value[0]:
        raise LanesError(f"not primary on the switch: {a.status.message or 'another controller is primary'}")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from lanes.p4runtime import runtime_json
    from lanes.p4runtime.client import Client, write_errors

    resolved = runtime_json.resolve(Path(args.file))
    rt, info, labelled = resolved.runtime, resolved.p4info, resolved.updates
    client = Client(args.grpc_addr, args.device_id, args.election_id)
    try:
        try:
            grpc.channel_ready_future(client.channel).result(timeout=args.timeout)
        except grpc.FutureTimeoutError:
            raise LanesError(f"no P4Runtime server at {args.grpc_addr}") from None
        try:
            _primary(client, args.election_id, args.timeout)
        except ConnectionError as e:
            raise LanesError(f"arbitration failed: {e}") from None
        if not args.no_pipeline:
            if rt.bmv2_json is None:
                raise LanesError(f"{args.file}: no 'bmv2_json' (or use --no-pipeline)")
            try:
                client.set_pipeline(info, rt.bmv2_json.read_bytes())
            except grpc.RpcError as e:
                raise LanesError(f"pipeline refused: {e.code().name}: {e.details()}") from None
            print(f"load-runtime: pipeline {rt.bmv2_json.name} committed", file=sys.stderr)
        failed = 0
        updates = [u for _, u in labelled]
        for start in range(0, len(updates), BATCH):
            chunk = updates[start : start + BATCH]
            try:
                client.write(chunk)
            except grpc.RpcError as e:
                errs = write_errors(e) or [(e.code().value[0], e.details())] * len(chunk)
                for i, (code, msg) in enumerate(errs):
                    if code:
                        failed += 1
                        name = grpc.StatusCode.OK
                        for c in grpc.StatusCode:
                            if c.value[0] == code:
                                name = c
                        where = labelled[start + i][0]
                        print(f"load-runtime: {where}: {name.name}: {msg}", file=sys.stderr)
        print(f"load-runtime: {len(updates) - failed} of {len(updates)} entries written", file=sys.stderr)
        if failed:
            raise LanesError(f"{failed} entries refused")
    finally:
        client.close()
    return 0

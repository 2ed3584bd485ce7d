"""What the `lanes fabric` command modules (cli, cli_ops, migsim) share: the topology the
generator options describe, and lists of node names read from a file."""

from __future__ import annotations

import argparse
from typing import Any

from lanes.errors import LanesError


def topology_spec(args: argparse.Namespace) -> dict[str, Any]:
    """The topology the generator options (--kind, --m, --w, --k, --n, --name, ...) describe."""
    kind = args.kind
    spec: dict[str, Any] = {"kind": kind}
    if kind in ("xgft", "pgft"):
        if args.m is None or args.w is None:
            raise LanesError(f"{kind} needs --m and --w")
        spec.update(m=args.m, w=args.w)
        if args.h is not None:
            spec["h"] = args.h
        if kind == "pgft":
            spec["p"] = args.p if args.p is not None else [1] * len(args.m)
    elif kind == "kary":
        if args.k is None or args.n is None:
            raise LanesError("kary needs --k and --n")
        spec.update(k=args.k, n=args.n)
    elif kind == "named":
        if not args.name:
            raise LanesError("named needs --name, e.g. 18-3-1-full")
        spec["name"] = args.name
    if args.radix is not None:
        spec["radix"] = args.radix
    if args.vfs is not None:
        spec["vfs"] = args.vfs
    if args.vms is not None:
        spec["vms"] = args.vms
    if getattr(args, "hv_lid", None) and args.vfs is not None:
        spec["hv_lid"] = args.hv_lid
    return spec


def read_names(path: str | None) -> list[str] | None:
    """The names in a file, whitespace-separated, `#` comments left out; None without a file."""
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            return [w for line in fh for w in line.split("#")[0].split()]
    except OSError as e:
        raise LanesError(f"cannot read {path}: {e.strerror}") from e

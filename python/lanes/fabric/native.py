"""Typed wrappers over the Rust functions in lanes._native: JSON strings become dicts, errors LanesError."""

from __future__ import annotations

import json
from typing import Any

from lanes.errors import LanesError


def _call(name: str, *args: Any) -> dict[str, Any]:
    try:
        from lanes import _native
    except ImportError as e:  # pragma: no cover - only without a built extension
        raise LanesError(f"the lanes extension module is not built: {e}") from e
    fn = getattr(_native, name, None)
    if fn is None:
        raise LanesError(f"the lanes extension module lacks {name}: rebuild it (make setup)")
    try:
        out: dict[str, Any] = json.loads(fn(*args))
    except ValueError as e:
        raise LanesError(str(e).splitlines()[0] if str(e) else "fabric error") from e
    return out


def gen(spec: dict[str, Any], out: str | None) -> dict[str, Any]:
    return _call("fabric_gen", json.dumps(spec), out)


def route(net: str, engine: str, out: str, opts: dict[str, Any] | None = None) -> dict[str, Any]:
    return _call("fabric_route", net, engine, out, json.dumps(opts or {}))


def check(net: str, dump: str) -> dict[str, Any]:
    return _call("fabric_check", net, dump)


def balance(net: str, dump: str) -> dict[str, Any]:
    return _call("fabric_balance", net, dump)


def diff(old: str, new: str) -> dict[str, Any]:
    return _call("fabric_diff", old, new)


def evaluate(net: str, dump: str, opts: dict[str, Any]) -> dict[str, Any]:
    return _call("fabric_eval", net, dump, json.dumps(opts))


def normalize(net: str, out: str, lids_from: str | None = None) -> dict[str, Any]:
    return _call("fabric_normalize", net, out, lids_from)


def migrate(net: str, dump: str, opts: dict[str, Any]) -> dict[str, Any]:
    return _call("fabric_migrate", net, dump, json.dumps(opts))


def migsim(spec: dict[str, Any], opts: dict[str, Any]) -> dict[str, Any]:
    return _call("fabric_migsim", json.dumps(spec), json.dumps(opts))


def order_study(net: str, opts: dict[str, Any]) -> dict[str, Any]:
    return _call("fabric_order_study", net, json.dumps(opts))


def fail(net: str, opts: dict[str, Any]) -> dict[str, Any]:
    return _call("fabric_fail", net, json.dumps(opts))


def paths_modified(net: str, opts: dict[str, Any]) -> dict[str, Any]:
    return _call("fabric_paths_modified", net, json.dumps(opts))


def phases(net: str, old: str, new: str, out_dir: str) -> dict[str, Any]:
    return _call("fabric_phases", net, old, new, out_dir)


def guid_files(net: str, out_dir: str, io: list[str]) -> dict[str, Any]:
    return _call("fabric_guid_files", net, out_dir, io)


def slurm(net: str, topology: str | None, order: str | None) -> dict[str, Any]:
    return _call("fabric_slurm", net, topology, order)


def sa_storm(opts: dict[str, Any]) -> dict[str, Any]:
    return _call("fabric_sa_storm", json.dumps(opts))


def check_vl(
    net: str, dump: str, path_sl: str, sl2vl: list[int], sl2vl_dump: str | None = None
) -> dict[str, Any]:
    return _call("fabric_check_vl", net, dump, path_sl, sl2vl, sl2vl_dump)

"""The P4 tutorials' runtime.json: target, p4info, bmv2_json, table_entries (table, match,
action_name, action_params, default_action, priority), multicast_group_entries
(multicast_group_id, replicas of egress_port and instance) and clone_session_entries
(clone_session_id, replicas, packet_length_bytes), turned into P4Runtime updates by name
through the P4Info."""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lanes.errors import LanesError
from lanes.p4runtime.p4info_file import load_p4info
from lanes.p4runtime.proto import p4i, p4r
from lanes.p4runtime.values import canonical

_MAC = re.compile(r"^[0-9a-fA-F]{2}([:-][0-9a-fA-F]{2}){5}$")


@dataclass
class Runtime:
    path: Path
    target: str
    p4info: Path | None
    bmv2_json: Path | None
    entries: list[dict]
    multicast_groups: list[Any]
    clone_sessions: list[Any]


@dataclass
class Resolved:
    """A runtime.json with its P4Info and its entries as (where in the file, P4Runtime update)."""

    runtime: Runtime
    p4info: Any
    updates: list[tuple[str, Any]]


def resolve(path: Path) -> Resolved:
    """Load a runtime.json and turn its entries into P4Runtime updates by name through its P4Info."""
    rt = load(path)
    if rt.p4info is None:
        raise LanesError(f"{path}: no 'p4info' (needed to resolve names)")
    info = load_p4info(rt.p4info)
    try:
        updates = all_updates(Names(info), rt)
    except LanesError as e:
        raise LanesError(f"{rt.path}: {e}") from None
    return Resolved(rt, info, updates)


def _resolve(base: Path, value: Any, key: str) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise LanesError(f"'{key}' must be a path")
    p = Path(value)
    for cand in [p] if p.is_absolute() else [base / p, Path.cwd() / p]:
        if cand.is_file():
            return cand
    raise LanesError(f"{key} file not found: {value}")


def load(path: Path) -> Runtime:
    try:
        doc = json.loads(path.read_text())
    except OSError as e:
        raise LanesError(f"cannot read {path}: {e.strerror}") from None
    except ValueError as e:
        raise LanesError(f"{path}: not JSON ({e})") from None
    if not isinstance(doc, dict):
        raise LanesError(f"{path}: expected a JSON object")
    lists = {}
    for key in ("table_entries", "multicast_group_entries", "clone_session_entries"):
        lists[key] = doc.get(key) or []
        if not isinstance(lists[key], list) or not all(isinstance(e, dict) for e in lists[key]):
            raise LanesError(f"{path}: {key} must be a list of objects")
    return Runtime(
        path=path,
        target=str(doc.get("target", "bmv2")),
        p4info=_resolve(path.parent, doc.get("p4info"), "p4info"),
        bmv2_json=_resolve(path.parent, doc.get("bmv2_json"), "bmv2_json"),
        entries=lists["table_entries"],
        multicast_groups=lists["multicast_group_entries"],
        clone_sessions=lists["clone_session_entries"],
    )


def all_updates(names: Names, rt: Runtime) -> list[tuple[str, Any]]:
    """Every entry of the file as (where it is in the file, P4Runtime Update): multicast groups
    and clone sessions first (table entries may rely on them), then table entries."""
    out = []
    for key, items, make in (
        ("multicast_group_entries", rt.multicast_groups, _multicast_update),
        ("clone_session_entries", rt.clone_sessions, _clone_update),
        ("table_entries", rt.entries, lambda e: _to_update(names, e)),
    ):
        for i, e in enumerate(items):
            try:
                out.append((f"{key}[{i}]", make(e)))
            except (LanesError, TypeError, ValueError) as x:
                raise LanesError(f"{key}[{i}]: {x}") from None
    return out


def _replicas(e: dict, into: Any) -> None:
    reps = e.get("replicas", [])
    if not isinstance(reps, list):
        raise LanesError("'replicas' must be a list")
    for r in reps:
        if not isinstance(r, dict) or "egress_port" not in r:
            raise LanesError("a replica needs 'egress_port' (and 'instance')")
        into.add(egress_port=int(r["egress_port"]), instance=int(r.get("instance", 0)))


def _multicast_update(e: dict) -> Any:
    if "multicast_group_id" not in e:
        raise LanesError("no 'multicast_group_id'")
    u = p4r.Update(type=p4r.Update.INSERT)
    g = u.entity.packet_replication_engine_entry.multicast_group_entry
    g.multicast_group_id = int(e["multicast_group_id"])
    _replicas(e, g.replicas)
    return u


def _clone_update(e: dict) -> Any:
    if "clone_session_id" not in e:
        raise LanesError("no 'clone_session_id'")
    u = p4r.Update(type=p4r.Update.INSERT)
    c = u.entity.packet_replication_engine_entry.clone_session_entry
    c.session_id = int(e["clone_session_id"])
    c.packet_length_bytes = int(e.get("packet_length_bytes", 0))
    _replicas(e, c.replicas)
    return u


def encode(value: Any, bitwidth: int, what: str) -> bytes:
    """A runtime.json value (int, MAC, IPv4/IPv6, 0x hex, decimal string) as canonical bytes."""
    if isinstance(value, bool):
        v = int(value)
    elif isinstance(value, int):
        v = value
    elif isinstance(value, str):
        s = value.strip()
        if _MAC.match(s):
            v = int(s.replace(":", "").replace("-", ""), 16)
        elif s.lower().startswith("0x"):
            try:
                v = int(s, 16)
            except ValueError:
                raise LanesError(f"{what}: '{value}' is not a hex number") from None
        elif s.isdigit():
            v = int(s)
        else:
            try:
                v = int(ipaddress.ip_address(s))
            except ValueError:
                raise LanesError(f"{what}: cannot encode '{value}'") from None
    else:
        raise LanesError(f"{what}: cannot encode {value!r}")
    if v < 0 or v >> bitwidth:
        raise LanesError(f"{what}: {value!r} does not fit in {bitwidth} bits")
    return canonical(v)


class Names:
    """P4Info objects by full name or alias."""

    def __init__(self, info: Any) -> None:
        self.tables = {n: t for t in info.tables for n in (t.preamble.name, t.preamble.alias) if n}
        self.actions = {n: a for a in info.actions for n in (a.preamble.name, a.preamble.alias) if n}

    def table(self, name: str) -> Any:
        t = self.tables.get(name)
        if t is None:
            raise LanesError(f"no table '{name}' in the P4Info")
        return t

    def action(self, name: str) -> Any:
        a = self.actions.get(name)
        if a is None:
            raise LanesError(f"no action '{name}' in the P4Info")
        return a


def _to_update(names: Names, e: dict) -> Any:
    """One table_entries item as a P4Runtime Update (INSERT, or MODIFY of the default entry)."""
    if "table" not in e:
        raise LanesError("no 'table'")
    t = names.table(e["table"])
    te = p4r.TableEntry(table_id=t.preamble.id)
    default = bool(e.get("default_action", False))
    fields = {f.name: f for f in t.match_fields}
    match = e.get("match") or {}
    if not isinstance(match, dict):
        raise LanesError("'match' must be an object")
    if default and match:
        raise LanesError("a default action has no match")
    for fname, val in match.items():
        f = fields.get(fname)
        if f is None:
            raise LanesError(f"table {t.preamble.name} has no match field '{fname}'")
        fm = te.match.add(field_id=f.id)
        what = f"field {fname}"
        mt = f.match_type
        if mt == p4i.MatchField.EXACT:
            fm.exact.value = encode(val, f.bitwidth, what)
        elif mt == p4i.MatchField.OPTIONAL:
            fm.optional.value = encode(val, f.bitwidth, what)
        elif isinstance(val, list) and len(val) == 2:
            if mt == p4i.MatchField.LPM:
                fm.lpm.value = encode(val[0], f.bitwidth, what)
                fm.lpm.prefix_len = int(val[1])
            elif mt == p4i.MatchField.TERNARY:
                fm.ternary.value = encode(val[0], f.bitwidth, what)
                fm.ternary.mask = encode(val[1], f.bitwidth, what + " mask")
            elif mt == p4i.MatchField.RANGE:
                fm.range.low = encode(val[0], f.bitwidth, what + " low")
                fm.range.high = encode(val[1], f.bitwidth, what + " high")
            else:
                raise LanesError(f"{what}: unsupported match type")
        else:
            raise LanesError(f"{what}: expected [value, prefix_len|mask|high]")
    if "priority" in e:
        te.priority = int(e["priority"])
    if "action_name" not in e:
        raise LanesError("no 'action_name'")
    a = names.action(e["action_name"])
    act = te.action.action
    act.action_id = a.preamble.id
    params = e.get("action_params") or {}
    known = {p.name: p for p in a.params}
    for pname, val in params.items():
        p = known.get(pname)
        if p is None:
            raise LanesError(f"action {a.preamble.name} has no parameter '{pname}'")
        act.params.add(param_id=p.id, value=encode(val, p.bitwidth, f"parameter {pname}"))
    missing = set(known) - set(params)
    if missing:
        raise LanesError(f"action {a.preamble.name} needs parameter(s) {', '.join(sorted(missing))}")
    u = p4r.Update(type=p4r.Update.MODIFY if default else p4r.Update.INSERT)
    if default:
        te.is_default_action = True
    u.entity.table_entry.CopyFrom(te)
    return u

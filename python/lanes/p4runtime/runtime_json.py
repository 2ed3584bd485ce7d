"""The P4 tutorials' runtime.json: target, p4info, bmv2_json and table_entries (table, match,
action_name, action_params, default_action, priority), turned into P4Runtime updates by name
through the P4Info."""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lanes.errors import LanesError
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
    for key in ("multicast_group_entries", "clone_session_entries"):
        if doc.get(key):
            raise LanesError(f"{path}: {key} are not supported by this switch")
    entries = doc.get("table_entries", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise LanesError(f"{path}: table_entries must be a list of objects")
    return Runtime(
        path=path,
        target=str(doc.get("target", "bmv2")),
        p4info=_resolve(path.parent, doc.get("p4info"), "p4info"),
        bmv2_json=_resolve(path.parent, doc.get("bmv2_json"), "bmv2_json"),
        entries=entries,
    )


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


def to_update(names: Names, e: dict, n: int) -> Any:
    """One table_entries item as a P4Runtime Update (INSERT, or MODIFY of the default entry)."""
    try:
        return _to_update(names, e)
    except LanesError as x:
        raise LanesError(f"table_entries[{n}]: {x}") from None
    except (TypeError, ValueError) as x:
        raise LanesError(f"table_entries[{n}]: {x}") from None


def _to_update(names: Names, e: dict) -> Any:
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

"""What bmv2's Thrift API needs to know about the running program, looked up by the names its
clients send (the bmv2 JSON's full names; simple_switch_CLI resolves suffixes itself): table and
action indices in the switch, key kinds and widths, defaults from the JSON, extern kinds.

Built once per program text from the switch's own view of it (`p4rt_compile(...).names_json()`)
and from the JSON itself (default entries, ids for bm_get_id_from_name)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from lanes import _native

# Priorities: bmv2's clients give a priority where the LOWEST value wins (as the CLI's
# `table_add ... PRIORITY`); the switch's tables let the HIGHEST win (P4Runtime). The one
# mapping, used both ways, as the switch's loader does for a bmv2 JSON's const entries.
PRIORITY_MAX = (1 << 31) - 1

KIND_EXACT, KIND_LPM, KIND_TERNARY = _native.KEY_EXACT, _native.KEY_LPM, _native.KEY_TERNARY
KIND_RANGE, KIND_OPTIONAL, KIND_OPTIONAL_ANY = _native.KEY_RANGE, _native.KEY_OPTIONAL, _native.KEY_ANY

V = TypeVar("V")


def to_switch_priority(bmv2_priority: int) -> int:
    return PRIORITY_MAX - bmv2_priority


def to_bmv2_priority(switch_priority: int) -> int:
    return PRIORITY_MAX - switch_priority


@dataclass
class KeyField:
    name: str
    bitwidth: int
    match_kind: str  # exact, lpm, ternary, range, optional

    @property
    def nbytes(self) -> int:
        return (self.bitwidth + 7) // 8


@dataclass
class TableView:
    name: str
    index: int
    keys: list[KeyField]
    actions: dict[str, int]  # action name -> the switch's action index for this table
    const_entries: bool
    default_const: bool
    direct_counter: str | None
    direct_meter: str | None
    json_default: tuple[int, list[bytes]] | None  # (action index, params) from the JSON
    profile: str | None = None  # the action profile of an indirect table
    support_timeout: bool = False  # entries may have idle timeouts

    @property
    def has_priority(self) -> bool:
        return any(k.match_kind in ("ternary", "range", "optional") for k in self.keys)


@dataclass
class ProfileView:
    name: str
    index: int
    with_selector: bool
    actions: dict[str, int]  # action name -> the switch's action index


@dataclass
class ProgramView:
    json_text: str
    md5: bytes
    tables: dict[str, TableView]
    action_names: list[str]  # by the switch's action index (the JSON's order)
    action_widths: dict[str, list[int]]  # action name -> parameter bit widths
    counters: set[str]
    meters: set[str]
    meter_packets: dict[str, bool]
    registers: dict[str, int]  # name -> bit width
    direct_counters: dict[str, str]  # counter name -> table
    direct_meters: dict[str, str]
    ids: dict[tuple[str, str], int] = field(default_factory=dict)  # (kind, name) -> JSON id
    profiles: dict[str, ProfileView] = field(default_factory=dict)

    def table(self, name: str) -> TableView | None:
        return _by_suffix(self.tables, name)

    def profile(self, name: str) -> ProfileView | None:
        return _by_suffix(self.profiles, name)

    def extern(self, names: Collection[str], name: str) -> str | None:
        return _resolve(names, name)


def _resolve(names: Collection[str], name: str) -> str | None:
    """The full name, else the only one that ends with "." + name (as the switch resolves)."""
    if name in names:
        return name
    hits = [n for n in names if n.endswith("." + name)]
    return hits[0] if len(hits) == 1 else None


def _by_suffix(d: dict[str, V], name: str) -> V | None:
    key = _resolve(d, name)
    return None if key is None else d[key]


def build(json_text: str, names: dict[str, Any]) -> ProgramView:
    """A ProgramView from the program text and the switch's names_json() of it."""
    j = json.loads(json_text)
    index_of_action_id = {a["id"]: i for i, a in enumerate(j.get("actions", []))}
    json_tables = {t["name"]: t for p in j.get("pipelines", []) for t in p.get("tables", [])}
    action_widths = {a["name"]: [int(q["bitwidth"]) for q in a["params"]] for a in names["actions"]}
    profiles = {
        p["name"]: ProfileView(p["name"], p["index"], p["with_selector"], {a["name"]: a["index"] for a in p["actions"]})
        for p in names.get("profiles", [])
    }
    profile_names = {p.index: p.name for p in profiles.values()}
    tables = {}
    for t in names["tables"]:
        de = json_tables.get(t["name"], {}).get("default_entry")
        default = None
        if de is not None and de.get("action_id") in index_of_action_id:
            idx = index_of_action_id[de["action_id"]]
            default = (idx, [_hex_bytes(v) for v in de.get("action_data", [])])
        tables[t["name"]] = TableView(
            name=t["name"],
            index=t["index"],
            keys=[KeyField(k["name"], int(k["bitwidth"]), k["match_kind"]) for k in t["keys"]],
            actions={a["name"]: a["index"] for a in t["actions"] if a["index"] is not None},
            const_entries=t["const_entries"],
            default_const=t["default_const"],
            direct_counter=t["direct_counter"],
            direct_meter=t["direct_meter"],
            json_default=default,
            profile=profile_names.get(t.get("profile")),
            support_timeout=bool(t.get("support_timeout")),
        )
    ids = {}
    for kind, key in (("table", None), ("counter", "counter_arrays"), ("meter", "meter_arrays"),
                      ("register", "register_arrays"), ("learn", "learn_lists"),
                      ("action_profile", "action_profiles")):  # fmt: skip
        items: Iterable[Any]
        if key == "action_profiles":
            items = [a for p in j.get("pipelines", []) for a in p.get("action_profiles", [])]
        else:
            items = json_tables.values() if key is None else j.get(key, [])
        for x in items:
            if "id" in x and "name" in x:
                ids[(kind, x["name"])] = int(x["id"])
    return ProgramView(
        json_text=json_text,
        md5=hashlib.md5(json_text.encode()).digest(),
        tables=tables,
        action_names=[a["name"] for a in j.get("actions", [])],
        action_widths=action_widths,
        counters={c["name"] for c in names["counters"]},
        meters={m["name"] for m in names["meters"]},
        meter_packets={n: bool(p) for n, p in names["meter_packets"]},
        registers={r["name"]: int(r["bitwidth"]) for r in names["registers"]},
        direct_counters={c["name"]: c["table"] for c in names["direct_counters"]},
        direct_meters={m["name"]: m["table"] for m in names["direct_meters"]},
        ids=ids,
        profiles=profiles,
    )


def _hex_bytes(v: str) -> bytes:
    """An action_data value of the JSON ("0x0a" or decimal) as big-endian bytes."""
    n = int(v, 0) if isinstance(v, str) else int(v)
    return n.to_bytes(max(1, (n.bit_length() + 7) // 8), "big")

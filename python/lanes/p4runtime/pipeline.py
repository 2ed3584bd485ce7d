"""A forwarding pipeline as the P4Runtime server sees it: the P4Info, checked against the bmv2
JSON program, with every P4Info id resolved to the compiled program's own indices."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from lanes import _native
from lanes.p4runtime import valuesets
from lanes.p4runtime.devconfig import bmv2_json
from lanes.p4runtime.errors import P4RTError, code_from_number, invalid
from lanes.p4runtime.proto import p4i

MATCH_KINDS = {
    p4i.MatchField.EXACT: "exact",
    p4i.MatchField.LPM: "lpm",
    p4i.MatchField.TERNARY: "ternary",
    p4i.MatchField.RANGE: "range",
    p4i.MatchField.OPTIONAL: "optional",
}


@dataclass
class KeySpec:
    id: int
    name: str
    bitwidth: int
    kind: str  # exact, lpm, ternary, range, optional


@dataclass
class ActionSpec:
    id: int
    name: str
    # p4info param id -> (position in the program's parameter list, bitwidth)
    params: dict[int, tuple[int, int]]


@dataclass
class TableSpec:
    id: int
    name: str
    index: int  # the program's table index
    keys: list[KeySpec]
    key_pos: dict[int, int]  # match field id -> position
    actions: dict[int, int]  # p4info action id -> program action index
    action_ids: dict[int, int]  # program action index -> p4info action id
    scopes: dict[int, int]  # p4info action id -> ActionRef scope (TABLE_AND_DEFAULT, ...)
    needs_priority: bool
    size: int
    default_const: bool
    default: tuple[int, list[bytes]] | None
    direct_counter: str | None
    direct_meter: str | None
    idle_notify: bool = False  # entries may have idle timeouts (P4Info NOTIFY_CONTROL)
    profile: int | None = None  # P4Info id of the action profile of an indirect table
    json_profile: int | None = None  # the program's index of that profile


@dataclass
class ProfileSpec:
    """An action profile (with_selector: an action selector, whose groups tables may name)."""

    id: int
    name: str
    index: int  # the program's profile index
    with_selector: bool
    size: int
    max_group_size: int
    actions: dict[int, int] = field(default_factory=dict)  # p4info action id -> program index
    action_ids: dict[int, int] = field(default_factory=dict)  # program index -> p4info action id


@dataclass
class ExternSpec:
    id: int
    name: str
    size: int
    bitwidth: int = 0
    table_id: int = 0  # direct resources: the P4Info id of their table


@dataclass
class DigestSpec:
    id: int
    name: str
    list_index: int  # the program's learn list
    widths: list[int]


@dataclass
class PacketMeta:
    """A controller_packet_metadata header: fields in order (id, name, bitwidth)."""

    fields: list[tuple[int, str, int]]

    @property
    def nbytes(self) -> int:
        return sum(f[2] for f in self.fields) // 8


@dataclass
class Pipeline:
    p4info: Any
    device_config: bytes
    cookie: int
    json_text: str
    tables: dict[int, TableSpec] = field(default_factory=dict)
    actions: dict[int, ActionSpec] = field(default_factory=dict)
    counters: dict[int, ExternSpec] = field(default_factory=dict)
    direct_counters: dict[int, ExternSpec] = field(default_factory=dict)
    meters: dict[int, ExternSpec] = field(default_factory=dict)
    direct_meters: dict[int, ExternSpec] = field(default_factory=dict)
    registers: dict[int, ExternSpec] = field(default_factory=dict)
    digests: dict[int, DigestSpec] = field(default_factory=dict)
    profiles: dict[int, ProfileSpec] = field(default_factory=dict)
    value_sets: dict[int, Any] = field(default_factory=dict)  # id -> valuesets.ValueSetSpec
    packet_in: PacketMeta | None = None
    packet_out: PacketMeta | None = None
    staged: Any = None  # _native.P4rtProgram until committed


def compile_program(json_text: str) -> tuple[Any, dict[str, Any]]:
    try:
        prog = _native.p4rt_compile(json_text)
    except _native.P4rtError as e:
        code, msg = e.args[:2]
        raise P4RTError(code_from_number(code), f"bmv2 JSON refused: {msg}") from None
    return prog, json.loads(prog.names_json())


def build(config: Any) -> Pipeline:
    """Check a ForwardingPipelineConfig and resolve its P4Info; INVALID_ARGUMENT on mismatch."""
    if not config.HasField("p4info"):
        raise invalid("config has no p4info")
    text = bmv2_json(config.p4_device_config)
    return build_from(config.p4info, text, config.p4_device_config, config.cookie.cookie)


def build_from(p4info: Any, json_text: str, device_config: bytes, cookie: int = 0) -> Pipeline:
    staged, names = compile_program(json_text)
    try:
        header_types = {h["name"]: h for h in json.loads(json_text).get("header_types", [])}
    except (ValueError, AttributeError, TypeError):
        header_types = {}
    pl = Pipeline(p4info=p4info, device_config=device_config, cookie=cookie, json_text=json_text)
    pl.staged = staged
    _resolve(pl, p4info, names, header_types)
    return pl


def _unique(ids: list[int], what: str) -> None:
    seen: set[int] = set()
    for i in ids:
        if i in seen:
            raise invalid(f"p4info: duplicate {what} id {i:#x}")
        seen.add(i)


# P4Runtime's id prefixes (p4info.proto, P4Ids.Prefix): an id's top byte says what it names
ID_PREFIX = {"actions": 0x01, "tables": 0x02, "value_sets": 0x03, "controller_packet_metadata": 0x04,
             "action_profiles": 0x11, "counters": 0x12, "direct_counters": 0x13, "meters": 0x14,
             "direct_meters": 0x15, "registers": 0x16, "digests": 0x17}  # fmt: skip


def _check_ids(info: Any) -> None:
    """Every id carries its kind's prefix (so no id is 0 or names two things)."""
    for kind, prefix in ID_PREFIX.items():
        for x in getattr(info, kind):
            i = x.preamble.id
            if i >> 24 != prefix:
                raise invalid(f"p4info: {kind.rstrip('s').replace('_', ' ')} {x.preamble.name} has id {i:#x}, "
                              f"not one with the prefix {prefix:#04x}")  # fmt: skip


def _resolve(pl: Pipeline, info: Any, names: dict[str, Any], header_types: dict[str, Any]) -> None:
    _check_ids(info)
    jactions = {a["name"]: a for a in names["actions"]}
    for a in info.actions:
        name = a.preamble.name
        ja = jactions.get(name)
        if ja is None:
            raise invalid(f"p4info action {name} is not in the bmv2 JSON")
        jparams = ja["params"]
        if len(jparams) != len(a.params):
            raise invalid(f"action {name}: p4info has {len(a.params)} parameters, JSON {len(jparams)}")
        params = {}
        for pos, (p, jp) in enumerate(zip(a.params, jparams, strict=True)):
            if p.name != jp["name"] or p.bitwidth != jp["bitwidth"]:
                raise invalid(
                    f"action {name} parameter {pos + 1}: p4info {p.name}:{p.bitwidth} "
                    f"vs JSON {jp['name']}:{jp['bitwidth']}"
                )
            params[p.id] = (pos, p.bitwidth)
        if len(params) != len(a.params):
            raise invalid(f"action {name}: duplicate parameter ids")
        pl.actions[a.preamble.id] = ActionSpec(a.preamble.id, name, params)
    _unique([a.preamble.id for a in info.actions], "action")

    jtables = {t["name"]: t for t in names["tables"]}
    for t in info.tables:
        pl.tables[t.preamble.id] = _table(pl, t, jtables)
    _unique([t.preamble.id for t in info.tables], "table")
    named = {t.preamble.name for t in info.tables}
    for jt in names["tables"]:
        # p4c leaves its own keyless tables (tbl_*) out of the P4Info, nothing else
        if jt["keys"] and jt["name"] not in named:
            raise invalid(f"table {jt['name']} of the bmv2 JSON is not in the p4info")

    def externs(kind: str, items: Any, direct: bool) -> dict[int, ExternSpec]:
        jx = {x["name"]: x for x in names[kind]}
        out = {}
        for x in items:
            name = x.preamble.name
            j = jx.get(name)
            if j is None:
                raise invalid(f"p4info {kind[:-1].replace('_', ' ')} {name} is not in the bmv2 JSON")
            spec = ExternSpec(x.preamble.id, name, int(j["size"]))
            if direct:
                tbl = next((s for s in pl.tables.values() if s.id == x.direct_table_id), None)
                if tbl is None or j["table"] != tbl.name:
                    raise invalid(f"p4info {name}: direct_table_id does not name its table {j['table']}")
                spec.table_id = tbl.id
            elif x.size != spec.size:
                raise invalid(f"{name}: p4info size {x.size}, JSON size {spec.size}")
            out[spec.id] = spec
        return out

    pl.counters = externs("counters", info.counters, False)
    pl.direct_counters = externs("direct_counters", info.direct_counters, True)
    pl.meters = externs("meters", info.meters, False)
    pl.direct_meters = externs("direct_meters", info.direct_meters, True)
    pl.registers = externs("registers", info.registers, False)
    jregs = {r["name"]: r for r in names["registers"]}
    for r in info.registers:
        width = r.type_spec.bitstring.bit.bitwidth or r.type_spec.bitstring.varbit.max_bitwidth
        if width and width != jregs[r.preamble.name]["bitwidth"]:
            raise invalid(
                f"register {r.preamble.name}: p4info width {width}, JSON {jregs[r.preamble.name]['bitwidth']}"
            )
        pl.registers[r.preamble.id].bitwidth = jregs[r.preamble.name]["bitwidth"]
    pl.digests = _digests(info, names["learn_lists"])
    pl.profiles = _profiles(pl, info, names.get("profiles", []))
    pl.value_sets = valuesets.resolve(info, names.get("value_sets", []))
    for m in info.controller_packet_metadata:
        fields = [(f.id, f.name, f.bitwidth) for f in m.metadata]
        if sum(f[2] for f in fields) % 8:
            raise invalid(f"controller_packet_metadata {m.preamble.name}: fields do not fill whole bytes")
        _check_header(m.preamble.name, fields, header_types)
        if m.preamble.name == "packet_in":
            pl.packet_in = PacketMeta(fields)
        elif m.preamble.name == "packet_out":
            pl.packet_out = PacketMeta(fields)


def _digests(info: Any, learn_lists: list[dict[str, Any]]) -> dict[int, DigestSpec]:
    """Each P4Info digest with the learn list of the bmv2 JSON that carries it: the one named
    as the digest or its struct type (p4c names learn lists after the type), or the only one."""
    out = {}
    by_name = {ll["name"]: i for i, ll in enumerate(learn_lists)}
    for d in info.digests:
        type_name = d.type_spec.struct.name
        index = by_name.get(d.preamble.name, by_name.get(type_name))
        if index is None and len(info.digests) == 1 and len(learn_lists) == 1:
            index = 0
        if index is None:
            raise invalid(f"p4info digest {d.preamble.name} is not a learn list of the bmv2 JSON")
        widths = learn_lists[index]["widths"]
        out[d.preamble.id] = DigestSpec(d.preamble.id, d.preamble.name, index, widths)
    _unique([d.preamble.id for d in info.digests], "digest")
    return out


def _profiles(pl: Pipeline, info: Any, jprofiles: list[dict[str, Any]]) -> dict[int, ProfileSpec]:
    """Each P4Info action profile with the JSON's of the same name; its tables are indirect in
    both, and its members may run the actions of those tables."""
    by_name = {p["name"]: p for p in jprofiles}
    out = {}
    for ap in info.action_profiles:
        name = ap.preamble.name
        jp = by_name.get(name)
        if jp is None:
            raise invalid(f"p4info action profile {name} is not in the bmv2 JSON")
        if bool(ap.with_selector) != bool(jp["with_selector"]):
            raise invalid(f"action profile {name}: with_selector differs between p4info and JSON")
        spec = ProfileSpec(ap.preamble.id, name, jp["index"], bool(jp["with_selector"]), int(ap.size),
                           int(ap.max_group_size))  # fmt: skip
        for tid in ap.table_ids:
            t = pl.tables.get(tid)
            if t is None or t.json_profile != spec.index:
                raise invalid(f"action profile {name}: table id {tid:#x} is not one of its tables")
            t.profile = spec.id
            spec.actions.update(t.actions)
        spec.action_ids = {v: k for k, v in spec.actions.items()}
        out[spec.id] = spec
    _unique([ap.preamble.id for ap in info.action_profiles], "action profile")
    for t in info.tables:
        if t.implementation_id and pl.tables[t.preamble.id].profile != t.implementation_id:
            raise invalid(f"table {t.preamble.name}: implementation_id {t.implementation_id:#x} does not list it")
    return out


def _check_header(name: str, fields: list[tuple[int, str, int]], header_types: dict[str, Any]) -> None:
    """The program must have a header type with these fields (widths in order)."""
    want = [(n, w) for _, n, w in fields]
    for h in header_types.values():
        got = [(f[0], f[1]) for f in h.get("fields", []) if not str(f[0]).startswith("_padding")]
        if got == want:
            return
    raise invalid(f"controller_packet_metadata {name}: no header type in the JSON has fields {want}")


def _table(pl: Pipeline, t: Any, jtables: dict[str, Any]) -> TableSpec:
    name = t.preamble.name
    jt = jtables.get(name)
    if jt is None:
        raise invalid(f"p4info table {name} is not in the bmv2 JSON")
    idle = t.idle_timeout_behavior == p4i.Table.NOTIFY_CONTROL
    # the switch takes idle timeouts by the JSON's flag, the server reports them by the P4Info's
    if idle and not jt.get("support_timeout"):
        raise invalid(f"table {name}: p4info asks for idle notifications, the JSON table has no support_timeout")
    if jt.get("support_timeout") and not idle:
        raise invalid(f"table {name}: the JSON table has support_timeout, p4info asks for no idle notifications")
    if bool(t.implementation_id) != (jt.get("profile") is not None):
        raise invalid(f"table {name}: p4info and JSON differ on its action profile implementation")
    jkeys = jt["keys"]
    if len(jkeys) != len(t.match_fields):
        raise invalid(f"table {name}: p4info has {len(t.match_fields)} match fields, JSON {len(jkeys)}")
    keys = []
    for mf, jk in zip(t.match_fields, jkeys, strict=True):
        kind = MATCH_KINDS.get(mf.match_type)
        if kind is None:
            raise invalid(f"table {name} field {mf.name}: unsupported match type")
        # p4c writes an optional key as a ternary one in the bmv2 JSON
        json_kind = "optional" if (kind, jk["match_kind"]) == ("optional", "ternary") else jk["match_kind"]
        if kind != json_kind or mf.bitwidth != jk["bitwidth"] or mf.name != jk["name"]:
            raise invalid(
                f"table {name} field {mf.id}: p4info {mf.name}:{mf.bitwidth}:{kind} "
                f"vs JSON {jk['name']}:{jk['bitwidth']}:{jk['match_kind']}"
            )
        keys.append(KeySpec(mf.id, mf.name, mf.bitwidth, kind))
    key_pos = {k.id: i for i, k in enumerate(keys)}
    if len(key_pos) != len(keys):
        raise invalid(f"table {name}: duplicate match field ids")
    jacts = {a["name"]: a["index"] for a in jt["actions"]}
    actions: dict[int, int] = {}
    scopes: dict[int, int] = {}
    for ref in t.action_refs:
        scopes[ref.id] = ref.scope
        spec = pl.actions.get(ref.id)
        if spec is None:
            raise invalid(f"table {name}: action id {ref.id:#x} is not in the p4info")
        idx = jacts.get(spec.name)
        if idx is None:
            raise invalid(f"table {name}: action {spec.name} is not an action of this table in the JSON")
        actions[ref.id] = idx
    default = None
    if jt["default"] is not None:
        default = (jt["default"]["index"], [bytes(p) for p in jt["default"]["params"]])
    return TableSpec(
        id=t.preamble.id,
        name=name,
        index=jt["index"],
        keys=keys,
        key_pos=key_pos,
        actions=actions,
        action_ids={v: k for k, v in actions.items()},
        scopes=scopes,
        needs_priority=any(k.kind in ("ternary", "range", "optional") for k in keys),
        size=int(jt["size"]),
        default_const=bool(jt["default_const"]),
        default=default,
        direct_counter=jt["direct_counter"],
        direct_meter=jt["direct_meter"],
        json_profile=jt.get("profile"),
        idle_notify=idle,
    )

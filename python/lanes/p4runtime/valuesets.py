"""Parser value sets (P4Runtime's ValueSetEntry): MODIFY replaces a set's members, Read returns
them. A member's match fields, packed back to back in P4Info order, are one value of the bmv2
JSON's set (its `compressed_bitwidth` is their total width)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from lanes import _native
from lanes.p4runtime.errors import invalid, not_found, unimplemented
from lanes.p4runtime.proto import p4i, p4r
from lanes.p4runtime.values import MODIFY, canonical, native_error, value_of

VSET_ADD, VSET_CLEAR = _native.VSET_ADD, _native.VSET_CLEAR


@dataclass
class ValueSetSpec:
    id: int
    name: str
    fields: list[tuple[int, int, int]]  # (match field id, bitwidth, P4Info match type)
    size: int

    @property
    def width(self) -> int:
        return sum(f[1] for f in self.fields)


def resolve(info: Any, jsets: list[dict]) -> dict[int, ValueSetSpec]:
    """Each P4Info value set with the bmv2 JSON's of the same name and total width."""
    by_name = {v["name"]: v for v in jsets}
    out = {}
    for vs in info.value_sets:
        j = by_name.get(vs.preamble.name)
        if j is None:
            raise invalid(f"p4info value set {vs.preamble.name} is not in the bmv2 JSON")
        spec = ValueSetSpec(vs.preamble.id, vs.preamble.name, [(m.id, m.bitwidth, m.match_type) for m in vs.match],
                            vs.size)  # fmt: skip
        if spec.width != j["width"]:
            raise invalid(f"value set {spec.name}: p4info width {spec.width}, JSON {j['width']}")
        out[spec.id] = spec
    return out


def _pack(spec: ValueSetSpec, member: Any) -> tuple[bytes, bytes]:
    given = {fm.field_id: fm for fm in member.match}
    value = mask = 0
    for fid, bw, kind in spec.fields:
        full = (1 << bw) - 1
        fm = given.pop(fid, None)
        which = fm.WhichOneof("field_match_type") if fm is not None else None
        v = m = 0
        if which == "exact":
            v, m = value_of(fm.exact.value, bw, spec.name), full
        elif which == "ternary":
            v, m = value_of(fm.ternary.value, bw, spec.name), value_of(fm.ternary.mask, bw, spec.name)
        elif which == "lpm":
            plen = fm.lpm.prefix_len
            if not 0 <= plen <= bw:
                raise invalid(f"value set {spec.name}: prefix length {plen} out of range")
            v, m = value_of(fm.lpm.value, bw, spec.name), full ^ (full >> plen)
        elif which is not None:
            raise unimplemented(f"value set {spec.name}: {which} matches are not supported")
        elif kind == p4i.MatchField.EXACT:
            raise invalid(f"value set {spec.name}: exact match field {fid} missing")
        value, mask = (value << bw) | (v & m), (mask << bw) | m
    if given:
        raise invalid(f"value set {spec.name}: no match field with id {next(iter(given))}")
    n = (spec.width + 7) // 8
    return value.to_bytes(n, "big"), mask.to_bytes(n, "big")


def write(sw: Any, sets: dict[int, ValueSetSpec], typ: int, e: Any) -> None:
    spec = sets.get(e.value_set_id)
    if spec is None:
        raise not_found(f"no value set with id {e.value_set_id}")
    if typ != MODIFY:
        raise invalid(f"value set {spec.name}: only MODIFY is allowed")
    if spec.size and len(e.members) > spec.size:
        raise invalid(f"value set {spec.name}: {len(e.members)} members over its size {spec.size}")
    packed = [_pack(spec, m) for m in e.members]
    try:
        _native.vset_write(sw, spec.name, VSET_CLEAR)
        for v, m in packed:
            _native.vset_write(sw, spec.name, VSET_ADD, v, m)
    except _native.P4rtError as x:
        raise native_error(x) from None


def read(sw: Any, sets: dict[int, ValueSetSpec], want: Any) -> Iterator[Any]:
    if want.value_set_id and want.value_set_id not in sets:
        raise not_found(f"no value set with id {want.value_set_id}")
    for spec in sets.values():
        if want.value_set_id and spec.id != want.value_set_id:
            continue
        e = p4r.ValueSetEntry(value_set_id=spec.id)
        for v, m in _native.vset_members(sw, spec.name):
            value, mask = int.from_bytes(v, "big"), int.from_bytes(m, "big")
            member = e.members.add()
            shift = spec.width
            for fid, bw, _kind in spec.fields:
                shift -= bw
                full = (1 << bw) - 1
                fv, fmask = (value >> shift) & full, (mask >> shift) & full
                if fmask == full:
                    member.match.add(field_id=fid).exact.value = canonical(fv)
                elif fmask:
                    fm = member.match.add(field_id=fid)
                    fm.ternary.value = canonical(fv)
                    fm.ternary.mask = canonical(fmask)
        yield p4r.Entity(value_set_entry=e)

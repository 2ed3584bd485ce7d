"""Compares the P4Info lanes p4c writes for a program with the one p4c committed for it
(testdata/p4_16_samples_outputs/NAME.p4.p4info.txtpb).

Entities are paired by their fully qualified name, so an entity's id is compared, not used to
pair. What is compared is what a controller depends on: ids, names, aliases, annotations, the
match fields and action parameters (id, name, bit width, match kind), a table's actions, size
and default actions, and every other field of the entity as written. `doc` strings are left out
(p4c copies comments into them, lanes does not).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from google.protobuf import text_format
from lanes.p4runtime.proto import p4i

# P4Info's repeated entity fields, each a list of messages with a `preamble`
ENTITY_FIELDS = (
    "tables", "actions", "action_profiles", "counters", "direct_counters", "meters",
    "direct_meters", "controller_packet_metadata", "value_sets", "registers", "digests", "externs",
)  # fmt: skip


@dataclass
class P4InfoVerdict:
    equal: bool
    detail: str  # the first difference, or "" when equal


def load(text: str):
    info = p4i.P4Info()
    text_format.Parse(text, info)
    return info


def _strip_docs(msg) -> None:
    for field, value in msg.ListFields():
        if field.name == "doc":
            msg.ClearField("doc")
        elif field.type == field.TYPE_MESSAGE:
            items = value if field.label == field.LABEL_REPEATED else [value]
            for item in items:
                if hasattr(item, "ListFields"):
                    _strip_docs(item)


def _by_name(entities) -> dict[str, object]:
    return {e.preamble.name: e for e in entities}


def _one_line(msg) -> str:
    return text_format.MessageToString(msg, as_one_line=True)


def _first_field_difference(ours, theirs, where: str) -> str:
    for field in theirs.DESCRIPTOR.fields:
        a, b = getattr(ours, field.name), getattr(theirs, field.name)
        if a == b:
            continue
        if field.type == field.TYPE_MESSAGE and field.label != field.LABEL_REPEATED:
            return _first_field_difference(a, b, f"{where}.{field.name}")
        if field.label == field.LABEL_REPEATED and field.type == field.TYPE_MESSAGE:
            for i, (x, y) in enumerate(zip(a, b, strict=False)):
                if x != y:
                    return _first_field_difference(x, y, f"{where}.{field.name}[{i}]")
            return f"{where}.{field.name}: {len(a)} entries, p4c {len(b)}"
        shown = (lambda v: list(v)) if field.label == field.LABEL_REPEATED else (lambda v: v)
        return f"{where}.{field.name}: {shown(a)!r}, p4c {shown(b)!r}"
    return f"{where}: differs"


def compare(ours_text: str, theirs_text: str) -> P4InfoVerdict:
    ours, theirs = load(ours_text), load(theirs_text)
    _strip_docs(ours)
    _strip_docs(theirs)
    for kind in ENTITY_FIELDS:
        mine, p4c = _by_name(getattr(ours, kind)), _by_name(getattr(theirs, kind))
        if set(mine) != set(p4c):
            only_p4c = sorted(set(p4c) - set(mine))
            only_ours = sorted(set(mine) - set(p4c))
            parts = []
            if only_p4c:
                parts.append(f"only p4c has {', '.join(only_p4c[:3])}")
            if only_ours:
                parts.append(f"only lanes has {', '.join(only_ours[:3])}")
            return P4InfoVerdict(False, f"{kind}: {'; '.join(parts)}")
        for name in sorted(p4c):
            if mine[name] != p4c[name]:
                return P4InfoVerdict(
                    False, _first_field_difference(mine[name], p4c[name], f"{kind}['{name}']")
                )
    for field in ("pkg_info", "type_info"):
        if getattr(ours, field) != getattr(theirs, field):
            return P4InfoVerdict(
                False, _first_field_difference(getattr(ours, field), getattr(theirs, field), field)
            )
    return P4InfoVerdict(True, "")


def compare_files(ours: Path, theirs: Path) -> P4InfoVerdict:
    try:
        return compare(ours.read_text(), theirs.read_text())
    except text_format.ParseError as e:
        return P4InfoVerdict(False, f"unreadable P4Info: {e}")

"""Entities by the names in a P4Info, for clients that know a program by its table, action,
counter and register names (`alias` or full name) rather than by ids: table entries with exact
and LPM keys, register and counter cells, clone sessions. Values are plain integers, sent in
P4Runtime's canonical form. A name the program lacks is a LanesError naming it."""

from __future__ import annotations

import ipaddress
from typing import Any, Literal

from lanes.errors import LanesError
from lanes.p4runtime.proto import p4r
from lanes.p4runtime.values import canonical

MatchKind = Literal["exact", "lpm"]
# one key field: (kind, value, prefix length; the length is ignored for "exact")
Key = tuple[MatchKind, int, int]
CellKind = Literal["counter", "register"]


def lpm_key(prefix: str) -> Key:
    """An LPM key field from an IPv4/IPv6 prefix such as 10.0.1.0/24."""
    net = ipaddress.ip_network(prefix)
    return ("lpm", int(net.network_address), net.prefixlen)


class P4InfoNames:
    """Lookups by name in one P4Info."""

    def __init__(self, info: Any) -> None:
        self.info = info

    @staticmethod
    def _find(entities: Any, name: str, what: str) -> Any:
        for e in entities:
            if name in (e.preamble.alias, e.preamble.name) or e.preamble.name.endswith("." + name):
                return e
        raise LanesError(f"the program has no {what} {name}")

    def table(self, name: str) -> Any:
        return self._find(self.info.tables, name, "table")

    def action(self, name: str) -> Any:
        return self._find(self.info.actions, name, "action")

    def cells(self, kind: CellKind) -> Any:
        return self.info.counters if kind == "counter" else self.info.registers

    def cell_id(self, kind: CellKind, name: str) -> int:
        return int(self._find(self.cells(kind), name, kind).preamble.id)

    def table_entry(self, table: str, keys: list[Key], action: str, params: list[int]) -> Any:
        """A p4r.TableEntry: `keys` in the table's match-field order, `params` in the action's."""
        t, a = self.table(table), self.action(action)
        if len(keys) != len(t.match_fields):
            raise LanesError(f"table {table} has {len(t.match_fields)} match fields, not {len(keys)}")
        if len(params) != len(a.params):
            raise LanesError(f"action {action} takes {len(a.params)} parameters, not {len(params)}")
        e = p4r.TableEntry(table_id=t.preamble.id)
        for mf, (kind, value, plen) in zip(t.match_fields, keys, strict=True):
            m = e.match.add(field_id=mf.id)
            if kind == "lpm":
                m.lpm.value = canonical(value)
                m.lpm.prefix_len = plen
            else:
                m.exact.value = canonical(value)
        e.action.action.action_id = a.preamble.id
        for p, v in zip(a.params, params, strict=True):
            e.action.action.params.add(param_id=p.id, value=canonical(v))
        return e

    def register_entry(self, name: str, index: int, value: int | None = None) -> Any:
        """A p4r.RegisterEntry of one cell; with `value`, the data to write."""
        e = p4r.RegisterEntry(register_id=self.cell_id("register", name))
        e.index.index = index
        if value is not None:
            e.data.bitstring = canonical(value)
        return e

    def counter_entry(self, name: str, index: int) -> Any:
        e = p4r.CounterEntry(counter_id=self.cell_id("counter", name))
        e.index.index = index
        return e

    def cell_entities(self, kind: CellKind, cells: list[tuple[str, int]]) -> list[Any]:
        """p4r.Entity's reading indexed counter or register cells, given as (name, index)."""
        out = []
        for name, index in cells:
            ent = p4r.Entity()
            if kind == "counter":
                ent.counter_entry.CopyFrom(self.counter_entry(name, index))
            else:
                ent.register_entry.CopyFrom(self.register_entry(name, index))
            out.append(ent)
        return out

    def cell_name(self, kind: CellKind, cell_id: int) -> str:
        for c in self.cells(kind):
            if c.preamble.id == cell_id:
                return str(c.preamble.alias or c.preamble.name)
        raise LanesError(f"the program has no {kind} with id {cell_id}")


def clone_session(session: int, port: int) -> Any:
    """A p4r.PacketReplicationEngineEntry: copies cloned to `session` leave on `port`."""
    pre = p4r.PacketReplicationEngineEntry()
    pre.clone_session_entry.session_id = session
    pre.clone_session_entry.replicas.add(egress_port=port, instance=1)
    return pre

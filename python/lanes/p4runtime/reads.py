"""Entity reads: table entries (wildcards, partial matches, default entries, direct counters
and meters), counters, registers and meters, from the data plane into P4Runtime messages."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeVar

from lanes import _native
from lanes.p4runtime import valuesets
from lanes.p4runtime.errors import invalid, not_found, unimplemented
from lanes.p4runtime.pipeline import Pipeline, TableSpec
from lanes.p4runtime.proto import p4r
from lanes.p4runtime.values import (
    K_EXACT,
    K_LPM,
    K_OPTIONAL,
    K_RANGE,
    K_TERNARY,
    Key,
    canonical,
    config_out,
    int64,
    native_error,
)

T = TypeVar("T")


class EntityReads:
    """The read half of Entities (which provides sw, pl, fields() and _index())."""

    sw: Any
    pl: Pipeline

    def fields(self, spec: TableSpec, te: Any) -> list[Key]:
        raise NotImplementedError

    def _index(self, e: Any, size: int, name: str) -> int | None:
        raise NotImplementedError

    def read(self, entity: Any) -> Iterator[Any]:
        which = entity.WhichOneof("entity")
        try:
            if which == "table_entry":
                yield from self._read_tables(entity.table_entry)
            elif which == "counter_entry":
                yield from self._read_counters(entity.counter_entry)
            elif which == "register_entry":
                yield from self._read_registers(entity.register_entry)
            elif which == "meter_entry":
                yield from self._read_meters(entity.meter_entry)
            elif which == "direct_counter_entry":
                for te in self._read_tables(entity.direct_counter_entry.table_entry, counters=True):
                    if self.pl.tables[te.table_id].direct_counter is None:
                        continue
                    d = te.counter_data
                    te.ClearField("counter_data")
                    yield p4r.Entity(direct_counter_entry=p4r.DirectCounterEntry(table_entry=te, data=d))
            elif which == "direct_meter_entry":
                for te in self._read_tables(entity.direct_meter_entry.table_entry, meters=True):
                    if self.pl.tables[te.table_id].direct_meter is None:
                        continue
                    cfg = te.meter_config
                    te.ClearField("meter_config")
                    yield p4r.Entity(direct_meter_entry=p4r.DirectMeterEntry(table_entry=te, config=cfg))
            elif which == "packet_replication_engine_entry":
                yield from self._read_pre(entity.packet_replication_engine_entry)
            elif which == "value_set_entry":
                yield from valuesets.read(self.sw, self.pl.value_sets, entity.value_set_entry)
            elif which == "action_profile_member":
                yield from self.read_members(entity.action_profile_member)  # type: ignore[attr-defined]
            elif which == "action_profile_group":
                yield from self.read_groups(entity.action_profile_group)  # type: ignore[attr-defined]
            elif which == "digest_entry" and (digests := getattr(self, "digests", None)) is not None:
                yield from digests.read(entity.digest_entry)
            elif which is None:
                raise invalid("read of an empty entity")
            else:
                raise unimplemented(f"reading {which} is not supported by this switch")
        except _native.P4rtError as x:
            raise native_error(x) from None

    def _read_pre(self, want: Any) -> Iterator[Any]:
        """Multicast groups and clone sessions: all of a kind, or the one whose id is given."""
        which = want.WhichOneof("type")
        if which != "clone_session_entry":
            group = want.multicast_group_entry.multicast_group_id if which else 0
            for mgid, reps in _native.p4rt_multicast_groups(self.sw):
                if group and mgid != group:
                    continue
                g = p4r.MulticastGroupEntry(multicast_group_id=mgid)
                for port, rid in reps:
                    g.replicas.add(egress_port=port, instance=rid)
                yield p4r.Entity(
                    packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(multicast_group_entry=g)
                )
            if which == "multicast_group_entry":
                return
        wanted = want.clone_session_entry.session_id if which == "clone_session_entry" else 0
        for session, port, truncate in _native.p4rt_clone_sessions(self.sw):
            if session == 0 or (wanted and session != wanted):
                continue
            cs = p4r.CloneSessionEntry(session_id=session, packet_length_bytes=truncate)
            cs.replicas.add(egress_port=port, instance=0)
            yield p4r.Entity(
                packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(clone_session_entry=cs)
            )

    def _read_tables(self, want: Any, counters: bool = False, meters: bool = False) -> Iterator[Any]:
        if want.table_id:
            spec = self.pl.tables.get(want.table_id)
            if spec is None:
                raise not_found(f"no table with id {want.table_id}")
            specs = [spec]
        else:
            specs = list(self.pl.tables.values())
        with_counter = counters or want.HasField("counter_data")
        with_meter = meters or want.HasField("meter_config")
        for spec in specs:
            if want.is_default_action:
                target = _native.ap_default_target(self.sw, spec.index) if spec.profile is not None else None
                d = _native.p4rt_table_default(self.sw, spec.index)
                if target is not None:
                    te = p4r.TableEntry(table_id=spec.id, is_default_action=True)
                    self.target_out(te, target)  # type: ignore[attr-defined]
                    yield p4r.Entity(table_entry=te) if not (counters or meters) else te
                elif d is not None:
                    te = p4r.TableEntry(table_id=spec.id, is_default_action=True)
                    self._set_action(te, spec, *d)
                    yield p4r.Entity(table_entry=te) if not (counters or meters) else te
                continue
            fields = self.fields(spec, want) if want.table_id else None
            try:
                entries = _native.p4rt_table_read(self.sw, spec.index, fields)
            except _native.P4rtError as x:
                raise native_error(x) from None
            for e in entries:
                if want.priority and e.priority != want.priority:
                    continue
                te = self.entry_message(spec, e)
                if spec.idle_notify:
                    life = _native.p4rt_entry_life(self.sw, spec.index, e.handle)
                    if life is not None:
                        te.idle_timeout_ns = life[1] or 0
                        if want.HasField("time_since_last_hit"):
                            te.time_since_last_hit.elapsed_ns = life[0]
                if with_counter:
                    te.counter_data.packet_count = int64(e.packets)
                    te.counter_data.byte_count = int64(e.bytes)
                if with_meter:
                    te.meter_config.CopyFrom(config_out(e.meter))
                yield te if (counters or meters) else p4r.Entity(table_entry=te)

    def entry_message(self, spec: TableSpec, e: _native.EntryRead) -> Any:
        """A TableEntry from an entry as the switch reads it: match, action or member/group,
        priority and the controller's metadata."""
        te = p4r.TableEntry(table_id=spec.id, priority=e.priority if spec.needs_priority else 0)
        for k, key in zip(spec.keys, e.keys, strict=True):
            _field_out(te, k, key)
        if e.target is not None:
            self.target_out(te, e.target)  # type: ignore[attr-defined]
        else:
            self._set_action(te, spec, e.action, e.params)
        if e.metadata:
            te.metadata = bytes(e.metadata)
        return te

    def _set_action(self, te: Any, spec: TableSpec, a: int, params: list[bytes]) -> None:
        aid = spec.action_ids.get(a)
        if aid is None:
            return
        act = te.action.action
        act.action_id = aid
        aspec = self.pl.actions[aid]
        for pid, (pos, _) in sorted(aspec.params.items()):
            p = act.params.add()
            p.param_id = pid
            p.value = canonical(int.from_bytes(params[pos], "big"))

    def _read_counters(self, want: Any) -> Iterator[Any]:
        cs = self._pick(self.pl.counters, want.counter_id, "counter")
        for c in cs:
            idx = self._index(want, c.size, c.name)
            for i, pk, by in _native.p4rt_counter_read(self.sw, c.name, idx):
                e = p4r.CounterEntry(counter_id=c.id)
                e.index.index = i
                e.data.packet_count = int64(pk)
                e.data.byte_count = int64(by)
                yield p4r.Entity(counter_entry=e)

    def _read_registers(self, want: Any) -> Iterator[Any]:
        for r in self._pick(self.pl.registers, want.register_id, "register"):
            idx = self._index(want, r.size, r.name)
            for i, v in _native.p4rt_register_read(self.sw, r.name, idx):
                e = p4r.RegisterEntry(register_id=r.id)
                e.index.index = i
                e.data.bitstring = canonical(v)
                yield p4r.Entity(register_entry=e)

    def _read_meters(self, want: Any) -> Iterator[Any]:
        for m in self._pick(self.pl.meters, want.meter_id, "meter"):
            idx = self._index(want, m.size, m.name)
            for i, rates in _native.p4rt_meter_read(self.sw, m.name, idx):
                e = p4r.MeterEntry(meter_id=m.id)
                e.index.index = i
                if rates is not None:
                    e.config.CopyFrom(config_out(rates))
                yield p4r.Entity(meter_entry=e)

    @staticmethod
    def _pick(items: dict[int, T], ident: int, what: str) -> list[T]:
        if not ident:
            return list(items.values())
        x = items.get(ident)
        if x is None:
            raise not_found(f"no {what} with id {ident}")
        return [x]


def _field_out(te: Any, k: Any, key: tuple[int, bytes, bytes, int]) -> None:
    kind, a, b, plen = key
    av = int.from_bytes(a, "big") if a else 0
    bv = int.from_bytes(b, "big") if b else 0
    if kind == K_EXACT:
        te.match.add(field_id=k.id).exact.value = canonical(av)
    elif kind == K_LPM:
        if plen:
            fm = te.match.add(field_id=k.id)
            fm.lpm.value = canonical(av)
            fm.lpm.prefix_len = plen
    elif kind == K_TERNARY:
        if bv:
            fm = te.match.add(field_id=k.id)
            fm.ternary.value = canonical(av)
            fm.ternary.mask = canonical(bv)
    elif kind == K_RANGE:
        if av != 0 or bv != (1 << k.bitwidth) - 1:
            fm = te.match.add(field_id=k.id)
            fm.range.low = canonical(av)
            fm.range.high = canonical(bv)
    elif kind == K_OPTIONAL:
        te.match.add(field_id=k.id).optional.value = canonical(av)

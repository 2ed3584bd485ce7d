"""Entity translation: P4Runtime table entries, counters, registers and meters to the data
plane's calls and back, with P4Runtime's checks (canonical values, priorities, scopes)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc

from lanes import _native
from lanes.p4runtime.errors import P4RTError, code_from_number, invalid, not_found, unimplemented
from lanes.p4runtime.pipeline import Pipeline, TableSpec
from lanes.p4runtime.proto import p4i, p4r

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
TABLE_ONLY, DEFAULT_ONLY = p4i.ActionRef.TABLE_ONLY, p4i.ActionRef.DEFAULT_ONLY
# native key kinds (crates/py/src/p4rt_bindings.rs)
K_EXACT, K_LPM, K_TERNARY, K_RANGE, K_OPTIONAL, K_ANY = 0, 1, 2, 3, 4, 5
OP_INSERT, OP_MODIFY, OP_DELETE, OP_DEFAULT, OP_COUNTER, OP_METER = 0, 1, 2, 3, 4, 5
OK = grpc.StatusCode.OK

Key = tuple[int, bytes, bytes, int]
Canon = tuple[tuple[int, int, int, int], ...]


def to_bytes(v: int, bitwidth: int) -> bytes:
    return v.to_bytes(max(1, (bitwidth + 7) // 8), "big")


def canonical(v: int) -> bytes:
    """P4Runtime's canonical binary string: no leading zero bytes, at least one byte."""
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


def _value(b: bytes, bitwidth: int, what: str) -> int:
    if not b:
        raise invalid(f"{what}: empty value")
    v = int.from_bytes(b, "big")
    if v >> bitwidth:
        raise invalid(f"{what}: value {b.hex()} does not fit in {bitwidth} bits")
    return v


def _native_error(e: Exception) -> P4RTError:
    code, msg = e.args
    return P4RTError(code_from_number(code), msg)


class Entities:
    """Reads and writes of one pipeline's entities on a running switch."""

    def __init__(self, sw: Any, pl: Pipeline) -> None:
        self.sw = sw
        self.pl = pl
        # (table id, canonical match, priority) -> (entry handle, metadata)
        self.index: dict[tuple[int, Canon, int], tuple[int, bytes]] = {}

    # ---- match keys ----

    def match(self, spec: TableSpec, te: Any) -> tuple[list[Key], Canon]:
        given: list[Any] = [None] * len(spec.keys)
        for fm in te.match:
            pos = spec.key_pos.get(fm.field_id)
            if pos is None:
                raise invalid(f"table {spec.name}: no match field with id {fm.field_id}")
            if given[pos] is not None:
                raise invalid(f"table {spec.name}: match field {fm.field_id} given twice")
            given[pos] = fm
        keys: list[Key] = []
        canon = []
        for k, fm in zip(spec.keys, given, strict=True):
            what = f"table {spec.name} field {k.name}"
            full = (1 << k.bitwidth) - 1
            which = fm.WhichOneof("field_match_type") if fm is not None else None
            if which is not None and which != k.kind:
                raise invalid(f"{what}: expected a {k.kind} match, got {which}")
            if k.kind == "exact":
                if fm is None:
                    raise invalid(f"{what}: exact match field missing")
                v = _value(fm.exact.value, k.bitwidth, what)
                keys.append((K_EXACT, fm.exact.value, b"", 0))
                canon.append((K_EXACT, v, 0, 0))
            elif k.kind == "lpm":
                if fm is None:
                    keys.append((K_LPM, b"\x00", b"", 0))
                    canon.append((K_LPM, 0, 0, 0))
                    continue
                plen = fm.lpm.prefix_len
                if not 0 <= plen <= k.bitwidth:
                    raise invalid(f"{what}: prefix length {plen} out of range 0-{k.bitwidth}")
                v = _value(fm.lpm.value, k.bitwidth, what)
                if v & (full >> plen):
                    raise invalid(f"{what}: bits beyond the /{plen} prefix are set")
                keys.append((K_LPM, fm.lpm.value, b"", plen))
                canon.append((K_LPM, v, 0, plen))
            elif k.kind == "ternary":
                if fm is None:
                    keys.append((K_TERNARY, b"\x00", b"\x00", 0))
                    canon.append((K_TERNARY, 0, 0, 0))
                    continue
                v = _value(fm.ternary.value, k.bitwidth, what)
                m = _value(fm.ternary.mask, k.bitwidth, what + " mask")
                if v & ~m:
                    raise invalid(f"{what}: value has bits set outside the mask")
                keys.append((K_TERNARY, fm.ternary.value, fm.ternary.mask, 0))
                canon.append((K_TERNARY, v, m, 0))
            elif k.kind == "range":
                if fm is None:
                    keys.append((K_RANGE, b"\x00", to_bytes(full, k.bitwidth), 0))
                    canon.append((K_RANGE, 0, full, 0))
                    continue
                lo = _value(fm.range.low, k.bitwidth, what + " low")
                hi = _value(fm.range.high, k.bitwidth, what + " high")
                if lo > hi:
                    raise invalid(f"{what}: low bound above high bound")
                keys.append((K_RANGE, fm.range.low, fm.range.high, 0))
                canon.append((K_RANGE, lo, hi, 0))
            else:  # optional
                if fm is None:
                    keys.append((K_ANY, b"", b"", 0))
                    canon.append((K_ANY, 0, 0, 0))
                    continue
                v = _value(fm.optional.value, k.bitwidth, what)
                keys.append((K_OPTIONAL, fm.optional.value, b"", 0))
                canon.append((K_OPTIONAL, v, 0, 0))
        return keys, tuple(canon)

    def _priority(self, spec: TableSpec, te: Any) -> int:
        if spec.needs_priority:
            if te.priority <= 0:
                raise invalid(f"table {spec.name} needs a priority > 0 (ternary/range/optional match)")
        elif te.priority != 0:
            raise invalid(f"table {spec.name} has no ternary/range/optional field: priority must be 0")
        return te.priority

    def action(self, spec: TableSpec, ta: Any, default: bool) -> tuple[int, list[bytes]]:
        which = ta.WhichOneof("type")
        if which is None:
            raise invalid(f"table {spec.name}: no action given")
        if which != "action":
            raise unimplemented(f"{which}: action profiles are not supported")
        a = ta.action
        aspec = self.pl.actions.get(a.action_id)
        if aspec is None:
            raise not_found(f"no action with id {a.action_id}")
        idx = spec.actions.get(a.action_id)
        if idx is None:
            raise invalid(f"action {aspec.name} is not an action of table {spec.name}")
        scope = spec.scopes.get(a.action_id, 0)
        if default and scope == TABLE_ONLY:
            raise invalid(f"action {aspec.name} may not be the default action of {spec.name} (@tableonly)")
        if not default and scope == DEFAULT_ONLY:
            raise invalid(f"action {aspec.name} may only be the default action of {spec.name} (@defaultonly)")
        params: list[bytes | None] = [None] * len(aspec.params)
        for p in a.params:
            pos_bw = aspec.params.get(p.param_id)
            if pos_bw is None:
                raise invalid(f"action {aspec.name}: no parameter with id {p.param_id}")
            pos, bw = pos_bw
            if params[pos] is not None:
                raise invalid(f"action {aspec.name}: parameter {p.param_id} given twice")
            _value(p.value, bw, f"action {aspec.name} parameter {p.param_id}")
            params[pos] = p.value
        if any(p is None for p in params):
            raise invalid(f"action {aspec.name}: missing parameter(s)")
        return idx, params  # type: ignore[return-value]

    # ---- writes ----

    def write(self, updates: Any) -> list[tuple[grpc.StatusCode, str]]:
        """Apply updates in order; one (code, message) per update."""
        results: list[tuple[grpc.StatusCode, str]] = [(OK, "")] * len(updates)
        batch: list[tuple[int, tuple, tuple]] = []
        for i, u in enumerate(updates):
            try:
                which = u.entity.WhichOneof("entity")
                if u.type not in (INSERT, MODIFY, DELETE):
                    raise invalid("update type must be INSERT, MODIFY or DELETE")
                if which == "table_entry":
                    batch.append((i, *self._table_op(u.type, u.entity.table_entry)))
                    continue
                self._flush(batch, results)
                if which is None:
                    raise invalid("update without an entity")
                if u.type != MODIFY:
                    raise invalid(f"{which}: only MODIFY is allowed")
                self._write_other(which, getattr(u.entity, which))
            except P4RTError as e:
                results[i] = (e.code, e.message)
        self._flush(batch, results)
        return results

    def _table_op(self, typ: int, te: Any) -> tuple[tuple, tuple]:
        spec = self.pl.tables.get(te.table_id)
        if spec is None:
            raise not_found(f"no table with id {te.table_id}")
        if te.HasField("time_since_last_hit") or te.idle_timeout_ns:
            raise invalid(f"table {spec.name} does not support idle timeouts")
        if te.is_default_action:
            if typ != MODIFY:
                raise invalid(f"table {spec.name}: the default entry can only be modified")
            if len(te.match) or te.priority:
                raise invalid(f"table {spec.name}: the default entry has no match and no priority")
            if te.HasField("action"):
                a, params = self.action(spec, te.action, default=True)
            elif spec.default is not None:
                a, params = spec.default
            else:
                raise invalid(f"table {spec.name} has no default action to return to")
            return (OP_DEFAULT, spec.index, [], a, params, 0, -1, None, None), (None, typ, b"")
        if spec.const_entries:
            raise P4RTError(grpc.StatusCode.PERMISSION_DENIED, f"table {spec.name} has const entries")
        keys, canon = self.match(spec, te)
        prio = self._priority(spec, te)
        ikey = (spec.id, canon, prio)
        hint = self.index.get(ikey, (-1, b""))[0]
        a, params = 0, []
        if typ != DELETE:
            a, params = self.action(spec, te.action, default=False)
        counter = None
        if te.HasField("counter_data"):
            counter = (te.counter_data.packet_count, te.counter_data.byte_count)
        meter = _rates(te.meter_config) if te.HasField("meter_config") else None
        op = {INSERT: OP_INSERT, MODIFY: OP_MODIFY, DELETE: OP_DELETE}[typ]
        return (op, spec.index, keys, a, params, prio, hint, counter, meter), (ikey, typ, te.metadata)

    def _flush(self, batch: list, results: list) -> None:
        if not batch:
            return
        try:
            out = _native.p4rt_table_write(self.sw, [b[1] for b in batch])
        except _native.P4rtError as e:
            err = _native_error(e)
            for i, *_ in batch:
                results[i] = (err.code, err.message)
            batch.clear()
            return
        for (i, _, (ikey, typ, meta)), (code, handle, msg) in zip(batch, out, strict=True):
            if code:
                results[i] = (code_from_number(code), msg)
            elif ikey is not None:
                if typ == DELETE:
                    self.index.pop(ikey, None)
                elif typ == INSERT or ikey in self.index or meta:
                    self.index[ikey] = (handle, meta)
        batch.clear()

    def _write_other(self, which: str, e: Any) -> None:
        pl, sw = self.pl, self.sw
        try:
            if which == "counter_entry":
                c = pl.counters.get(e.counter_id)
                if c is None:
                    raise not_found(f"no counter with id {e.counter_id}")
                idx = self._index(e, c.size, c.name)
                _native.p4rt_counter_write(sw, c.name, idx, e.data.packet_count, e.data.byte_count)
            elif which == "register_entry":
                r = pl.registers.get(e.register_id)
                if r is None:
                    raise not_found(f"no register with id {e.register_id}")
                idx = self._index(e, r.size, r.name)
                if e.data.WhichOneof("data") != "bitstring":
                    raise invalid(f"register {r.name}: data must be a bitstring")
                v = _value(e.data.bitstring, r.bitwidth, f"register {r.name}")
                _native.p4rt_register_write(sw, r.name, idx, v)
            elif which == "meter_entry":
                m = pl.meters.get(e.meter_id)
                if m is None:
                    raise not_found(f"no meter with id {e.meter_id}")
                idx = self._index(e, m.size, m.name)
                rates = _rates(e.config) if e.HasField("config") else None
                _native.p4rt_meter_write(sw, m.name, idx, rates)
            elif which in ("direct_counter_entry", "direct_meter_entry"):
                self._write_direct(which, e)
            else:
                raise unimplemented(f"{which} is not supported by this switch")
        except _native.P4rtError as x:
            raise _native_error(x) from None

    def _index(self, e: Any, size: int, name: str) -> int | None:
        if not e.HasField("index"):
            return None
        if not 0 <= e.index.index < size:
            raise P4RTError(
                grpc.StatusCode.OUT_OF_RANGE, f"{name}: index {e.index.index} out of range (size {size})"
            )
        return e.index.index

    def _write_direct(self, which: str, e: Any) -> None:
        te = e.table_entry
        spec = self.pl.tables.get(te.table_id)
        if spec is None:
            raise not_found(f"no table with id {te.table_id}")
        keys, canon = self.match(spec, te)
        prio = self._priority(spec, te)
        hint = self.index.get((spec.id, canon, prio), (-1, b""))[0]
        if which == "direct_counter_entry":
            if spec.direct_counter is None:
                raise invalid(f"table {spec.name} has no direct counter")
            op = (
                OP_COUNTER,
                spec.index,
                keys,
                0,
                [],
                prio,
                hint,
                (e.data.packet_count, e.data.byte_count),
                None,
            )
        else:
            if spec.direct_meter is None:
                raise invalid(f"table {spec.name} has no direct meter")
            rates = _rates(e.config) if e.HasField("config") else None
            op = (OP_METER, spec.index, keys, 0, [], prio, hint, None, rates)
        code, _, msg = _native.p4rt_table_write(self.sw, [op])[0]
        if code:
            raise P4RTError(code_from_number(code), msg)

    # ---- reads ----

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
            elif which is None:
                raise invalid("read of an empty entity")
            else:
                raise unimplemented(f"reading {which} is not supported by this switch")
        except _native.P4rtError as x:
            raise _native_error(x) from None

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
                d = _native.p4rt_table_default(self.sw, spec.index)
                if d is not None:
                    te = p4r.TableEntry(table_id=spec.id, is_default_action=True)
                    self._set_action(te, spec, *d)
                    yield p4r.Entity(table_entry=te) if not (counters or meters) else te
                continue
            filt = self._filter(spec, want) if want.table_id else {}
            for h, keys, a, params, prio, (pk, by), rates in _native.p4rt_table_read(self.sw, spec.index):
                if want.priority and prio != want.priority:
                    continue
                canon = tuple(_canon_out(k) for k in keys)
                if any(canon[pos] != c for pos, c in filt.items()):
                    continue
                te = p4r.TableEntry(table_id=spec.id, priority=prio if spec.needs_priority else 0)
                for k, key in zip(spec.keys, keys, strict=True):
                    _field_out(te, k, key)
                self._set_action(te, spec, a, params)
                meta = self.index.get((spec.id, canon, te.priority))
                if meta is not None and meta[1]:
                    te.metadata = meta[1]
                if with_counter:
                    te.counter_data.packet_count = pk
                    te.counter_data.byte_count = by
                if with_meter:
                    te.meter_config.CopyFrom(_config_out(rates))
                yield te if (counters or meters) else p4r.Entity(table_entry=te)

    def _filter(self, spec: TableSpec, want: Any) -> dict[int, tuple]:
        """Positions and canonical values of the match fields a read names."""
        if not len(want.match):
            return {}
        out = {}
        for fm in want.match:
            pos = spec.key_pos.get(fm.field_id)
            if pos is None:
                raise invalid(f"table {spec.name}: no match field with id {fm.field_id}")
            probe = p4r.TableEntry(table_id=spec.id)
            probe.match.add().CopyFrom(fm)
            # reuse the write-side checks on a one-field copy (others become don't-care)
            try:
                _, canon = self.match(spec, probe)
            except P4RTError:
                if spec.keys[pos].kind == "exact":  # other exact fields missing: check this one alone
                    canon = [None] * len(spec.keys)
                    canon[pos] = (K_EXACT, _value(fm.exact.value, spec.keys[pos].bitwidth, "match"), 0, 0)
                else:
                    raise
            out[pos] = canon[pos]
        return out

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
                e.data.packet_count = pk
                e.data.byte_count = by
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
                    e.config.CopyFrom(_config_out(rates))
                yield p4r.Entity(meter_entry=e)

    @staticmethod
    def _pick(items: dict, ident: int, what: str) -> list:
        if not ident:
            return list(items.values())
        x = items.get(ident)
        if x is None:
            raise not_found(f"no {what} with id {ident}")
        return [x]


def _rates(cfg: Any) -> tuple[float, int, float, int] | None:
    """MeterConfig -> (cir, cburst, pir, pburst); None for an empty config (reset to default)."""
    vals = (cfg.cir, cfg.cburst, cfg.pir, cfg.pburst)
    if any(v < 0 for v in vals):
        raise invalid("meter config values must not be negative")
    if not any(vals):
        return None
    if cfg.pir < cfg.cir:
        raise invalid("meter config: pir below cir")
    return (float(cfg.cir), int(cfg.cburst), float(cfg.pir), int(cfg.pburst))


def _config_out(rates: tuple | None) -> Any:
    if rates is None:
        return p4r.MeterConfig()
    cir, cbs, pir, pbs = rates
    return p4r.MeterConfig(cir=int(cir), cburst=int(cbs), pir=int(pir), pburst=int(pbs))


def _canon_out(key: tuple) -> tuple[int, int, int, int]:
    kind, a, b, plen = key
    av = int.from_bytes(a, "big") if a else 0
    bv = int.from_bytes(b, "big") if b else 0
    if kind == K_EXACT or kind == K_OPTIONAL:
        return (kind, av, 0, 0)
    if kind == K_LPM:
        return (kind, av, 0, plen)
    if kind == K_ANY:
        return (kind, 0, 0, 0)
    return (kind, av, bv, 0)


def _field_out(te: Any, k: Any, key: tuple) -> None:
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

"""bmv2's Standard service, match tables: add, modify, delete, defaults, reads, direct counters
and meters, by table name and entry handle. Indirect tables and action profiles are in
profiles.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar, TypeVarTuple

from bm_runtime.standard.ttypes import (
    BmActionEntry,
    BmActionEntryType,
    BmAddEntryOptions,
    BmCounterValue,
    BmMatchParam,
    BmMatchParamExact,
    BmMatchParamLPM,
    BmMatchParamRange,
    BmMatchParamTernary,
    BmMatchParamType,
    BmMeterRateConfig,
    BmMtEntry,
    BmMtEntryLife,
    InvalidTableOperation,
    TableOperationErrorCode,
)

from lanes import _native
from lanes._native import Switch, TableWrite
from lanes.switch.thrift import program as tp
from lanes.switch.thrift.context import SwitchContext, log, native_code, thrift_code
from lanes.switch.thrift.program import ProgramView, TableView

if TYPE_CHECKING:  # the stub's shapes of keys, entries and meter rates
    from lanes._native import EntryRead
    from lanes._native import _Key as Key
    from lanes._native import _OutKey as OutKey
    from lanes._native import _Rates as Rates

E = TableOperationErrorCode
OP_INSERT, OP_DEFAULT = _native.OP_INSERT, _native.OP_DEFAULT
R = TypeVar("R")
Args = TypeVarTuple("Args")


def table_error(call: str, code: int, message: str) -> InvalidTableOperation:
    log(call, f"{E._VALUES_TO_NAMES.get(code, code)}: {message}")
    return InvalidTableOperation(code=code)


class TablesMixin:
    ctx: SwitchContext

    # ---- lookups ----

    def _view(self, call: str) -> ProgramView:
        v = self.ctx.config.view()
        if v is None:
            raise table_error(call, E.ERROR, "no P4 program loaded")
        return v

    def _table(self, call: str, name: str) -> tuple[ProgramView, TableView]:
        v = self._view(call)
        t = v.table(name)
        if t is None:
            raise table_error(call, E.INVALID_TABLE_NAME, f"no table named '{name}'")
        return v, t

    def _action(self, call: str, t: TableView, name: str) -> int:
        if t.profile is not None:
            raise table_error(
                call, E.WRONG_TABLE_TYPE, f"{t.name} is indirect: its entries name a member or group"
            )
        a = t.actions.get(name)
        if a is None:
            raise table_error(call, E.INVALID_ACTION_NAME, f"table {t.name} has no action '{name}'")
        return a

    def _native(self, call: str, fn: Callable[[Switch, *Args], R], *args: *Args) -> R:
        """Call the switch; its error as bmv2's table error code (the switch says which)."""
        try:
            return fn(self.ctx.sw, *args)
        except _native.P4rtError as e:
            raise table_error(call, thrift_code(e), native_code(e)[1]) from None

    def _keys(self, call: str, t: TableView, match_key: list[BmMatchParam]) -> list[Key]:
        """BmMatchParams as the switch's key fields: (position, kind, a, b, prefix length); the
        switch checks them against the table."""
        keys = [_key(call, i, k, p) for i, (k, p) in enumerate(zip(t.keys, match_key, strict=False))]
        # parameters past the table's key: the switch refuses the count ("has N key fields, got M")
        keys += [(i, tp.KIND_EXACT, b"", b"", 0) for i in range(len(keys), len(match_key))]
        return keys

    def _priority(self, call: str, t: TableView, options: BmAddEntryOptions | None) -> int:
        if not t.has_priority:
            return 0
        p = options.priority if options is not None and options.priority is not None else 0
        if p < 0:
            raise table_error(call, E.BAD_MATCH_KEY, f"priority {p} is negative")
        return tp.to_switch_priority(p)

    def _write(self, call: str, w: TableWrite) -> int:
        """One table write (bmv2's key rules); the switch's error as bmv2's code."""
        (r,) = self._native(call, _native.p4rt_table_write, [w])
        if r.code:
            raise table_error(call, r.thrift_code, r.message)
        return r.handle

    def _entry_out(self, v: ProgramView, t: TableView, e: EntryRead) -> BmMtEntry:
        handle, keys, action, params, target = e.handle, e.keys, e.action, e.params, e.target
        prio = tp.to_bmv2_priority(e.priority) if t.has_priority else -1
        if target is None:
            act = BmActionEntry(
                action_type=BmActionEntryType.ACTION_DATA,
                action_name=v.action_names[action],
                action_data=[bytes(p) for p in params],
            )
        elif target[0]:
            act = BmActionEntry(action_type=BmActionEntryType.GRP_HANDLE, grp_handle=target[1])
        else:
            act = BmActionEntry(action_type=BmActionEntryType.MBR_HANDLE, mbr_handle=target[1])
        life = None
        kept = _native.p4rt_entry_life(self.ctx.sw, t.index, handle) if t.support_timeout else None
        if kept is not None:  # None: the table keeps no hit times
            since, ttl = kept
            life = BmMtEntryLife(timeout_ms=(ttl or 0) // 1_000_000, time_since_hit_ms=since // 1_000_000)
        return BmMtEntry(
            match_key=[_param_out(kf, k) for kf, k in zip(t.keys, keys, strict=True)],
            options=BmAddEntryOptions(priority=prio),
            entry_handle=handle,
            action_entry=act,
            life=life,
        )

    # ---- Standard: match tables ----

    def bm_mt_get_num_entries(self, cxt_id: int, table_name: str) -> int:
        _, t = self._table("bm_mt_get_num_entries", table_name)
        return self._native("bm_mt_get_num_entries", _native.bm_table_num_entries, t.index)

    def bm_mt_clear_entries(self, cxt_id: int, table_name: str, reset_default_entry: bool) -> None:
        _, t = self._table("bm_mt_clear_entries", table_name)
        self._native("bm_mt_clear_entries", _native.p4rt_table_clear, t.index)
        if reset_default_entry:
            self.bm_mt_reset_default_entry(cxt_id, table_name)

    def bm_mt_add_entry(
        self,
        cxt_id: int,
        table_name: str,
        match_key: list[BmMatchParam],
        action_name: str,
        action_data: list[bytes],
        options: BmAddEntryOptions | None,
    ) -> int:
        call = "bm_mt_add_entry"
        _, t = self._table(call, table_name)
        a = self._action(call, t, action_name)
        keys = self._keys(call, t, match_key)
        prio = self._priority(call, t, options)
        w = _native.TableWrite(
            OP_INSERT, t.index, keys, priority=prio, action=a, params=action_data, p4runtime_rules=False
        )
        return self._write(call, w)

    def bm_mt_set_default_action(
        self, cxt_id: int, table_name: str, action_name: str, action_data: list[bytes]
    ) -> None:
        call = "bm_mt_set_default_action"
        _, t = self._table(call, table_name)
        a = self._action(call, t, action_name)
        w = _native.TableWrite(OP_DEFAULT, t.index, action=a, params=action_data, p4runtime_rules=False)
        self._write(call, w)

    def bm_mt_reset_default_entry(self, cxt_id: int, table_name: str) -> None:
        call = "bm_mt_reset_default_entry"
        _, t = self._table(call, table_name)
        if t.json_default is None:
            raise table_error(call, E.NO_DEFAULT_ENTRY, f"table {t.name} has no default entry in its JSON")
        a, params = t.json_default
        w = _native.TableWrite(OP_DEFAULT, t.index, action=a, params=params, p4runtime_rules=False)
        self._write(call, w)

    def bm_mt_delete_entry(self, cxt_id: int, table_name: str, entry_handle: int) -> None:
        _, t = self._table("bm_mt_delete_entry", table_name)
        self._native("bm_mt_delete_entry", _native.bm_entry_delete, t.index, _handle(entry_handle))

    def bm_mt_modify_entry(
        self, cxt_id: int, table_name: str, entry_handle: int, action_name: str, action_data: list[bytes]
    ) -> None:
        call = "bm_mt_modify_entry"
        _, t = self._table(call, table_name)
        a = self._action(call, t, action_name)
        self._native(call, _native.bm_entry_modify, t.index, _handle(entry_handle), a, action_data)

    def bm_mt_set_entry_ttl(self, cxt_id: int, table_name: str, entry_handle: int, timeout_ms: int) -> None:
        self.entry_ttl("bm_mt_set_entry_ttl", table_name, entry_handle, timeout_ms)

    def entry_ttl(self, call: str, table_name: str, entry_handle: int, timeout_ms: int) -> None:
        """An entry's idle timeout (0: none), in a table with support_timeout."""
        _, t = self._table(call, table_name)
        if timeout_ms < 0:
            raise table_error(call, E.ERROR, f"negative timeout {timeout_ms} ms")
        ttl = timeout_ms * 1_000_000 or None
        self._native(call, _native.p4rt_entry_ttl, t.index, _handle(entry_handle), ttl)

    def bm_mt_get_entries(self, cxt_id: int, table_name: str) -> list[BmMtEntry]:
        v, t = self._table("bm_mt_get_entries", table_name)
        return [
            self._entry_out(v, t, e)
            for e in self._native("bm_mt_get_entries", _native.p4rt_table_read, t.index)
        ]

    def bm_mt_get_entry(self, cxt_id: int, table_name: str, entry_handle: int) -> BmMtEntry:
        v, t = self._table("bm_mt_get_entry", table_name)
        return self._entry_out(
            v, t, self._native("bm_mt_get_entry", _native.bm_entry, t.index, _handle(entry_handle))
        )

    def bm_mt_get_entry_from_key(
        self, cxt_id: int, table_name: str, match_key: list[BmMatchParam], options: BmAddEntryOptions | None
    ) -> BmMtEntry:
        call = "bm_mt_get_entry_from_key"
        v, t = self._table(call, table_name)
        keys = self._keys(call, t, match_key)
        prio = self._priority(call, t, options)
        e = self._native(call, _native.p4rt_table_find, t.index, keys, prio, False)
        if e is None:
            raise table_error(call, E.BAD_MATCH_KEY, "no entry with this match key")
        return self._entry_out(v, t, e)

    def bm_mt_get_default_entry(self, cxt_id: int, table_name: str) -> BmActionEntry:
        v, t = self._table("bm_mt_get_default_entry", table_name)
        if t.profile is not None:
            target = self._native("bm_mt_get_default_entry", _native.ap_default_target, t.index)
            if target is not None:
                kind = BmActionEntryType.GRP_HANDLE if target[0] else BmActionEntryType.MBR_HANDLE
                return BmActionEntry(action_type=kind, mbr_handle=target[1], grp_handle=target[1])
        d = self._native("bm_mt_get_default_entry", _native.p4rt_table_default, t.index)
        if d is None:
            return BmActionEntry(action_type=BmActionEntryType.NONE)
        return BmActionEntry(
            action_type=BmActionEntryType.ACTION_DATA,
            action_name=v.action_names[d[0]],
            action_data=[bytes(p) for p in d[1]],
        )

    # ---- direct counters and meters ----
    # (a table without one: the switch answers COUNTERS_DISABLED or METERS_DISABLED, lanes-p4's
    # NoDirectCounter and NoDirectMeter, the same rule on every route)

    def bm_mt_read_counter(self, cxt_id: int, table_name: str, entry_handle: int) -> BmCounterValue:
        _, t = self._table("bm_mt_read_counter", table_name)
        pk, by = self._native("bm_mt_read_counter", _native.bm_direct_counter, t.index, _handle(entry_handle))
        return BmCounterValue(bytes=by, packets=pk)

    def bm_mt_reset_counters(self, cxt_id: int, table_name: str) -> None:
        _, t = self._table("bm_mt_reset_counters", table_name)
        self._native("bm_mt_reset_counters", _native.bm_direct_counters_reset, t.index)

    def bm_mt_write_counter(
        self, cxt_id: int, table_name: str, entry_handle: int, value: BmCounterValue
    ) -> None:
        call = "bm_mt_write_counter"
        _, t = self._table(call, table_name)
        v = (_u64(value.packets), _u64(value.bytes))
        self._native(call, _native.bm_direct_counter, t.index, _handle(entry_handle), v)

    def bm_mt_set_meter_rates(
        self, cxt_id: int, table_name: str, entry_handle: int, rates: list[BmMeterRateConfig]
    ) -> None:
        call = "bm_mt_set_meter_rates"
        _, t = self._table(call, table_name)
        r = meter_rates(rates)
        if isinstance(r, UnsendableRates):
            raise table_error(call, E.INVALID_METER_OPERATION, r.message)
        self._native(call, _native.bm_direct_meter_set, t.index, _handle(entry_handle), r)

    def bm_mt_get_meter_rates(
        self, cxt_id: int, table_name: str, entry_handle: int
    ) -> list[BmMeterRateConfig]:
        call = "bm_mt_get_meter_rates"
        _, t = self._table(call, table_name)
        return meter_rates_out(self._native(call, _native.bm_direct_meter_get, t.index, _handle(entry_handle)))


def _handle(h: int) -> int:
    """Thrift's i32 handle as the switch's u32 (a negative one matches no entry)."""
    return h if h >= 0 else 0xFFFFFFFF


def _u64(v: int | None) -> int:
    return (v or 0) & 0xFFFFFFFFFFFFFFFF


def _fixed(b: bytes, k: tp.KeyField) -> bytes:
    return bytes(b).rjust(k.nbytes, b"\0")[-k.nbytes :] if len(b) <= k.nbytes else bytes(b)


def _key(call: str, pos: int, k: tp.KeyField, p: BmMatchParam) -> Key:
    T = BmMatchParamType
    kind = k.match_kind
    if p.type == T.EXACT and kind == "exact" and p.exact:
        return (pos, tp.KIND_EXACT, p.exact.key, b"", 0)
    if p.type == T.EXACT and kind == "optional" and p.exact:
        return (pos, tp.KIND_OPTIONAL, p.exact.key, b"", 0)
    if p.type == T.LPM and kind == "lpm" and p.lpm:
        return (pos, tp.KIND_LPM, p.lpm.key, b"", int(p.lpm.prefix_length))
    if p.type == T.TERNARY and kind == "ternary" and p.ternary:
        return (pos, tp.KIND_TERNARY, p.ternary.key, p.ternary.mask, 0)
    if p.type == T.TERNARY and kind == "optional" and p.ternary:
        mask = int.from_bytes(p.ternary.mask, "big")
        if mask == 0:
            return (pos, tp.KIND_OPTIONAL_ANY, b"", b"", 0)
        if mask == (1 << k.bitwidth) - 1:
            return (pos, tp.KIND_OPTIONAL, p.ternary.key, b"", 0)
    if p.type == T.RANGE and kind == "range" and p.range:
        return (pos, tp.KIND_RANGE, p.range.start, p.range.end_, 0)
    got = T._VALUES_TO_NAMES.get(p.type, p.type)
    raise table_error(call, E.BAD_MATCH_KEY, f"key {k.name} is {kind}, got a {got} match parameter")


def _param_out(k: tp.KeyField, key: OutKey) -> BmMatchParam:
    T = BmMatchParamType
    kind, a, b, plen = key
    if kind == tp.KIND_EXACT:
        return BmMatchParam(type=T.EXACT, exact=BmMatchParamExact(_fixed(a, k)))
    if kind == tp.KIND_LPM:
        return BmMatchParam(type=T.LPM, lpm=BmMatchParamLPM(_fixed(a, k), plen))
    if kind == tp.KIND_RANGE:
        return BmMatchParam(type=T.RANGE, range=BmMatchParamRange(_fixed(a, k), _fixed(b, k)))
    if kind == tp.KIND_TERNARY:
        return BmMatchParam(type=T.TERNARY, ternary=BmMatchParamTernary(_fixed(a, k), _fixed(b, k)))
    full = ((1 << k.bitwidth) - 1).to_bytes(k.nbytes, "big")
    if kind == tp.KIND_OPTIONAL:  # bmv2 reads an optional key back as a ternary one
        return BmMatchParam(type=T.TERNARY, ternary=BmMatchParamTernary(_fixed(a, k), full))
    zero = bytes(k.nbytes)
    return BmMatchParam(type=T.TERNARY, ternary=BmMatchParamTernary(zero, zero))


@dataclass(frozen=True)
class UnsendableRates:
    """bmv2's rate list has no form the switch takes: `what` is "list" (not two rates), "rate" (a
    rate missing) or "burst" (a burst missing or negative), which picks bmv2's code."""

    what: str
    message: str


def meter_rates(rates: list[BmMeterRateConfig] | None) -> Rates | UnsendableRates:
    """bmv2's [committed, peak] rates (units per microsecond, bursts in units) as the switch's
    (cir, cbs, pir, pbs) per second. The rates' rule (none negative, committed not above peak)
    is the switch's (MeterRates::check: INVALID_METER_OPERATION)."""
    if rates is None or len(rates) != 2:
        n = 0 if rates is None else len(rates)
        return UnsendableRates("list", f"a meter takes 2 rates (committed, peak), got {n}")
    (c, p) = rates
    if c.units_per_micros is None or p.units_per_micros is None:
        return UnsendableRates("rate", "a rate is missing")
    if c.burst_size is None or p.burst_size is None or c.burst_size < 0 or p.burst_size < 0:
        return UnsendableRates("burst", "a burst size is negative")
    return (c.units_per_micros * 1e6, int(c.burst_size), p.units_per_micros * 1e6, int(p.burst_size))


def meter_rates_out(r: Rates | None) -> list[BmMeterRateConfig]:
    """The switch's rates as bmv2's list (empty for a meter never configured)."""
    if r is None:
        return []
    cir, cbs, pir, pbs = r
    return [BmMeterRateConfig(cir / 1e6, cbs), BmMeterRateConfig(pir / 1e6, pbs)]

"""Entity writes: P4Runtime table entries, counters, registers and meters to the data plane's
calls, with P4Runtime's checks (canonical values, priorities, scopes) and per-update results."""

from __future__ import annotations

from typing import Any

import grpc

from lanes import _native
from lanes.p4runtime import valuesets
from lanes.p4runtime.errors import P4RTError, code_from_number, invalid, not_found, unimplemented
from lanes.p4runtime.pipeline import Pipeline, TableSpec
from lanes.p4runtime.profiles import ProfileEntities
from lanes.p4runtime.reads import EntityReads
from lanes.p4runtime.values import (
    DEFAULT_ONLY,
    DELETE,
    INSERT,
    K_EXACT,
    K_LPM,
    K_OPTIONAL,
    K_RANGE,
    K_TERNARY,
    MODIFY,
    OK,
    OP_COUNTER,
    OP_DEFAULT,
    OP_DELETE,
    OP_INSERT,
    OP_METER,
    OP_MODIFY,
    TABLE_ONLY,
    Key,
    counter_pair,
    meter_rates,
    native_error,
    value_of,
)

# a table update's bookkeeping once written: (table id, update type, one-shot set)
Done = tuple[int, int, Any]


class Entities(EntityReads, ProfileEntities):
    """Reads and writes of one pipeline's entities on a running switch."""

    def __init__(self, sw: Any, pl: Pipeline, digests: Any = None) -> None:
        self.sw = sw
        self.pl = pl
        self.digests = digests  # DigestEngine: DigestEntry configs
        # the one-shot action set an entry runs, by (table id, entry handle); the entries
        # themselves, with their metadata, are only the switch's
        self.oneshots = {}
        self.next_hidden = 0

    # ---- match keys ----

    def fields(self, spec: TableSpec, te: Any) -> list[Key]:
        """The match fields a TableEntry names, as the switch's (position, kind, a, b, prefix
        length). The values are checked by the switch (widths, prefixes, masks, ranges, fields
        given twice or missing, priority); here only what P4Info says: the field ids and which
        match each field takes."""
        out: list[Key] = []
        for fm in te.match:
            pos = spec.key_pos.get(fm.field_id)
            if pos is None:
                raise invalid(f"table {spec.name}: no match field with id {fm.field_id}")
            k = spec.keys[pos]
            which = fm.WhichOneof("field_match_type")
            if which != k.kind:
                raise invalid(f"table {spec.name} field {k.name}: expected a {k.kind} match, got {which}")
            if which == "exact":
                out.append((pos, K_EXACT, fm.exact.value, b"", 0))
            elif which == "lpm":
                out.append((pos, K_LPM, fm.lpm.value, b"", fm.lpm.prefix_len))
            elif which == "ternary":
                out.append((pos, K_TERNARY, fm.ternary.value, fm.ternary.mask, 0))
            elif which == "range":
                out.append((pos, K_RANGE, fm.range.low, fm.range.high, 0))
            else:
                out.append((pos, K_OPTIONAL, fm.optional.value, b"", 0))
        return out

    def action(self, spec: TableSpec, a: Any, default: bool) -> tuple[int, list[bytes]]:
        """The program's action index and parameters a P4Info Action names. Whether the table
        takes an action (not a member or group) and whether each parameter fits its width are
        the switch's rules; the P4Info ids and scopes are checked here."""
        aspec = self.pl.actions.get(a.action_id)
        if aspec is None:
            raise not_found(f"no action with id {a.action_id}")
        # the P4Info id to the program's index; the switch would answer NOT_FOUND for an action
        # of another table, P4Runtime says INVALID_ARGUMENT
        idx = spec.actions.get(a.action_id)
        if idx is None:
            raise invalid(f"action {aspec.name} is not an action of table {spec.name}")
        scope = spec.scopes.get(a.action_id, 0)
        if default and scope == TABLE_ONLY:
            raise invalid(f"action {aspec.name} may not be the default action of {spec.name} (@tableonly)")
        if not default and scope == DEFAULT_ONLY:
            raise invalid(f"action {aspec.name} may only be the default action of {spec.name} (@defaultonly)")
        return idx, self._action_params(aspec, a)

    def _action_params(self, aspec: Any, a: Any) -> list[bytes]:
        """The action's parameters in the program's order (by P4Info id, each given once). Their
        widths are the switch's check; an empty value is not (it reads as 0 there), and
        P4Runtime refuses it."""
        params: list[bytes | None] = [None] * len(aspec.params)
        for p in a.params:
            pos_bw = aspec.params.get(p.param_id)
            if pos_bw is None:
                raise invalid(f"action {aspec.name}: no parameter with id {p.param_id}")
            pos, _width = pos_bw
            if params[pos] is not None:
                raise invalid(f"action {aspec.name}: parameter {p.param_id} given twice")
            if not p.value:
                raise invalid(f"action {aspec.name} parameter {p.param_id}: empty value")
            params[pos] = p.value
        if any(p is None for p in params):
            raise invalid(f"action {aspec.name}: missing parameter(s)")
        return params  # type: ignore[return-value]

    # ---- writes ----

    def write(self, updates: Any) -> list[tuple[grpc.StatusCode, str]]:
        """Apply updates in order; one (code, message) per update."""
        results: list[tuple[grpc.StatusCode, str]] = [(OK, "")] * len(updates)
        batch: list[tuple[int, Any, Done]] = []
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
                if which == "packet_replication_engine_entry":
                    self._write_pre(u.type, u.entity.packet_replication_engine_entry)
                    continue
                if which == "digest_entry" and self.digests is not None:
                    self.digests.write(u.type, u.entity.digest_entry)
                    continue
                if which == "value_set_entry":
                    valuesets.write(self.sw, self.pl.value_sets, u.type, u.entity.value_set_entry)
                    continue
                if which == "action_profile_member":
                    self.write_member(u.type, u.entity.action_profile_member)
                    continue
                if which == "action_profile_group":
                    self.write_group(u.type, u.entity.action_profile_group)
                    continue
                if u.type != MODIFY:
                    raise invalid(f"{which}: only MODIFY is allowed")
                self._write_other(which, getattr(u.entity, which))
            except P4RTError as e:
                results[i] = (e.code, e.message)
        self._flush(batch, results)
        return results

    def _table_op(self, typ: int, te: Any) -> tuple[Any, Done]:
        """The switch's TableWrite for a table entry update, and what to remember once it is
        done."""
        spec = self.pl.tables.get(te.table_id)
        if spec is None:
            raise not_found(f"no table with id {te.table_id}")
        if te.HasField("time_since_last_hit"):
            raise invalid(f"table {spec.name}: time_since_last_hit is read-only")
        if te.idle_timeout_ns < 0:  # the switch's timeouts are unsigned
            raise invalid(f"table {spec.name}: negative idle_timeout_ns")
        # a timeout given goes to the switch, which refuses it where the table has none; 0 is
        # "never ages" where it has them and "none given" elsewhere
        ttl = te.idle_timeout_ns or (0 if spec.idle_notify and typ != DELETE else None)
        if te.is_default_action:
            if typ != MODIFY:
                raise invalid(f"table {spec.name}: the default entry can only be modified")
            keys = self.fields(spec, te)
            chosen = self._default(spec, te)
            default = _native.TableWrite(
                OP_DEFAULT, spec.index, keys, priority=te.priority, idle_timeout_ns=ttl, **chosen
            )
            return default, (spec.id, typ, None)
        keys = self.fields(spec, te)
        action: int | None = None
        params: list[bytes] = []
        target, hidden = None, None
        which = te.action.WhichOneof("type")
        if typ == DELETE:
            pass
        elif which == "action":  # the switch refuses it in an indirect table
            action, params = self.action(spec, te.action.action, default=False)
        elif which is None:
            raise invalid(f"table {spec.name}: no action given")
        elif which == "action_profile_action_set" and spec.profile is None:
            raise invalid(f"table {spec.name} is not indirect: {which} names no action")
        else:  # a member, a group (the switch refuses them in a direct table) or an action set
            target, hidden = self.indirect_target(spec, te.action)
        w = _native.TableWrite(
            {INSERT: OP_INSERT, MODIFY: OP_MODIFY, DELETE: OP_DELETE}[typ],
            spec.index,
            keys,
            priority=te.priority,
            action=action,
            params=params,
            target=target,
            counter=counter_pair(te.counter_data) if te.HasField("counter_data") else None,
            meter=meter_rates(te.meter_config) if te.HasField("meter_config") else None,
            idle_timeout_ns=ttl,
            metadata=te.metadata if typ != DELETE else None,  # a MODIFY replaces it too
        )
        return w, (spec.id, typ, hidden)

    def _default(self, spec: TableSpec, te: Any) -> dict[str, Any]:
        """The action (or member, group) a default entry write sets; none given: the program's
        default again. The switch refuses an action in an indirect table, a member or group in a
        direct one."""
        if te.action.WhichOneof("type") == "action":
            a, params = self.action(spec, te.action.action, default=True)
        elif te.HasField("action"):
            return {"target": self._named_target(spec, te.action)}
        elif spec.profile is not None:
            return {"target": None}
        elif spec.default is not None:
            a, params = spec.default
        else:
            raise invalid(f"table {spec.name} has no default action to return to")
        return {"action": a, "params": params}

    def _flush(self, batch: list[tuple[int, Any, Done]], results: list[tuple[grpc.StatusCode, str]]) -> None:
        if not batch:
            return
        try:
            out = _native.p4rt_table_write(self.sw, [w for _i, w, _done in batch])
        except _native.P4rtError as e:
            err = native_error(e)
            for i, _w, done in batch:
                results[i] = (err.code, err.message)
                self.drop_hidden(done[2])
            batch.clear()
            return
        for (i, _w, (table_id, typ, hidden)), r in zip(batch, out, strict=True):
            if r.code:
                results[i] = (code_from_number(r.code), r.message)
                self.drop_hidden(hidden)
                continue
            if r.handle < 0:  # a default entry
                continue
            entry = (table_id, r.handle)
            if typ != INSERT:  # the entry's earlier one-shot set is no longer named
                self.drop_hidden(self.oneshots.pop(entry, None))
            if hidden is not None:
                self.oneshots[entry] = hidden
        batch.clear()

    def _write_other(self, which: str, e: Any) -> None:
        pl, sw = self.pl, self.sw
        try:
            if which == "counter_entry":
                c = pl.counters.get(e.counter_id)
                if c is None:
                    raise not_found(f"no counter with id {e.counter_id}")
                idx = self._index(e, c.size, c.name)
                _native.p4rt_counter_write(sw, c.name, idx, *counter_pair(e.data))
            elif which == "register_entry":
                r = pl.registers.get(e.register_id)
                if r is None:
                    raise not_found(f"no register with id {e.register_id}")
                idx = self._index(e, r.size, r.name)
                if e.data.WhichOneof("data") != "bitstring":
                    raise invalid(f"register {r.name}: data must be a bitstring")
                v = value_of(e.data.bitstring, r.bitwidth, f"register {r.name}")
                _native.p4rt_register_write(sw, r.name, idx, v)
            elif which == "meter_entry":
                m = pl.meters.get(e.meter_id)
                if m is None:
                    raise not_found(f"no meter with id {e.meter_id}")
                idx = self._index(e, m.size, m.name)
                rates = meter_rates(e.config) if e.HasField("config") else None
                _native.p4rt_meter_write(sw, m.name, idx, rates)
            elif which in ("direct_counter_entry", "direct_meter_entry"):
                self._write_direct(which, e)
            else:
                raise unimplemented(f"{which} is not supported by this switch")
        except _native.P4rtError as x:
            raise native_error(x) from None

    def _write_pre(self, typ: int, pre: Any) -> None:
        """A multicast group (its replicas: egress port and instance, the copies' egress_rid) or
        a clone session (its one replica's port is the mirror port, packet_length_bytes the
        truncation, 0: whole packets; class_of_service and the replica's instance are ignored)."""
        which = pre.WhichOneof("type")
        if which == "multicast_group_entry":
            return self._write_multicast(typ, pre.multicast_group_entry)
        if which != "clone_session_entry":
            if which is None:
                raise invalid("packet_replication_engine_entry without an entry")
            raise unimplemented(f"{which} is not supported by this switch")
        cs = pre.clone_session_entry
        if cs.session_id == 0:  # the upper bound is the switch's (mirror sessions 0-32767)
            raise invalid("clone session id 0 out of range (0 is P4Runtime's unset value)")
        port = 0
        if typ != DELETE:
            if not cs.replicas:
                raise invalid(f"clone session {cs.session_id}: needs one replica (its egress port)")
            if len(cs.replicas) > 1:
                raise unimplemented(f"clone session {cs.session_id}: only one replica is supported")
            r = cs.replicas[0]
            if r.WhichOneof("port_kind") == "port":
                if not 0 < len(r.port) <= 4:
                    raise invalid(f"clone session {cs.session_id}: replica port must be 1 to 4 bytes")
                port = int.from_bytes(r.port, "big")
            else:
                port = r.egress_port
            if len(r.backup_replicas):
                raise unimplemented(f"clone session {cs.session_id}: backup replicas are not supported")
        op = {INSERT: OP_INSERT, MODIFY: OP_MODIFY, DELETE: OP_DELETE}[typ]
        try:
            _native.p4rt_clone_session_write(self.sw, op, cs.session_id, port, cs.packet_length_bytes)
        except _native.P4rtError as x:
            raise native_error(x) from None

    def _write_multicast(self, typ: int, g: Any) -> None:
        reps = []
        if typ != DELETE:
            for r in g.replicas:
                if r.WhichOneof("port_kind") == "port":
                    if not 0 < len(r.port) <= 4:
                        raise invalid(f"multicast group {g.multicast_group_id}: replica port must be 1 to 4 bytes")
                    port = int.from_bytes(r.port, "big")
                else:
                    port = r.egress_port
                if len(r.backup_replicas):
                    raise unimplemented(
                        f"multicast group {g.multicast_group_id}: backup replicas are not supported"
                    )
                reps.append((port, r.instance))
        op = {INSERT: OP_INSERT, MODIFY: OP_MODIFY, DELETE: OP_DELETE}[typ]
        try:
            _native.p4rt_multicast_group_write(self.sw, op, g.multicast_group_id, reps)
        except _native.P4rtError as x:
            raise native_error(x) from None
        except OverflowError:
            raise invalid(f"multicast group {g.multicast_group_id}: port or instance out of range") from None

    def _index(self, e: Any, size: int, name: str) -> int | None:
        """The cell an entry names (None: all). The range is the switch's rule (IndexOutOfRange,
        OUT_OF_RANGE); only a negative index, which has no form to send it in, is refused here."""
        if not e.HasField("index"):
            return None
        if e.index.index < 0:
            raise P4RTError(
                grpc.StatusCode.OUT_OF_RANGE, f"{name}: index {e.index.index} out of range (size {size})"
            )
        index: int = e.index.index
        return index

    def _write_direct(self, which: str, e: Any) -> None:
        te = e.table_entry
        spec = self.pl.tables.get(te.table_id)
        if spec is None:
            raise not_found(f"no table with id {te.table_id}")
        keys = self.fields(spec, te)
        # a table without a direct counter or meter is refused by the switch (NoDirectCounter,
        # NoDirectMeter in lanes-p4), as on every other route
        if which == "direct_counter_entry":
            w = _native.TableWrite(
                OP_COUNTER, spec.index, keys, priority=te.priority, counter=counter_pair(e.data)
            )
        else:
            rates = meter_rates(e.config) if e.HasField("config") else None
            w = _native.TableWrite(OP_METER, spec.index, keys, priority=te.priority, meter=rates)
        (r,) = _native.p4rt_table_write(self.sw, [w])
        if r.code:
            raise P4RTError(code_from_number(r.code), r.message)

    # ---- reads ----

"""A small P4Runtime controller for one lab switch: becomes primary on the stream channel, pushes
the program (P4Info + bmv2 JSON) with SetForwardingPipelineConfig and writes the thesis's table
entries, one Update per Write, so each counts as one control-plane write.

Message classes come from the official `p4runtime` package's descriptors (lanes.p4runtime.proto
loads them into a private pool, as the package's generated modules predate protobuf 4)."""

from __future__ import annotations

import ipaddress
import queue
import threading
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import text_format

from lanes.emu.control import class_action
from lanes.emu.topo import Route
from lanes.errors import LanesError
from lanes.p4runtime.proto import enum_value, p4i, p4r

SERVICE = "/p4.v1.P4Runtime/"


def canonical(v: int) -> bytes:
    """P4Runtime's canonical bytes: big-endian, no leading zero bytes, at least one byte."""
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


class P4RuntimeTables:
    channel = "p4runtime"

    def __init__(
        self, name: str, port: int, device_id: int, p4info: Path, program: Path, election_id: int = 1
    ) -> None:
        self.name = name
        self.device_id = device_id
        self.election_id = election_id
        self.ch = grpc.insecure_channel(f"127.0.0.1:{port}")
        try:
            grpc.channel_ready_future(self.ch).result(timeout=15)
        except grpc.FutureTimeoutError:
            raise LanesError(f"{name}: no P4Runtime server on 127.0.0.1:{port}") from None
        self.info = text_format.Parse(p4info.read_text(), p4i.P4Info())
        self._requests: queue.Queue = queue.Queue()
        stream = self.ch.stream_stream(
            SERVICE + "StreamChannel",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=p4r.StreamMessageResponse.FromString,
        )
        self._responses = stream(iter(self._requests.get, None))
        self._arbitrate()
        threading.Thread(target=self._drain, name=f"p4rt-{name}", daemon=True).start()
        self._write_rpc = self.ch.unary_unary(
            SERVICE + "Write", request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=p4r.WriteResponse.FromString,
        )  # fmt: skip
        self._read_rpc = self.ch.unary_stream(
            SERVICE + "Read", request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=p4r.ReadResponse.FromString,
        )  # fmt: skip
        self._set_pipeline(program)

    def _election(self, msg: Any) -> None:
        msg.election_id.high = self.election_id >> 64
        msg.election_id.low = self.election_id & ((1 << 64) - 1)

    def _arbitrate(self) -> None:
        req = p4r.StreamMessageRequest()
        req.arbitration.device_id = self.device_id
        self._election(req.arbitration)
        self._requests.put(req)
        try:
            resp = next(self._responses)
        except grpc.RpcError as e:
            raise LanesError(f"{self.name}: P4Runtime arbitration failed: {e.details()}") from None
        if not resp.HasField("arbitration") or resp.arbitration.status.code != 0:
            raise LanesError(f"{self.name}: not the primary P4Runtime client: {resp}")

    def _drain(self) -> None:
        try:
            for _ in self._responses:
                pass
        except grpc.RpcError:
            pass

    def _set_pipeline(self, program: Path) -> None:
        req = p4r.SetForwardingPipelineConfigRequest(device_id=self.device_id)
        self._election(req)
        req.action = enum_value(p4r.SetForwardingPipelineConfigRequest, "Action", "VERIFY_AND_COMMIT")
        req.config.p4info.CopyFrom(self.info)
        req.config.p4_device_config = program.read_bytes()
        rpc = self.ch.unary_unary(
            SERVICE + "SetForwardingPipelineConfig", request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=p4r.SetForwardingPipelineConfigResponse.FromString,
        )  # fmt: skip
        try:
            rpc(req, timeout=30)
        except grpc.RpcError as e:
            raise LanesError(f"{self.name}: SetForwardingPipelineConfig: {e.details()}") from None

    def _table(self, alias: str) -> Any:
        for t in self.info.tables:
            if t.preamble.alias == alias or t.preamble.name.endswith("." + alias):
                return t
        raise LanesError(f"{self.name}: the program has no table {alias}")

    def _action(self, alias: str) -> Any:
        for a in self.info.actions:
            if a.preamble.alias == alias or a.preamble.name.endswith("." + alias):
                return a
        raise LanesError(f"{self.name}: the program has no action {alias}")

    def _write(self, kind: str, table: str, prefix: str, action: str, values: list[int]) -> None:
        net = ipaddress.ip_network(prefix)
        self._update(kind, table, [("lpm", int(net.network_address), net.prefixlen)], action, values)

    def write_exact(self, kind: str, table: str, keys: list[int], action: str, values: list[int]) -> None:
        """INSERT or MODIFY an entry of an all-exact table: one Write of one Update."""
        self._update(kind, table, [("exact", k, 0) for k in keys], action, values)

    def _update(self, kind: str, table: str, keys: list[tuple[str, int, int]], action: str,
                values: list[int]) -> None:  # fmt: skip
        t, a = self._table(table), self._action(action)
        req = p4r.WriteRequest(device_id=self.device_id)
        self._election(req)
        u = req.updates.add()
        u.type = enum_value(p4r.Update, "Type", kind)
        e = u.entity.table_entry
        e.table_id = t.preamble.id
        for mf, (how, value, plen) in zip(t.match_fields, keys, strict=True):
            m = e.match.add()
            m.field_id = mf.id
            if how == "lpm":
                m.lpm.value = canonical(value)
                m.lpm.prefix_len = plen
            else:
                m.exact.value = canonical(value)
        e.action.action.action_id = a.preamble.id
        for p, v in zip(a.params, values, strict=True):
            e.action.action.params.add(param_id=p.id, value=canonical(v))
        try:
            self._write_rpc(req, timeout=10)
        except grpc.RpcError as err:
            raise LanesError(f"{self.name}: Write {kind} {table} {keys}: {err.details()}") from None

    def read_counters(self, cells: list[tuple[str, int]]) -> dict[tuple[str, int], tuple[int, int]]:
        """(packets, bytes) of indexed counter cells, by (counter alias, index), in one Read."""
        return self._read_cells("counter", cells, lambda c: (c.data.packet_count, c.data.byte_count))

    def read_registers(self, cells: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """Values of register cells, by (register alias, index), in one Read."""
        return self._read_cells("register", cells, lambda r: int.from_bytes(r.data.bitstring or b"\0", "big"))

    def _read_cells(self, kind: str, cells: list[tuple[str, int]], value: Any) -> dict:
        """One Read of indexed counter or register cells: (alias, index) -> value(entry)."""
        specs = self.info.counters if kind == "counter" else self.info.registers
        ids = self._ids(specs)
        names = {c.preamble.id: c.preamble.alias for c in specs}
        req = p4r.ReadRequest(device_id=self.device_id)
        for name, index in cells:
            if name not in ids:
                raise LanesError(f"{self.name}: the program has no {kind} {name}")
            e = getattr(req.entities.add(), f"{kind}_entry")
            setattr(e, f"{kind}_id", ids[name])
            e.index.index = index
        out = {}
        try:
            for resp in self._read_rpc(req, timeout=10):
                for ent in resp.entities:
                    e = getattr(ent, f"{kind}_entry")
                    out[(names[getattr(e, f"{kind}_id")], e.index.index)] = value(e)
        except grpc.RpcError as err:
            raise LanesError(f"{self.name}: Read {kind}s: {err.details()}") from None
        return out

    def _ids(self, entities: Any) -> dict[str, int]:
        ids = {}
        for e in entities:
            ids[e.preamble.alias] = e.preamble.id
            ids[e.preamble.name] = e.preamble.id
        return ids

    def write_register(self, name: str, index: int, value: int) -> None:
        """Set one register cell (a MODIFY, as P4Runtime has registers)."""
        ids = self._ids(self.info.registers)
        if name not in ids:
            raise LanesError(f"{self.name}: the program has no register {name}")
        req = p4r.WriteRequest(device_id=self.device_id)
        self._election(req)
        u = req.updates.add()
        u.type = enum_value(p4r.Update, "Type", "MODIFY")
        e = u.entity.register_entry
        e.register_id = ids[name]
        e.index.index = index
        e.data.bitstring = canonical(value)
        self._send(req, f"register {name}[{index}]")

    def add_clone_session(self, session: int, port: int) -> None:
        """A clone (mirror) session: copies cloned to `session` leave on `port`."""
        req = p4r.WriteRequest(device_id=self.device_id)
        self._election(req)
        u = req.updates.add()
        u.type = enum_value(p4r.Update, "Type", "INSERT")
        c = u.entity.packet_replication_engine_entry.clone_session_entry
        c.session_id = session
        c.replicas.add(egress_port=port, instance=1)
        self._send(req, f"clone session {session}")

    def _send(self, req: Any, what: str) -> None:
        try:
            self._write_rpc(req, timeout=10)
        except grpc.RpcError as err:
            raise LanesError(f"{self.name}: Write {what}: {err.details()}") from None

    def add_route(self, r: Route) -> None:
        self._write("INSERT", "ipv4_lpm", r.prefix, "ipv4_forward", [int(r.mac.replace(":", ""), 16), r.port])

    def add_class(self, prefix: str, prio: int, rate: int, quantum: int, burst: int = 0) -> None:
        self._write("INSERT", "src_ip_prio", prefix, *class_action(prio, rate, quantum, burst))

    def modify_class(self, prefix: str, prio: int, rate: int, quantum: int, burst: int = 0) -> None:
        self._write("MODIFY", "src_ip_prio", prefix, *class_action(prio, rate, quantum, burst))

    def close(self) -> None:
        self._requests.put(None)
        self.ch.close()

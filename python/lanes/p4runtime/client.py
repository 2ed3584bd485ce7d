"""A small P4Runtime client (gRPC + the official protos): arbitration, pipeline push, writes
and reads. Used by `lanes load-runtime`, the lab's controller (lanes.lab.p4rt), the write
benchmark and the tests; lanes.p4runtime.named builds its entities by name."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import grpc

from lanes.p4runtime.proto import p4r

SERVICE = "/p4.v1.P4Runtime/"


class Client:
    def __init__(self, addr: str, device_id: int = 0, election_id: int = 1, role: str = "") -> None:
        self.addr = addr
        self.device_id = device_id
        self.election_id = election_id
        self.role = role
        # a refused batch of thousands of updates carries one error each in its trailing metadata,
        # past gRPC's default 8 KiB (the call would end RESOURCE_EXHAUSTED with no detail)
        options = [("grpc.max_receive_message_length", 256 << 20), ("grpc.max_metadata_size", 64 << 20)]
        self.channel = grpc.insecure_channel(addr, options=options)
        ch = self.channel

        def uu(name: str, req: Any, resp: Any) -> Any:
            return ch.unary_unary(SERVICE + name, req.SerializeToString, resp.FromString)

        self._write = uu("Write", p4r.WriteRequest, p4r.WriteResponse)
        self._set = uu(
            "SetForwardingPipelineConfig",
            p4r.SetForwardingPipelineConfigRequest,
            p4r.SetForwardingPipelineConfigResponse,
        )
        self._get = uu(
            "GetForwardingPipelineConfig",
            p4r.GetForwardingPipelineConfigRequest,
            p4r.GetForwardingPipelineConfigResponse,
        )
        self._caps = uu("Capabilities", p4r.CapabilitiesRequest, p4r.CapabilitiesResponse)
        self._read = ch.unary_stream(
            SERVICE + "Read", p4r.ReadRequest.SerializeToString, p4r.ReadResponse.FromString
        )
        self._stream_call = ch.stream_stream(
            SERVICE + "StreamChannel",
            p4r.StreamMessageRequest.SerializeToString,
            p4r.StreamMessageResponse.FromString,
        )
        self._out: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.incoming: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._stream: Any = None
        self._reader: threading.Thread | None = None

    def wait_ready(self, timeout: float = 15.0) -> None:
        """Wait until the server accepts the connection; ConnectionError naming it otherwise."""
        try:
            grpc.channel_ready_future(self.channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            raise ConnectionError(f"no P4Runtime server on {self.addr}") from None

    # ---- stream ----

    def _requests(self) -> Iterator[Any]:
        while True:
            m = self._out.get()
            if m is None:
                return
            yield m

    def open_stream(self) -> None:
        self._stream = self._stream_call(self._requests())

        def read() -> None:
            try:
                for m in self._stream:
                    self.incoming.put(m)
            except grpc.RpcError as e:
                self.incoming.put(e)
            self.incoming.put(None)

        self._reader = threading.Thread(target=read, name="p4rt-client-stream", daemon=True)
        self._reader.start()

    def arbitrate(self, election_id: int | None = None, timeout: float = 10.0) -> Any:
        """Send a MasterArbitrationUpdate; returns the server's answer (its status says primary)."""
        if self._stream is None:
            self.open_stream()
        if election_id is not None:
            self.election_id = election_id
        m = p4r.StreamMessageRequest()
        a = m.arbitration
        a.device_id = self.device_id
        if self.role:
            a.role.name = self.role
        a.election_id.high = self.election_id >> 64
        a.election_id.low = self.election_id & ((1 << 64) - 1)
        self._out.put(m)
        return self.next_message("arbitration", timeout)

    def become_primary(self, timeout: float = 10.0) -> None:
        """Arbitrate with this client's election id; PermissionError unless it is now primary."""
        a = self.arbitrate(timeout=timeout)
        if a.status.code != 0:
            raise PermissionError(f"not the primary P4Runtime client of {self.addr}: {a.status.message}")

    def next_message(self, kind: str, timeout: float = 10.0) -> Any:
        """The next stream message of this kind ('arbitration', 'packet', 'digest', 'error')."""
        while True:
            m = self.incoming.get(timeout=timeout)
            if m is None or isinstance(m, grpc.RpcError):
                raise ConnectionError(f"stream closed: {m}")
            if m.WhichOneof("update") == kind:
                return getattr(m, kind)

    def packet_out(self, payload: bytes, metadata: dict[int, bytes] | None = None) -> None:
        m = p4r.StreamMessageRequest()
        m.packet.payload = payload
        for k, v in (metadata or {}).items():
            m.packet.metadata.add(metadata_id=k, value=v)
        self._out.put(m)

    def digest_ack(self, digest_id: int, list_id: int) -> None:
        m = p4r.StreamMessageRequest()
        m.digest_ack.digest_id = digest_id
        m.digest_ack.list_id = list_id
        self._out.put(m)

    def close(self) -> None:
        self._out.put(None)
        if self._stream is not None:
            self._stream.cancel()
        self.channel.close()

    # ---- unary RPCs ----

    def _election(self, msg: Any) -> None:
        msg.election_id.high = self.election_id >> 64
        msg.election_id.low = self.election_id & ((1 << 64) - 1)
        if self.role:
            msg.role = self.role

    def capabilities(self) -> Any:
        return self._caps(p4r.CapabilitiesRequest(device_id=self.device_id))

    def set_pipeline(
        self, p4info: Any, device_config: bytes, action: int | None = None, cookie: int = 0
    ) -> None:
        req = p4r.SetForwardingPipelineConfigRequest(device_id=self.device_id)
        self._election(req)
        req.action = p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT if action is None else action
        if p4info is not None:
            req.config.p4info.CopyFrom(p4info)
        req.config.p4_device_config = device_config
        req.config.cookie.cookie = cookie
        self._set(req)

    def get_pipeline(self, response_type: int = 0) -> Any:
        return self._get(
            p4r.GetForwardingPipelineConfigRequest(device_id=self.device_id, response_type=response_type)
        )

    def write(self, updates: Iterable[Any]) -> None:
        req = p4r.WriteRequest(device_id=self.device_id)
        self._election(req)
        req.updates.extend(updates)
        self._write(req)

    def write_request(self, req: Any) -> None:
        self._write(req)

    def read(self, entities: Iterable[Any]) -> list[Any]:
        req = p4r.ReadRequest(device_id=self.device_id)
        req.entities.extend(entities)
        return [e for r in self._read(req) for e in r.entities]


def update(kind: int, **entity: Any) -> Any:
    """p4r.Update of type kind (p4r.Update.INSERT ...) with one entity field set."""
    u = p4r.Update(type=kind)
    for k, v in entity.items():
        getattr(u.entity, k).CopyFrom(v)
    return u


def write_errors(e: grpc.RpcError) -> list[tuple[int, str]]:
    """(canonical_code, message) per update from a failed Write's status details."""
    from lanes.p4runtime.proto import rpc

    for k, v in e.trailing_metadata() or ():
        if k == "grpc-status-details-bin":
            st = rpc.Status.FromString(v)
            out = []
            for d in st.details:
                err = p4r.Error()
                d.Unpack(err)
                out.append((err.canonical_code, err.message))
            return out
    return []

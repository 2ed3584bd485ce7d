"""The P4Runtime gRPC service of one switch: pipeline config, Write/Read, StreamChannel
(arbitration, PacketIn/PacketOut), Capabilities. Started by `lanes switch` (start_server)."""

from __future__ import annotations

import queue
import socket
import sys
import threading
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from lanes import _native
from lanes.errors import LanesError
from lanes.p4runtime import idle
from lanes.p4runtime import pipeline as pipeline_mod
from lanes.p4runtime.arbitration import Arbitrator, Client, role_key
from lanes.p4runtime.digests import DigestEngine
from lanes.p4runtime.entities import Entities
from lanes.p4runtime.errors import (
    P4RTError,
    code_from_number,
    invalid,
    not_found,
    precondition,
    unimplemented,
)
from lanes.p4runtime.p4info_file import load_p4info
from lanes.p4runtime.packetio import packet_in, packet_out_frame
from lanes.p4runtime.pipeline import Pipeline
from lanes.p4runtime.proto import p4r, pb, rpc
from lanes.p4runtime.roles import pipeline_denial, receives, write_denial
from lanes.p4runtime.tls import TlsConfig, server_credentials

API_VERSION = "1.4.0"
SERVICE = "p4.v1.P4Runtime"
READ_CHUNK = 2000  # entities per ReadResponse

Action = p4r.SetForwardingPipelineConfigRequest
RespType = p4r.GetForwardingPipelineConfigRequest


class _Status(grpc.Status):  # type: ignore[misc]  # grpc has no type hints
    """A gRPC status with google.rpc.Status details in the trailing metadata."""

    def __init__(self, code: grpc.StatusCode, details: str, status: Any) -> None:
        self.code = code
        self.details = details
        self.trailing_metadata = (("grpc-status-details-bin", status.SerializeToString()),)


class P4RuntimeService:
    def __init__(self, sw: Any, device_id: int = 0, cpu_port: int | None = None) -> None:
        self.sw = sw
        self.device_id = device_id
        self.cpu_port = cpu_port
        self.arb = Arbitrator(device_id)
        self.lock = threading.RLock()
        self.pipeline: Pipeline | None = None
        self.saved: Pipeline | None = None
        self.entities: Entities | None = None
        self.stats = {
            "device_id": device_id,
            "write_requests": 0,
            "write_requests_ok": 0,
            "updates_accepted": 0,
            "updates_failed": 0,
            "pipeline_commits": 0,
            "packet_ins": 0,
            "packet_outs": 0,
            "idle_notifications": 0,
        }
        self.digests = DigestEngine(sw, self.arb.primaries)
        self._stop = threading.Event()

    # ---- helpers ----

    def _device(self, device_id: int) -> None:
        if device_id != self.device_id:
            raise not_found(f"no device {device_id} (this switch is device {self.device_id})")

    def _clear_pre(self) -> None:
        _native.p4rt_clone_sessions_clear(self.sw)
        _native.p4rt_multicast_clear(self.sw)

    def _commit(self, pl: Pipeline, reconcile: bool = False) -> None:
        try:
            if reconcile and self.pipeline is not None:
                _native.p4rt_reconcile(self.sw, pl.staged)
            else:
                _native.p4rt_commit(self.sw, pl.staged)
        except _native.P4rtError as e:
            code, msg = e.args[:2]
            raise P4RTError(code_from_number(code), msg) from None
        pl.staged = None
        self.pipeline = pl
        self.entities = Entities(self.sw, pl, self.digests)
        self.digests.set_pipeline(pl, keep=reconcile)
        self.stats["pipeline_commits"] += 1

    def adopt_running(self, p4info: Any, json_text: str) -> None:
        """Use the P4Info of the program the switch was started with (already running)."""
        with self.lock:
            pl = pipeline_mod.build_from(p4info, json_text, json_text.encode())
            pl.staged = None
            self.pipeline = pl
            self.entities = Entities(self.sw, pl, self.digests)
            self.digests.set_pipeline(pl)

    # ---- RPCs ----

    def Capabilities(self, request: Any, context: grpc.ServicerContext) -> Any:
        return p4r.CapabilitiesResponse(p4runtime_api_version=API_VERSION)

    def SetForwardingPipelineConfig(self, req: Any, context: grpc.ServicerContext) -> Any:
        try:
            self._device(req.device_id)
            role = role_key(req.role, req.role_id)
            self.arb.check_primary(
                role, req.election_id, req.HasField("election_id"), "SetForwardingPipelineConfig"
            )
            refusal = pipeline_denial(self.arb.policy(role))
            if refusal is not None:
                raise refusal
            with self.lock:
                a = req.action
                if a == Action.VERIFY:
                    pipeline_mod.build(req.config)
                elif a == Action.VERIFY_AND_SAVE:
                    self.saved = pipeline_mod.build(req.config)
                elif a == Action.VERIFY_AND_COMMIT:
                    self._commit(pipeline_mod.build(req.config))
                    self._clear_pre()  # a new pipeline starts with no groups or sessions
                elif a == Action.COMMIT:
                    if self.saved is None:
                        raise precondition("COMMIT: no saved config (send VERIFY_AND_SAVE first)")
                    saved, self.saved = self.saved, None
                    self._commit(saved)
                    self._clear_pre()
                elif a == Action.RECONCILE_AND_COMMIT:
                    self._commit(pipeline_mod.build(req.config), reconcile=True)
                else:
                    raise invalid("SetForwardingPipelineConfig: action must be set")
        except P4RTError as e:
            context.abort(e.code, e.message)
        return p4r.SetForwardingPipelineConfigResponse()

    def GetForwardingPipelineConfig(self, req: Any, context: grpc.ServicerContext) -> Any:
        try:
            self._device(req.device_id)
            pl = self.pipeline
            if pl is None:
                raise precondition("no forwarding pipeline config has been committed")
            resp = p4r.GetForwardingPipelineConfigResponse()
            cfg = resp.config
            cfg.cookie.cookie = pl.cookie
            t = req.response_type
            if t in (RespType.ALL, RespType.P4INFO_AND_COOKIE):
                cfg.p4info.CopyFrom(pl.p4info)
            if t in (RespType.ALL, RespType.DEVICE_CONFIG_AND_COOKIE):
                cfg.p4_device_config = pl.device_config
            if t not in (
                RespType.ALL,
                RespType.P4INFO_AND_COOKIE,
                RespType.DEVICE_CONFIG_AND_COOKIE,
                RespType.COOKIE_ONLY,
            ):
                raise invalid(f"unknown response_type {t}")
        except P4RTError as e:
            context.abort(e.code, e.message)
        return resp

    def Write(self, req: Any, context: grpc.ServicerContext) -> Any:
        try:
            self._device(req.device_id)
            role = role_key(req.role, req.role_id)
            self.arb.check_primary(role, req.election_id, req.HasField("election_id"), "Write")
            if req.atomicity != p4r.WriteRequest.CONTINUE_ON_ERROR:
                raise unimplemented("only CONTINUE_ON_ERROR atomicity is supported")
            with self.lock:
                if self.entities is None:
                    raise precondition("no forwarding pipeline config has been committed")
                results = self._write_in_role(role, req.updates)
                ok = sum(1 for c, _ in results if c == grpc.StatusCode.OK)
                self.stats["write_requests"] += 1
                self.stats["updates_accepted"] += ok
                self.stats["updates_failed"] += len(results) - ok
                if ok == len(results):
                    self.stats["write_requests_ok"] += 1
        except P4RTError as e:
            context.abort(e.code, e.message)
        if ok != len(results):
            self._abort_write(context, results)
        return p4r.WriteResponse()

    def _write_in_role(self, role: str, updates: Any) -> list[tuple[grpc.StatusCode, str]]:
        """Apply the updates the role may make (its config, others' exclusive entities);
        PERMISSION_DENIED for the others, in order."""
        entities = self.entities
        assert entities is not None, "Write checks for a pipeline first"
        policy, held = self.arb.policy(role), self.arb.held_elsewhere(role)
        if policy is None and not held:
            return entities.write(updates)
        why = [write_denial(policy, held, u.entity) for u in updates]
        allowed = iter(entities.write([u for u, w in zip(updates, why, strict=True) if w is None]))
        return [(grpc.StatusCode.PERMISSION_DENIED, w) if w else next(allowed) for w in why]

    def _abort_write(self, context: grpc.ServicerContext, results: list[tuple[grpc.StatusCode, str]]) -> None:
        failed = [(c, m) for c, m in results if c != grpc.StatusCode.OK]
        # as the spec says (and PI, p4runtime-shell expect): UNKNOWN, one p4.v1.Error per update
        status = rpc.Status()
        code = grpc.StatusCode.UNKNOWN
        msg = f"{len(failed)} of {len(results)} update(s) failed: {failed[0][0].name}: {failed[0][1]}"
        status.code = code.value[0]
        status.message = msg
        for c, m in results:
            any_msg = pb.Any()
            any_msg.Pack(p4r.Error(canonical_code=c.value[0], message=m, space="lanes"))
            status.details.append(any_msg)
        context.abort_with_status(_Status(code, msg, status))

    def Read(self, req: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        try:
            self._device(req.device_id)
            with self.lock:
                if self.entities is None:
                    raise precondition("no forwarding pipeline config has been committed")
                out = [x for e in req.entities for x in self.entities.read(e)]
        except P4RTError as e:
            context.abort(e.code, e.message)
        if not out:
            yield p4r.ReadResponse()
        for i in range(0, len(out), READ_CHUNK):
            yield p4r.ReadResponse(entities=out[i : i + READ_CHUNK])

    def StreamChannel(self, requests: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
        q: queue.SimpleQueue[Any] = queue.SimpleQueue()
        client = Client(send=q.put)
        context.add_callback(lambda: q.put(None))

        def reader() -> None:
            try:
                for req in requests:
                    if req is MALFORMED:
                        raise invalid("malformed stream message: not a valid protobuf message")
                    which = req.WhichOneof("update")
                    if which == "arbitration":
                        self.arb.update(client, req.arbitration)
                    elif which == "packet":
                        self._packet_out(client, req.packet)
                    elif which == "digest_ack":
                        self.digests.ack(req.digest_ack)
                    else:
                        q.put(
                            _stream_error(
                                grpc.StatusCode.UNIMPLEMENTED, f"stream message {which} not supported"
                            )
                        )
            except P4RTError as e:
                q.put(e)
            except grpc.RpcError:
                pass  # the client went away mid-read
            q.put(None)

        threading.Thread(target=reader, name="p4rt-stream", daemon=True).start()
        try:
            while True:
                item = q.get()
                if item is None:
                    break
                if isinstance(item, P4RTError):
                    context.abort(item.code, item.message)
                yield item
        finally:
            self.arb.remove(client)

    def _packet_out(self, client: Client, po: Any) -> None:
        if not self.arb.is_primary(client):
            client.send(
                _stream_error(grpc.StatusCode.PERMISSION_DENIED, "PacketOut from a backup client", po)
            )
            return
        pl = self.pipeline
        try:
            if pl is None:
                raise precondition("no forwarding pipeline config has been committed")
            frame = packet_out_frame(pl.packet_out, po)
            self.sw.inject(frame)
            self.stats["packet_outs"] += 1
        except P4RTError as e:
            client.send(_stream_error(e.code, e.message, po))
        except ValueError as e:
            client.send(_stream_error(grpc.StatusCode.FAILED_PRECONDITION, str(e), po))

    def packet_in_loop(self) -> None:
        """Deliver frames the program sends to the CPU port to the primary clients."""
        while not self._stop.is_set():
            # blocks in the switch (GIL released) until a frame arrives; the timeout bounds how
            # long a stop takes to be noticed
            frames = self.sw.wait_packet_ins(50)
            if not frames and not self.sw.is_running():
                self._stop.wait(0.05)  # a stopped switch returns at once: do not spin
            if frames:
                pl = self.pipeline
                targets = self.arb.primaries()
                for f in frames:
                    if not targets:
                        break
                    msg = packet_in(pl.packet_in if pl else None, bytes(f))
                    for c in targets:
                        if receives(c.policy, msg):
                            c.send(msg)
                    self.stats["packet_ins"] += 1

    def command(self, line: str) -> str | None:
        """`lanes ctl` commands of the P4Runtime server; None if `line` is not one of them."""
        import json

        if line.strip() == "p4runtime_stats":
            return json.dumps(self.stats | self.digests.stats)
        return None

    HELP = " | p4runtime_stats (P4Runtime write counts, JSON)"


MALFORMED = object()  # a request whose bytes are not the message they should be


def _parser(cls: Any) -> Any:
    def parse(data: bytes) -> Any:
        try:
            return cls.FromString(data)
        except DecodeError:
            return MALFORMED

    return parse


def _checked(fn: Any) -> Any:
    """INVALID_ARGUMENT for requests that did not parse (gRPC itself would say INTERNAL)."""

    def handler(req: Any, context: grpc.ServicerContext) -> Any:
        if req is MALFORMED:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "malformed request: not a valid protobuf message")
        return fn(req, context)

    return handler


def _stream_error(code: grpc.StatusCode, msg: str, po: Any = None) -> Any:
    m = p4r.StreamMessageResponse()
    m.error.canonical_code = code.value[0]
    m.error.message = msg
    if po is not None:
        m.error.packet_out.packet_out.CopyFrom(po)
    return m


class P4RuntimeServer:
    """The running gRPC server; stop() shuts it down."""

    def __init__(self, service: P4RuntimeService, server: grpc.Server, port: int) -> None:
        self.service = service
        self.server = server
        self.port = port
        self._thread: threading.Thread | None = None

    def stop(self, grace: float | None = 0) -> None:
        self.service._stop.set()
        self.server.stop(grace).wait(5)
        if self._thread is not None:
            self._thread.join(2)

    def wrap_command(self, run: Any) -> Any:
        """A `lanes ctl` command runner (line -> (output, handle)) that also knows the P4Runtime
        server's commands."""

        def command(line: str) -> tuple[str, int | None]:
            out = self.service.command(line)
            if out is not None:
                return out, None
            text, handle = run(line)
            return (text + self.service.HELP if line.strip() == "help" else text), handle

        return command


def serve(
    sw: Any, addr: str, device_id: int = 0, cpu_port: int | None = None, tls: TlsConfig | None = None
) -> P4RuntimeServer:
    service = P4RuntimeService(sw, device_id, cpu_port)

    def unary(fn: Any, req: Any, resp: Any) -> Any:
        return grpc.unary_unary_rpc_method_handler(
            _checked(fn), request_deserializer=_parser(req), response_serializer=resp.SerializeToString
        )

    handlers = {
        "Capabilities": unary(service.Capabilities, p4r.CapabilitiesRequest, p4r.CapabilitiesResponse),
        "SetForwardingPipelineConfig": unary(
            service.SetForwardingPipelineConfig,
            p4r.SetForwardingPipelineConfigRequest,
            p4r.SetForwardingPipelineConfigResponse,
        ),
        "GetForwardingPipelineConfig": unary(
            service.GetForwardingPipelineConfig,
            p4r.GetForwardingPipelineConfigRequest,
            p4r.GetForwardingPipelineConfigResponse,
        ),
        "Write": unary(service.Write, p4r.WriteRequest, p4r.WriteResponse),
        "Read": grpc.unary_stream_rpc_method_handler(
            _checked(service.Read),
            request_deserializer=_parser(p4r.ReadRequest),
            response_serializer=p4r.ReadResponse.SerializeToString,
        ),
        "StreamChannel": grpc.stream_stream_rpc_method_handler(
            service.StreamChannel,
            request_deserializer=_parser(p4r.StreamMessageRequest),
            response_serializer=p4r.StreamMessageResponse.SerializeToString,
        ),
    }
    _check_addr(addr)
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=32, thread_name_prefix="p4rt"),
        options=[
            ("grpc.max_receive_message_length", 256 << 20),
            ("grpc.max_send_message_length", 256 << 20),
            ("grpc.so_reuseport", 0),  # a second switch on the same port must fail, not share it
        ],
    )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    try:
        port = (
            server.add_secure_port(addr, server_credentials(tls)) if tls else server.add_insecure_port(addr)
        )
    except RuntimeError as e:
        raise LanesError(f"P4Runtime: cannot listen on {addr}: {e}") from None
    if not port:
        raise LanesError(f"P4Runtime: cannot listen on {addr}")
    server.start()
    srv = P4RuntimeServer(service, server, port)
    if cpu_port is not None:
        srv._thread = threading.Thread(target=service.packet_in_loop, name="p4rt-packet-in", daemon=True)
        srv._thread.start()
    threading.Thread(
        target=service.digests.loop, args=(service._stop,), name="p4rt-digests", daemon=True
    ).start()
    threading.Thread(target=idle.loop, args=(service, service._stop), name="p4rt-idle", daemon=True).start()
    return srv


def _check_addr(addr: str) -> None:
    """HOST:PORT that we can listen on; a one-line LanesError otherwise (before gRPC logs)."""
    host, sep, port = addr.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise LanesError(f"P4Runtime: '{addr}' is not HOST:PORT")
    host = host.strip("[]")
    try:
        infos = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise LanesError(f"P4Runtime: cannot resolve '{host}': {e.strerror}") from None
    family, _, _, _, sockaddr = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(sockaddr)
        except OSError as e:
            raise LanesError(f"P4Runtime: cannot listen on {addr}: {e.strerror}") from None


def _sidecar_p4info(json_path: Path) -> Path | None:
    """p4/x.json -> p4/x.p4info.txtpb (or .p4info.txt) if present."""
    for suffix in (".p4info.txtpb", ".p4info.txt"):
        p = json_path.with_name(json_path.name.removesuffix(".json") + suffix)
        if p.is_file():
            return p
    return None


def start_server(sw: Any, sa: Any) -> P4RuntimeServer:
    """Called by `lanes switch`: serve P4Runtime on sa.grpc_addr for device sa.device_id."""
    srv = serve(sw, sa.grpc_addr, sa.device_id, sa.cpu_port, getattr(sa, "grpc_tls", None))
    json_path = getattr(sa, "json", None)
    if json_path is not None:
        side = _sidecar_p4info(Path(json_path))
        if side is not None:
            try:
                srv.service.adopt_running(load_p4info(side), Path(json_path).read_text())
            except (P4RTError, LanesError) as e:
                msg = e.message if isinstance(e, P4RTError) else str(e)
                print(f"lanes switch: ignoring {side}: {msg}", file=sys.stderr)
    runtime = getattr(sa, "runtime_json", None)
    if runtime is not None:
        try:
            apply_runtime_json(srv.service, Path(runtime))
        except BaseException:
            srv.stop()
            raise
    return srv


def apply_runtime_json(service: P4RuntimeService, path: Path) -> None:
    """`lanes switch --runtime-json FILE`: the file's pipeline (if it names p4info and bmv2_json)
    and entries (multicast groups, clone sessions, table entries), applied in-process as the
    switch starts; any refused entry is an error."""
    from lanes.p4runtime import runtime_json

    resolved = runtime_json.resolve(path)
    rt, info, labelled = resolved.runtime, resolved.p4info, resolved.updates
    with service.lock:
        try:
            if rt.bmv2_json is not None:
                text = rt.bmv2_json.read_text()
                service._commit(pipeline_mod.build_from(info, text, text.encode()))
            elif service.pipeline is None:
                raise LanesError(f"{path}: no 'bmv2_json' and no program with a P4Info is running")
        except P4RTError as e:
            raise LanesError(f"{path}: pipeline refused: {e.message}") from None
        assert service.entities is not None
        results = service.entities.write([u for _, u in labelled])
    for (where, _), (code, msg) in zip(labelled, results, strict=True):
        if code != grpc.StatusCode.OK:
            raise LanesError(f"{path}: {where}: {code.name}: {msg}")

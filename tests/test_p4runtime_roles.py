"""P4Runtime roles with a role config (Stratum's stratum.P4RoleConfig in Role.config): three
clients on their own streams — the default role pushes the pipeline, role "acl" holds the acl
table exclusively, role "l2" shares l2_fwd — and each write outside a role's config, or into
another role's exclusive table, is refused with PERMISSION_DENIED while the rest of the batch is
applied. A role whose config does not allow it cannot push a pipeline. Only loopback."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import text_format
from lanes.p4runtime.proto import p4i, p4r, rpc
from lanes.p4runtime.roles import P4RoleConfig
from netns import REPO
from p4rt_util import loopback_switch

P4INFO, JSON = REPO / "p4" / "p4rt_test.p4info.txtpb", REPO / "p4" / "p4rt_test.json"
L2_FWD, ACL, SET_PORT, DROP = 33554435, 33554436, 16777219, 16777218
DENIED, OK = grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.OK


class RoleClient:
    """A P4Runtime client on its own stream, primary of `role` (with `config`, if given)."""

    def __init__(self, addr: str, role: str, config: Any = None, election: int = 1) -> None:
        self.role, self.election = role, election
        self.channel = grpc.insecure_channel(addr)
        self.requests: queue.Queue = queue.Queue()
        stream = self.channel.stream_stream(
            "/p4.v1.P4Runtime/StreamChannel",
            request_serializer=p4r.StreamMessageRequest.SerializeToString,
            response_deserializer=p4r.StreamMessageResponse.FromString,
        )
        arb = p4r.StreamMessageRequest()
        arb.arbitration.device_id = 0
        arb.arbitration.election_id.low = election
        if role:
            arb.arbitration.role.name = role
            if config is not None:
                arb.arbitration.role.config.Pack(config)
        self.requests.put(arb)
        self.responses = stream(iter(self.requests.get, None))
        self.answer = next(self.responses).arbitration

    def close(self) -> None:
        self.requests.put(None)
        self.channel.close()

    def _call(self, method: str, req: Any, resp: Any) -> Any:
        call = self.channel.unary_unary(
            f"/p4.v1.P4Runtime/{method}", request_serializer=type(req).SerializeToString,
            response_deserializer=resp.FromString,
        )  # fmt: skip
        return call(req, timeout=30)

    def push_pipeline(self) -> None:
        req = p4r.SetForwardingPipelineConfigRequest(device_id=0, role=self.role, action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)  # fmt: skip
        req.election_id.low = self.election
        text_format.Parse(P4INFO.read_text(), req.config.p4info)
        req.config.p4_device_config = JSON.read_bytes()
        self._call("SetForwardingPipelineConfig", req, p4r.SetForwardingPipelineConfigResponse)

    def write(self, *entities: Any) -> list[grpc.StatusCode]:
        """INSERT each entity in one batch; the status of each update."""
        req = p4r.WriteRequest(device_id=0, role=self.role)
        req.election_id.low = self.election
        for e in entities:
            u = req.updates.add(type=p4r.Update.INSERT)
            u.entity.CopyFrom(e)
        try:
            self._call("Write", req, p4r.WriteResponse)
        except grpc.RpcError as err:
            details = dict(err.trailing_metadata() or ()).get("grpc-status-details-bin")
            assert details is not None, err
            status = rpc.Status.FromString(details)
            codes = []
            for d in status.details:
                e = p4r.Error()
                assert d.Unpack(e)
                codes.append(next(c for c in grpc.StatusCode if c.value[0] == e.canonical_code))
            return codes
        return [OK] * len(entities)


def l2_entry(mac: int, port: int) -> Any:
    e = p4r.Entity()
    t = e.table_entry
    t.table_id = L2_FWD
    m = t.match.add(field_id=1)
    m.exact.value = mac.to_bytes(6, "big")
    t.action.action.action_id = SET_PORT
    t.action.action.params.add(param_id=1, value=bytes([port]))
    return e


def acl_entry(ethertype: int, priority: int) -> Any:
    e = p4r.Entity()
    t = e.table_entry
    t.table_id, t.priority = ACL, priority
    m = t.match.add(field_id=1)
    m.ternary.value, m.ternary.mask = ethertype.to_bytes(2, "big"), b"\xff\xff"
    t.action.action.action_id = DROP
    return e


def role_config(exclusive: list[int] = (), shared: list[int] = (), can_push: bool = False) -> Any:
    return P4RoleConfig(
        exclusive_p4_ids=list(exclusive), shared_p4_ids=list(shared), can_push_pipeline=can_push
    )


@pytest.fixture
def switch() -> Iterator[str]:
    with loopback_switch() as (addr, _):
        yield addr


def test_roles_write_only_what_their_config_gives_them(switch: str) -> None:
    clients: list[RoleClient] = []
    try:
        default = RoleClient(switch, "")
        clients.append(default)
        default.push_pipeline()
        acl = RoleClient(switch, "acl", role_config(exclusive=[ACL]))
        l2 = RoleClient(switch, "l2", role_config(shared=[L2_FWD]))
        clients += [acl, l2]
        assert acl.answer.status.code == 0 and l2.answer.status.code == 0  # each the primary of its role
        # a batch: what the role has is applied, the rest refused, in order
        assert acl.write(acl_entry(0x88B7, 10), l2_entry(0x0102, 2)) == [OK, DENIED]
        assert l2.write(l2_entry(0x0102, 2), acl_entry(0x88B8, 20)) == [OK, DENIED]
        # the acl table is held exclusively by "acl": even the default role may not write it
        assert default.write(acl_entry(0x88B9, 30), l2_entry(0x0103, 1)) == [DENIED, OK]
        # nothing refused was written: one acl entry, two l2 entries
        read = p4r.ReadRequest(device_id=0)
        read.entities.add().table_entry.table_id = 0
        call = default.channel.unary_stream(
            "/p4.v1.P4Runtime/Read", request_serializer=p4r.ReadRequest.SerializeToString,
            response_deserializer=p4r.ReadResponse.FromString,
        )  # fmt: skip
        tables = [e.table_entry.table_id for r in call(read, timeout=30) for e in r.entities]
        assert sorted(tables) == sorted([ACL, L2_FWD, L2_FWD])
        # a role whose config does not allow it cannot push a pipeline
        with pytest.raises(grpc.RpcError) as e:
            acl.push_pipeline()
        assert e.value.code() == DENIED
    finally:
        for c in clients:
            c.close()


def test_a_role_config_lanes_cannot_read_is_refused(switch: str) -> None:
    bogus = p4i.P4Info()  # any message but a P4RoleConfig
    c = RoleClient.__new__(RoleClient)
    with pytest.raises(grpc.RpcError) as e:
        RoleClient.__init__(c, switch, "acl", bogus)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "stratum.P4RoleConfig" in (e.value.details() or "")
    c.close()

"""P4Runtime roles with a role config: which entities a role's primary may write.

The role config travels in the arbitration message (`Role.config`, a protobuf Any). P4Runtime
leaves its format to the target; lanes reads Stratum's `stratum.P4RoleConfig` (the format ONOS and
other controllers already send):

    exclusive_p4_ids = 1  entities only this role may write
    shared_p4_ids = 2     entities this role may write, as may others
    packet_in_filter = 3  (metadata_id = 1, value = 2): PacketIns whose metadata has that value
    receives_packet_ins = 4
    can_push_pipeline = 5

The default role, and a role whose primary sent no config, has the whole pipeline (as the spec
says), except entities another role holds exclusively. Reads are not restricted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from google.protobuf import descriptor_pb2, message_factory

from lanes.p4runtime.errors import P4RTError, denied, invalid
from lanes.p4runtime.proto import POOL

ROLE_CONFIG = "stratum.P4RoleConfig"


def _role_config_class() -> Any:
    f = descriptor_pb2.FileDescriptorProto(
        name="lanes/stratum_p4_role_config.proto", package="stratum", syntax="proto3"
    )
    m = f.message_type.add(name="P4RoleConfig")
    flt = m.nested_type.add(name="PacketFilter")
    T, L = descriptor_pb2.FieldDescriptorProto, descriptor_pb2.FieldDescriptorProto
    flt.field.add(name="metadata_id", number=1, type=T.TYPE_UINT32, label=L.LABEL_OPTIONAL)
    flt.field.add(name="value", number=2, type=T.TYPE_BYTES, label=L.LABEL_OPTIONAL)
    m.field.add(name="exclusive_p4_ids", number=1, type=T.TYPE_UINT32, label=L.LABEL_REPEATED)
    m.field.add(name="shared_p4_ids", number=2, type=T.TYPE_UINT32, label=L.LABEL_REPEATED)
    m.field.add(name="packet_in_filter", number=3, type=T.TYPE_MESSAGE, label=L.LABEL_OPTIONAL,
                type_name=".stratum.P4RoleConfig.PacketFilter")  # fmt: skip
    m.field.add(name="receives_packet_ins", number=4, type=T.TYPE_BOOL, label=L.LABEL_OPTIONAL)
    m.field.add(name="can_push_pipeline", number=5, type=T.TYPE_BOOL, label=L.LABEL_OPTIONAL)
    POOL.Add(f)
    return message_factory.GetMessageClass(POOL.FindMessageTypeByName(ROLE_CONFIG))


P4RoleConfig = _role_config_class()


@dataclass(frozen=True)
class RolePolicy:
    exclusive: frozenset[int]
    shared: frozenset[int]
    receives_packet_ins: bool
    can_push_pipeline: bool
    packet_in_filter: tuple[int, bytes] | None  # (metadata id, value)

    def may_write(self, entity_id: int) -> bool:
        return entity_id in self.exclusive or entity_id in self.shared


def policy_of(role_msg: Any) -> RolePolicy | None:
    """The policy an arbitration's Role carries; None for full access. INVALID_ARGUMENT for a
    config lanes cannot read."""
    if role_msg is None or not role_msg.HasField("config"):
        return None
    cfg = role_msg.config
    if cfg.type_url.rsplit("/", 1)[-1] != ROLE_CONFIG:
        raise invalid(f"role config of type '{cfg.type_url}' is not supported (send {ROLE_CONFIG})")
    rc = P4RoleConfig()
    if not cfg.Unpack(rc):
        raise invalid(f"role config: not a valid {ROLE_CONFIG}")
    flt = None
    if rc.HasField("packet_in_filter"):
        flt = (rc.packet_in_filter.metadata_id, bytes(rc.packet_in_filter.value))
    return RolePolicy(frozenset(rc.exclusive_p4_ids), frozenset(rc.shared_p4_ids), rc.receives_packet_ins,
                      rc.can_push_pipeline, flt)  # fmt: skip


def entity_id(entity: Any) -> int | None:
    """The P4Info id an entity belongs to (a table, counter, meter, register, action profile,
    value set or digest); None for the packet replication engine, which has none."""
    which = entity.WhichOneof("entity")
    if not which:
        return None
    e = getattr(entity, which)
    match which:
        case "table_entry":
            return e.table_id
        case "direct_counter_entry" | "direct_meter_entry":
            return e.table_entry.table_id
        case "counter_entry":
            return e.counter_id
        case "meter_entry":
            return e.meter_id
        case "register_entry":
            return e.register_id
        case "action_profile_member" | "action_profile_group":
            return e.action_profile_id
        case "value_set_entry":
            return e.value_set_id
        case "digest_entry":
            return e.digest_id
    return None


def write_denial(policy: RolePolicy | None, held_elsewhere: set[int], entity: Any) -> str | None:
    """Why this role may not write `entity`, or None if it may."""
    eid = entity_id(entity)
    if eid is None:
        if policy is not None:
            return "the packet replication engine belongs to roles without a role config"
        return None
    if eid in held_elsewhere:
        return f"entity {eid} is held exclusively by another role"
    if policy is not None and not policy.may_write(eid):
        return f"entity {eid} is not in this role's config"
    return None


def pipeline_denial(policy: RolePolicy | None) -> P4RTError | None:
    if policy is not None and not policy.can_push_pipeline:
        return denied("SetForwardingPipelineConfig: this role's config does not allow pushing a pipeline")
    return None


def receives(policy: RolePolicy | None, packet_in: Any) -> bool:
    """Whether a role's primary gets this PacketIn (its config may turn them off or filter them)."""
    if policy is None:
        return True
    if not policy.receives_packet_ins:
        return False
    if policy.packet_in_filter is None:
        return True
    mid, value = policy.packet_in_filter
    for md in packet_in.packet.metadata:
        if md.metadata_id == mid:
            return md.value.lstrip(b"\0") == value.lstrip(b"\0")
    return False

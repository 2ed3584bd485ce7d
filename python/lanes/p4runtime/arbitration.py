"""Client arbitration per (device, role): the primary is the connected client whose election id
equals the highest one seen for that role; the others are backups. A client whose election id
is below the highest is told NOT_FOUND while no primary exists (and may bid again with the
highest id, as finsy does), ALREADY_EXISTS while one does."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc

from lanes.p4runtime.errors import P4RTError, invalid, not_found
from lanes.p4runtime.proto import p4r
from lanes.p4runtime.roles import RolePolicy, policy_of

_ids = itertools.count(1)


@dataclass(eq=False)
class Client:
    send: Callable[[Any], None]  # queue a StreamMessageResponse on this client's stream
    id: int = field(default_factory=lambda: next(_ids))
    role: str | None = None  # None until the first arbitration update
    role_msg: Any = None
    policy: RolePolicy | None = None  # what its role config allows (None: everything)
    election_id: int | None = None


def role_key(name: str, legacy_id: int) -> str:
    """Roles are named (P4Runtime >= 1.4); older clients send a numeric id."""
    return name if name else (f"#{legacy_id}" if legacy_id else "")


def u128(x: Any) -> int:
    return (x.high << 64) | x.low


class Arbitrator:
    def __init__(self, device_id: int) -> None:
        self.device_id = device_id
        self.lock = threading.Lock()
        self.clients: list[Client] = []
        self.highest: dict[str, int] = {}

    def _primary(self, role: str) -> Client | None:
        top = self.highest.get(role)
        if top is None:
            return None
        return next((c for c in self.clients if c.role == role and c.election_id == top), None)

    def update(self, client: Client, m: Any) -> None:
        """Handle a MasterArbitrationUpdate from `client`; P4RTError ends its stream."""
        if m.device_id != self.device_id:
            if client in self.clients:  # a stream may not move to another device
                raise P4RTError(
                    grpc.StatusCode.FAILED_PRECONDITION, "the device id of a stream cannot change"
                )
            raise not_found(f"no device {m.device_id} (this switch is device {self.device_id})")
        role = role_key(m.role.name, m.role.id) if m.HasField("role") else ""
        policy = policy_of(m.role if m.HasField("role") else None)
        if policy is not None and role == "":
            raise invalid("the default role has the whole pipeline: a role config needs a role name")
        eid = u128(m.election_id) if m.HasField("election_id") else None
        with self.lock:
            if eid is not None and any(
                c is not client and c.role == role and c.election_id == eid for c in self.clients
            ):
                raise invalid(f"election id {eid} is used by another client of this role")
            old_role = client.role
            before = {r: self._primary(r) for r in {role, old_role} if r is not None}
            if client not in self.clients:
                self.clients.append(client)
            client.role, client.election_id = role, eid
            client.role_msg = m.role if m.HasField("role") else None
            client.policy = policy
            if eid is not None and eid > self.highest.get(role, -1):
                self.highest[role] = eid
            changed = [r for r, p in before.items() if self._primary(r) is not p]
            if role not in before:
                changed.append(role)
            for r in changed:
                self._notify_role(r)
            if role not in changed:
                client.send(self._message(client))

    def remove(self, client: Client) -> None:
        with self.lock:
            if client not in self.clients:
                return
            was_primary = client.role is not None and self._primary(client.role) is client
            self.clients.remove(client)
            if was_primary:
                self._notify_role(client.role)  # type: ignore[arg-type]

    def _notify_role(self, role: str) -> None:
        for c in self.clients:
            if c.role == role:
                c.send(self._message(c))

    def _message(self, c: Client) -> Any:
        primary = self._primary(c.role or "")
        msg = p4r.StreamMessageResponse()
        a = msg.arbitration
        a.device_id = self.device_id
        if c.role_msg is not None:
            a.role.CopyFrom(c.role_msg)
        top = self.highest.get(c.role or "")
        if top is not None:
            a.election_id.high = top >> 64
            a.election_id.low = top & ((1 << 64) - 1)
        if primary is c:
            a.status.code, a.status.message = grpc.StatusCode.OK.value[0], "primary"
        elif primary is not None:
            a.status.code = grpc.StatusCode.ALREADY_EXISTS.value[0]
            a.status.message = "backup: another client is primary"
        else:
            a.status.code = grpc.StatusCode.NOT_FOUND.value[0]
            a.status.message = "backup: there is no primary"
        return msg

    def is_primary(self, client: Client) -> bool:
        with self.lock:
            return client.role is not None and self._primary(client.role) is client

    def primaries(self) -> list[Client]:
        with self.lock:
            return [c for c in self.clients if c.role is not None and self._primary(c.role) is c]

    def policy(self, role: str) -> RolePolicy | None:
        """The role config of a role's primary (None: the whole pipeline)."""
        with self.lock:
            p = self._primary(role)
            return p.policy if p is not None else None

    def held_elsewhere(self, role: str) -> set[int]:
        """Entities the primaries of other roles hold exclusively."""
        with self.lock:
            held: set[int] = set()
            for c in self.clients:
                if c.role != role and c.policy is not None and self._primary(c.role or "") is c:
                    held |= c.policy.exclusive
            return held

    def has_clients(self) -> bool:
        return bool(self.clients)

    def check_primary(self, role: str, election: Any, has_election: bool, what: str) -> None:
        """PERMISSION_DENIED unless (role, election id) is the role's primary."""
        with self.lock:
            p = self._primary(role)
            if p is None:
                raise P4RTError(grpc.StatusCode.PERMISSION_DENIED, f"{what}: no primary client for this role")
            if not has_election or u128(election) != p.election_id:
                raise P4RTError(
                    grpc.StatusCode.PERMISSION_DENIED, f"{what}: only the primary client may do this"
                )

"""Action profile members and groups (P4Runtime's ActionProfileMember and ActionProfileGroup):
writes and reads, the member and group ids being the switch's own handles."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lanes import _native
from lanes.p4runtime.errors import invalid, not_found, unimplemented
from lanes.p4runtime.pipeline import Pipeline, ProfileSpec
from lanes.p4runtime.proto import p4r
from lanes.p4runtime.values import DELETE, INSERT, canonical, native_error

MEMBER_ADD, MEMBER_MODIFY, MEMBER_DELETE = 0, 1, 2
GROUP_CREATE, GROUP_DELETE, GROUP_SET = 0, 1, 2


class ProfileEntities:
    """Member and group writes and reads (mixed into Entities, which provides sw, pl and
    _action_params())."""

    sw: Any
    pl: Pipeline

    def _action_params(self, aspec: Any, a: Any) -> list[bytes]:
        raise NotImplementedError

    def profile(self, ident: int) -> ProfileSpec:
        p = self.pl.profiles.get(ident)
        if p is None:
            raise not_found(f"no action profile with id {ident}")
        return p

    def write_member(self, typ: int, m: Any) -> None:
        prof = self.profile(m.action_profile_id)
        try:
            if typ == DELETE:
                _native.ap_member_write(self.sw, prof.index, MEMBER_DELETE, m.member_id)
                return
            if not m.HasField("action"):
                raise invalid(f"member {m.member_id} of {prof.name}: no action given")
            aspec = self.pl.actions.get(m.action.action_id)
            if aspec is None:
                raise not_found(f"no action with id {m.action.action_id}")
            idx = prof.actions.get(m.action.action_id)
            if idx is None:
                raise invalid(f"action {aspec.name} is not an action of profile {prof.name}")
            params = self._action_params(aspec, m.action)
            op = MEMBER_ADD if typ == INSERT else MEMBER_MODIFY
            _native.ap_member_write(self.sw, prof.index, op, m.member_id, idx, params)
        except _native.P4rtError as x:
            raise native_error(x) from None

    def write_group(self, typ: int, g: Any) -> None:
        prof = self.profile(g.action_profile_id)
        if not prof.with_selector:
            raise invalid(f"action profile {prof.name} has no selector: it holds no groups")
        members = []
        for mm in g.members:
            if mm.watch or mm.WhichOneof("watch_kind"):
                raise unimplemented(f"group {g.group_id}: watch ports are not supported")
            if mm.weight < 0:
                raise invalid(f"group {g.group_id}: member {mm.member_id} has a negative weight")
            members.append((mm.member_id, mm.weight or 1))  # weight unset: 1
        if prof.max_group_size and g.max_size > prof.max_group_size:
            raise invalid(
                f"group {g.group_id}: max_size {g.max_size} over {prof.name}'s {prof.max_group_size}"
            )
        try:
            if typ == DELETE:
                _native.ap_group_write(self.sw, prof.index, GROUP_DELETE, g.group_id)
            elif typ == INSERT:
                _native.ap_group_write(self.sw, prof.index, GROUP_CREATE, g.group_id, members, g.max_size)
            else:
                _native.ap_group_write(self.sw, prof.index, GROUP_SET, g.group_id, members)
        except _native.P4rtError as x:
            raise native_error(x) from None

    def read_members(self, want: Any) -> Iterator[Any]:
        for prof in self._profiles(want.action_profile_id):
            for handle, action, params in _native.ap_members(self.sw, prof.index):
                if want.member_id and handle != want.member_id:
                    continue
                m = p4r.ActionProfileMember(action_profile_id=prof.id, member_id=handle)
                aid = prof.action_ids.get(action)
                if aid is not None:
                    m.action.action_id = aid
                    for pid, (pos, _) in sorted(self.pl.actions[aid].params.items()):
                        m.action.params.add(param_id=pid, value=canonical(int.from_bytes(params[pos], "big")))
                yield p4r.Entity(action_profile_member=m)

    def read_groups(self, want: Any) -> Iterator[Any]:
        for prof in self._profiles(want.action_profile_id):
            if not prof.with_selector:
                continue
            for handle, members, max_size in _native.ap_groups(self.sw, prof.index):
                if want.group_id and handle != want.group_id:
                    continue
                g = p4r.ActionProfileGroup(action_profile_id=prof.id, group_id=handle, max_size=max_size)
                for m, w in members:
                    g.members.add(member_id=m, weight=w)
                yield p4r.Entity(action_profile_group=g)

    def _profiles(self, ident: int) -> list[ProfileSpec]:
        return [self.profile(ident)] if ident else list(self.pl.profiles.values())

    def indirect_target(self, spec: Any, ta: Any) -> tuple[bool, int]:
        """The member or group a table entry of an indirect table names."""
        which = ta.WhichOneof("type")
        if which == "action_profile_member_id":
            return (False, ta.action_profile_member_id)
        if which == "action_profile_group_id":
            if not self.pl.profiles[spec.profile].with_selector:
                raise invalid(f"table {spec.name}: its action profile has no selector (no groups)")
            return (True, ta.action_profile_group_id)
        if which == "action_profile_action_set":
            raise unimplemented(f"table {spec.name}: one-shot action sets are not supported")
        raise invalid(f"table {spec.name} is indirect: an entry names a member or group")

    def target_out(self, te: Any, target: tuple[bool, int]) -> None:
        if target[0]:
            te.action.action_profile_group_id = target[1]
        else:
            te.action.action_profile_member_id = target[1]

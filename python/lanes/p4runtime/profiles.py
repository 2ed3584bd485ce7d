"""Action profile members and groups (P4Runtime's ActionProfileMember and ActionProfileGroup):
writes and reads, the member and group ids being the switch's own handles."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from lanes import _native
from lanes.p4runtime.errors import invalid, not_found, unimplemented
from lanes.p4runtime.pipeline import Pipeline, ProfileSpec
from lanes.p4runtime.proto import p4r
from lanes.p4runtime.values import DELETE, INSERT, canonical, native_error

MEMBER_ADD, MEMBER_MODIFY, MEMBER_DELETE = _native.OP_INSERT, _native.OP_MODIFY, _native.OP_DELETE
GROUP_CREATE, GROUP_DELETE, GROUP_SET = _native.GROUP_CREATE, _native.GROUP_DELETE, _native.GROUP_SET
# one-shot action sets become members and a group with ids from here up, hidden from reads
HIDDEN_BASE = 0xC000_0000


@dataclass
class Hidden:
    """The members and group made for one entry's one-shot action set."""

    profile: int  # the program's profile index
    target: tuple[bool, int]
    group: int | None
    members: list[int]
    action_set: Any  # the ActionProfileActionSet, returned by reads


class ProfileEntities:
    """Member and group writes and reads (mixed into Entities, which provides sw, pl and
    _action_params())."""

    sw: Any
    pl: Pipeline
    # entry key -> the hidden objects of its one-shot action set
    oneshots: dict[Any, Hidden]
    next_hidden: int

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
                if (want.member_id and handle != want.member_id) or handle >= HIDDEN_BASE:
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
                if (want.group_id and handle != want.group_id) or handle >= HIDDEN_BASE:
                    continue
                g = p4r.ActionProfileGroup(action_profile_id=prof.id, group_id=handle, max_size=max_size)
                for m, w in members:
                    g.members.add(member_id=m, weight=w)
                yield p4r.Entity(action_profile_group=g)

    def _profiles(self, ident: int) -> list[ProfileSpec]:
        return [self.profile(ident)] if ident else list(self.pl.profiles.values())

    def indirect_target(self, spec: Any, ta: Any) -> tuple[tuple[bool, int], Hidden | None]:
        """The member or group a table entry names (the switch refuses them in a direct table), and
        the hidden objects made for a one-shot action set."""
        which = ta.WhichOneof("type")
        if which == "action_profile_action_set":
            h = self._oneshot(spec, ta.action_profile_action_set)
            return h.target, h
        return self._named_target(spec, ta), None

    def _named_target(self, spec: Any, ta: Any) -> tuple[bool, int]:
        which = ta.WhichOneof("type")
        if which == "action_profile_member_id":
            return (False, ta.action_profile_member_id)
        if which == "action_profile_group_id":  # the switch refuses it without a selector
            return (True, ta.action_profile_group_id)
        # only a default entry gets here (table entries are sorted out before)
        raise invalid(f"table {spec.name}: the default entry names an action, a member or a group, not {which}")

    def _hidden_id(self) -> int:
        self.next_hidden += 1
        return HIDDEN_BASE + self.next_hidden

    def _oneshot(self, spec: Any, aset: Any) -> Hidden:
        """Members (and with a selector, a group) for a one-shot action set."""
        prof = self.pl.profiles[spec.profile]
        if not aset.action_profile_actions:
            raise invalid(f"table {spec.name}: an empty one-shot action set")
        h = Hidden(prof.index, (False, 0), None, [], p4r.ActionProfileActionSet())
        h.action_set.CopyFrom(aset)
        weights = []
        try:
            for pa in aset.action_profile_actions:
                if pa.watch or pa.WhichOneof("watch_kind"):
                    raise unimplemented(f"table {spec.name}: watch ports are not supported")
                aspec = self.pl.actions.get(pa.action.action_id)
                if aspec is None:
                    raise not_found(f"no action with id {pa.action.action_id}")
                idx = prof.actions.get(pa.action.action_id)
                if idx is None:
                    raise invalid(f"action {aspec.name} is not an action of profile {prof.name}")
                if pa.weight < 0:
                    raise invalid(f"table {spec.name}: a negative weight")
                mid = self._hidden_id()
                _native.ap_member_write(
                    self.sw, prof.index, MEMBER_ADD, mid, idx, self._action_params(aspec, pa.action)
                )
                h.members.append(mid)
                weights.append(pa.weight or 1)
            if prof.with_selector:
                h.group = self._hidden_id()
                members = list(zip(h.members, weights, strict=True))
                _native.ap_group_write(self.sw, prof.index, GROUP_CREATE, h.group, members)
                h.target = (True, h.group)
            elif len(h.members) == 1:
                h.target = (False, h.members[0])
            else:
                raise invalid(
                    f"table {spec.name}: its profile has no selector, a one-shot set holds one action"
                )
        except _native.P4rtError as x:
            self.drop_hidden(h)
            raise native_error(x) from None
        except Exception:
            self.drop_hidden(h)
            raise
        return h

    def drop_hidden(self, h: Hidden | None) -> None:
        """Deletes what a one-shot action set made (its entry no longer names it)."""
        if h is None:
            return
        if h.group is not None:
            _native.ap_group_write(self.sw, h.profile, GROUP_DELETE, h.group)
        for m in h.members:
            _native.ap_member_write(self.sw, h.profile, MEMBER_DELETE, m)

    def target_out(self, te: Any, target: tuple[bool, int]) -> None:
        if target[1] >= HIDDEN_BASE:
            h = next((h for h in self.oneshots.values() if h.target == target), None)
            if h is not None:
                te.action.action_profile_action_set.CopyFrom(h.action_set)
                return
        if target[0]:
            te.action.action_profile_group_id = target[1]
        else:
            te.action.action_profile_member_id = target[1]

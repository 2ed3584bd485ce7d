"""bmv2's Standard service, action profiles and selectors: members, groups, and the entries of
indirect tables that name them (simple_switch_CLI's `act_prof_*` and `table_indirect_*`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar, TypeVarTuple

from bm_runtime.standard.ttypes import BmAddEntryOptions, BmMatchParam, BmMtActProfGroup, BmMtActProfMember

from lanes import _native
from lanes._native import Switch
from lanes.switch.thrift.context import native_code, thrift_code
from lanes.switch.thrift.program import ProfileView, ProgramView, TableView
from lanes.switch.thrift.tables import E, TablesMixin, _handle, table_error

if TYPE_CHECKING:
    from lanes._native import _Target as Target

OP_ADD, OP_MODIFY, OP_DELETE = _native.OP_INSERT, _native.OP_MODIFY, _native.OP_DELETE
GRP_CREATE, GRP_DELETE = _native.GROUP_CREATE, _native.GROUP_DELETE
GRP_ADD_MEMBER, GRP_REMOVE_MEMBER = _native.GROUP_ADD_MEMBER, _native.GROUP_REMOVE_MEMBER
R = TypeVar("R")
Args = TypeVarTuple("Args")


class ProfilesMixin(TablesMixin):
    """Over the tables' mixin: indirect entries are table entries."""

    def _profile(self, call: str, name: str) -> tuple[ProgramView, ProfileView]:
        v = self._view(call)
        p = v.profile(name)
        if p is None:
            raise table_error(call, E.INVALID_ACTION_PROFILE_NAME, f"no action profile named '{name}'")
        return v, p

    def _selector(self, call: str, p: ProfileView) -> None:
        if not p.with_selector:
            raise table_error(call, E.NO_ACTION_PROFILE_SELECTION, f"action profile {p.name} has no selector")

    def _indirect(self, call: str, name: str, groups: bool) -> tuple[ProgramView, TableView, ProfileView]:
        v, t = self._table(call, name)
        if t.profile is None:
            raise table_error(call, E.WRONG_TABLE_TYPE, f"{t.name} is not an indirect table")
        p = v.profiles[t.profile]
        if groups:
            self._selector(call, p)
        return v, t, p

    def _member_action(self, call: str, v: ProgramView, p: ProfileView, name: str, data: list[bytes]) -> int:
        a = p.actions.get(name)
        if a is None:
            raise table_error(call, E.INVALID_ACTION_NAME, f"action profile {p.name} has no action '{name}'")
        widths = v.action_widths.get(name, [])
        if len(data) != len(widths) or any(
            int.from_bytes(d, "big") >> w for d, w in zip(data, widths, strict=False)
        ):
            raise table_error(
                call, E.BAD_ACTION_DATA, f"action {name} takes {len(widths)} parameter(s) of {widths} bits"
            )
        return a

    def _ap(self, call: str, fn: Callable[[Switch, *Args], R], *args: *Args) -> R:
        """Call the switch; its error as bmv2's code (the switch says which)."""
        try:
            return fn(self.ctx.sw, *args)
        except _native.P4rtError as e:
            raise table_error(call, thrift_code(e), native_code(e)[1]) from None

    # ---- members ----

    def bm_mt_act_prof_add_member(
        self, cxt_id: int, act_prof_name: str, action_name: str, action_data: list[bytes]
    ) -> int:
        call = "bm_mt_act_prof_add_member"
        v, p = self._profile(call, act_prof_name)
        a = self._member_action(call, v, p, action_name, action_data)
        return self._ap(call, _native.ap_member_write, p.index, OP_ADD, None, a, action_data)

    def bm_mt_act_prof_modify_member(
        self, cxt_id: int, act_prof_name: str, mbr_handle: int, action_name: str, action_data: list[bytes]
    ) -> None:
        call = "bm_mt_act_prof_modify_member"
        v, p = self._profile(call, act_prof_name)
        a = self._member_action(call, v, p, action_name, action_data)
        self._ap(call, _native.ap_member_write, p.index, OP_MODIFY, _handle(mbr_handle), a, action_data)

    def bm_mt_act_prof_delete_member(self, cxt_id: int, act_prof_name: str, mbr_handle: int) -> None:
        call = "bm_mt_act_prof_delete_member"
        _, p = self._profile(call, act_prof_name)
        self._ap(call, _native.ap_member_write, p.index, OP_DELETE, _handle(mbr_handle))

    def bm_mt_act_prof_get_members(self, cxt_id: int, act_prof_name: str) -> list[BmMtActProfMember]:
        call = "bm_mt_act_prof_get_members"
        v, p = self._profile(call, act_prof_name)
        return [_member_out(v, m) for m in self._ap(call, _native.ap_members, p.index)]

    def bm_mt_act_prof_get_member(
        self, cxt_id: int, act_prof_name: str, mbr_handle: int
    ) -> BmMtActProfMember:
        call = "bm_mt_act_prof_get_member"
        v, p = self._profile(call, act_prof_name)
        for m in self._ap(call, _native.ap_members, p.index):
            if m[0] == mbr_handle:
                return _member_out(v, m)
        raise table_error(call, E.INVALID_MBR_HANDLE, f"action profile {p.name} has no member {mbr_handle}")

    # ---- groups ----

    def bm_mt_act_prof_create_group(self, cxt_id: int, act_prof_name: str) -> int:
        call = "bm_mt_act_prof_create_group"
        _, p = self._profile(call, act_prof_name)
        self._selector(call, p)
        return self._ap(call, _native.ap_group_write, p.index, GRP_CREATE, None)

    def bm_mt_act_prof_delete_group(self, cxt_id: int, act_prof_name: str, grp_handle: int) -> None:
        call = "bm_mt_act_prof_delete_group"
        _, p = self._profile(call, act_prof_name)
        self._selector(call, p)
        self._ap(call, _native.ap_group_write, p.index, GRP_DELETE, _handle(grp_handle))

    def bm_mt_act_prof_add_member_to_group(
        self, cxt_id: int, act_prof_name: str, mbr_handle: int, grp_handle: int
    ) -> None:
        call = "bm_mt_act_prof_add_member_to_group"
        _, p = self._profile(call, act_prof_name)
        self._selector(call, p)
        members = [(_handle(mbr_handle), 1)]
        self._ap(call, _native.ap_group_write, p.index, GRP_ADD_MEMBER, _handle(grp_handle), members)

    def bm_mt_act_prof_remove_member_from_group(
        self, cxt_id: int, act_prof_name: str, mbr_handle: int, grp_handle: int
    ) -> None:
        call = "bm_mt_act_prof_remove_member_from_group"
        _, p = self._profile(call, act_prof_name)
        self._selector(call, p)
        members = [(_handle(mbr_handle), 1)]
        self._ap(call, _native.ap_group_write, p.index, GRP_REMOVE_MEMBER, _handle(grp_handle), members)

    def bm_mt_act_prof_get_groups(self, cxt_id: int, act_prof_name: str) -> list[BmMtActProfGroup]:
        call = "bm_mt_act_prof_get_groups"
        _, p = self._profile(call, act_prof_name)
        self._selector(call, p)
        return [_group_out(g) for g in self._ap(call, _native.ap_groups, p.index)]

    def bm_mt_act_prof_get_group(self, cxt_id: int, act_prof_name: str, grp_handle: int) -> BmMtActProfGroup:
        call = "bm_mt_act_prof_get_group"
        _, p = self._profile(call, act_prof_name)
        self._selector(call, p)
        for g in self._ap(call, _native.ap_groups, p.index):
            if g[0] == grp_handle:
                return _group_out(g)
        raise table_error(call, E.INVALID_GRP_HANDLE, f"action profile {p.name} has no group {grp_handle}")

    # ---- entries of indirect tables ----

    def _indirect_add(
        self,
        call: str,
        table_name: str,
        match_key: list[BmMatchParam],
        target: Target,
        options: BmAddEntryOptions | None,
    ) -> int:
        _, t, _ = self._indirect(call, table_name, groups=target[0])
        keys = self._keys(call, t, match_key)
        prio = self._priority(call, t, options)
        w = _native.TableWrite(OP_ADD, t.index, keys, priority=prio, target=target, p4runtime_rules=False)
        return self._write(call, w)

    def _indirect_modify(self, call: str, table_name: str, entry_handle: int, target: Target) -> None:
        _, t, _ = self._indirect(call, table_name, groups=target[0])
        entry = self._native(call, _native.bm_entry, t.index, _handle(entry_handle))
        keys = [(i, *k) for i, k in enumerate(entry.keys)]  # the entry's own key, as stored
        w = _native.TableWrite(
            OP_MODIFY, t.index, keys, priority=entry.priority, target=target, p4runtime_rules=False
        )
        self._write(call, w)

    def _indirect_default(self, call: str, table_name: str, target: Target | None) -> None:
        _, t, _ = self._indirect(call, table_name, groups=bool(target and target[0]))
        w = _native.TableWrite(_native.OP_DEFAULT, t.index, target=target, p4runtime_rules=False)
        self._write(call, w)

    def bm_mt_indirect_add_entry(
        self,
        cxt_id: int,
        table_name: str,
        match_key: list[BmMatchParam],
        mbr_handle: int,
        options: BmAddEntryOptions | None,
    ) -> int:
        return self._indirect_add(
            "bm_mt_indirect_add_entry", table_name, match_key, (False, _handle(mbr_handle)), options
        )

    def bm_mt_indirect_ws_add_entry(
        self,
        cxt_id: int,
        table_name: str,
        match_key: list[BmMatchParam],
        grp_handle: int,
        options: BmAddEntryOptions | None,
    ) -> int:
        return self._indirect_add(
            "bm_mt_indirect_ws_add_entry", table_name, match_key, (True, _handle(grp_handle)), options
        )

    def bm_mt_indirect_modify_entry(
        self, cxt_id: int, table_name: str, entry_handle: int, mbr_handle: int
    ) -> None:
        self._indirect_modify(
            "bm_mt_indirect_modify_entry", table_name, entry_handle, (False, _handle(mbr_handle))
        )

    def bm_mt_indirect_ws_modify_entry(
        self, cxt_id: int, table_name: str, entry_handle: int, grp_handle: int
    ) -> None:
        self._indirect_modify(
            "bm_mt_indirect_ws_modify_entry", table_name, entry_handle, (True, _handle(grp_handle))
        )

    def bm_mt_indirect_delete_entry(self, cxt_id: int, table_name: str, entry_handle: int) -> None:
        call = "bm_mt_indirect_delete_entry"
        _, t, _ = self._indirect(call, table_name, groups=False)
        self._native(call, _native.bm_entry_delete, t.index, _handle(entry_handle))

    def bm_mt_indirect_set_entry_ttl(
        self, cxt_id: int, table_name: str, entry_handle: int, timeout_ms: int
    ) -> None:
        call = "bm_mt_indirect_set_entry_ttl"
        self._indirect(call, table_name, groups=False)
        self.entry_ttl(call, table_name, entry_handle, timeout_ms)

    def bm_mt_indirect_set_default_member(self, cxt_id: int, table_name: str, mbr_handle: int) -> None:
        self._indirect_default("bm_mt_indirect_set_default_member", table_name, (False, _handle(mbr_handle)))

    def bm_mt_indirect_ws_set_default_group(self, cxt_id: int, table_name: str, grp_handle: int) -> None:
        self._indirect_default("bm_mt_indirect_ws_set_default_group", table_name, (True, _handle(grp_handle)))

    def bm_mt_indirect_reset_default_entry(self, cxt_id: int, table_name: str) -> None:
        self._indirect_default("bm_mt_indirect_reset_default_entry", table_name, None)


def _member_out(v: ProgramView, m: tuple[int, int, list[bytes]]) -> BmMtActProfMember:
    handle, action, params = m
    return BmMtActProfMember(
        mbr_handle=handle, action_name=v.action_names[action], action_data=[bytes(p) for p in params]
    )


def _group_out(g: tuple[int, list[tuple[int, int]], int]) -> BmMtActProfGroup:
    handle, members, _max = g
    return BmMtActProfGroup(grp_handle=handle, mbr_handles=[m for m, _w in members])

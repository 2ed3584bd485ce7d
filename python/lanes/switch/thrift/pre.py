"""bmv2's SimplePre and SimplePreLAG services (multicast groups, nodes, ports) on the switch's
packet replication engine, through its typed bindings (`_native.bm_mc_*`, which answer bmv2's
error codes). A group's handle is its id, as in bmv2. Port maps are strings of '0'/'1' whose
LAST character is port 0 (how simple_switch_CLI builds them); LAGs are refused (the engine has
none)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TypeVar, TypeVarTuple

from bm_runtime.simple_pre_lag.ttypes import InvalidMcOperation, McOperationErrorCode

from lanes import _native
from lanes._native import Switch
from lanes.switch.thrift.context import SwitchContext, log

MC = McOperationErrorCode
R = TypeVar("R")
Args = TypeVarTuple("Args")


def ports_of(port_map: str | None) -> list[int] | str:
    """The ports a bmv2 port map names, or why it is refused."""
    if not port_map:
        return []
    if set(port_map) - {"0", "1"}:
        return f"port map '{port_map}' is not made of 0 and 1"
    return [i for i, c in enumerate(reversed(port_map)) if c == "1"]


class PreHandler:
    def __init__(self, ctx: SwitchContext) -> None:
        self.ctx = ctx

    def _run(self, call: str, fn: Callable[[Switch, *Args], R], *args: *Args) -> R:
        """One engine call; its refusal as bmv2's exception with the code the binding gives."""
        try:
            return fn(self.ctx.sw, *args)
        except _native.BmError as e:
            code, message = e.args
            log(call, f"{MC._VALUES_TO_NAMES.get(code, code)}: {message}")
            raise InvalidMcOperation(code=code) from None

    def _ports(self, call: str, port_map: str | None, lag_map: str | None) -> list[int]:
        ports, lags = ports_of(port_map), ports_of(lag_map)
        if isinstance(ports, str) or isinstance(lags, str) or lags:
            why = lags if isinstance(lags, str) else "LAGs are not supported (name the ports in the node)"
            log(call, f"ERROR: {ports if isinstance(ports, str) else why}")
            raise InvalidMcOperation(code=MC.ERROR)
        return ports

    def bm_mc_mgrp_create(self, cxt_id: int, mgrp: int) -> int:
        return self._run("bm_mc_mgrp_create", _native.bm_mc_mgrp_create, mgrp)

    def bm_mc_mgrp_destroy(self, cxt_id: int, mgrp_handle: int) -> None:
        self._run("bm_mc_mgrp_destroy", _native.bm_mc_mgrp_destroy, mgrp_handle)

    def bm_mc_node_create(self, cxt_id: int, rid: int, port_map: str, lag_map: str | None = None) -> int:
        ports = self._ports("bm_mc_node_create", port_map, lag_map)
        return self._run("bm_mc_node_create", _native.bm_mc_node_create, rid, ports)

    def bm_mc_node_update(
        self, cxt_id: int, l1_handle: int, port_map: str, lag_map: str | None = None
    ) -> None:
        ports = self._ports("bm_mc_node_update", port_map, lag_map)
        self._run("bm_mc_node_update", _native.bm_mc_node_update, l1_handle, ports)

    def bm_mc_node_associate(self, cxt_id: int, mgrp_handle: int, l1_handle: int) -> None:
        self._run("bm_mc_node_associate", _native.bm_mc_node_associate, mgrp_handle, l1_handle)

    def bm_mc_node_dissociate(self, cxt_id: int, mgrp_handle: int, l1_handle: int) -> None:
        self._run("bm_mc_node_dissociate", _native.bm_mc_node_dissociate, mgrp_handle, l1_handle)

    def bm_mc_node_destroy(self, cxt_id: int, l1_handle: int) -> None:
        self._run("bm_mc_node_destroy", _native.bm_mc_node_destroy, l1_handle)

    def bm_mc_set_lag_membership(self, cxt_id: int, lag_index: int, port_map: str) -> None:
        log("bm_mc_set_lag_membership", "ERROR: LAGs are not supported")
        raise InvalidMcOperation(code=MC.ERROR)

    def bm_mc_get_entries(self, cxt_id: int) -> str:
        """The engine's state in bmv2's JSON layout (what simple_switch_CLI's mc_dump reads):
        each node is its own L2 entry, with the same handle."""
        groups, nodes = _native.bm_mc_entries(self.ctx.sw)
        return json.dumps(
            {
                "mgrps": [{"id": mgid, "l1_handles": handles} for mgid, handles in groups],
                "l1_handles": [{"handle": h, "rid": rid, "l2_handle": h} for h, rid, _ in nodes],
                "l2_handles": [{"handle": h, "ports": ports, "lags": []} for h, _, ports in nodes],
                "lags": [],
            }
        )

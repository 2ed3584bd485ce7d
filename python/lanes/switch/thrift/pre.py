"""bmv2's SimplePre and SimplePreLAG services (multicast groups, nodes, ports) on the switch's
packet replication engine, through its `mc_*` commands. A group's handle is its id, as in
bmv2. Port maps are strings of '0'/'1' whose LAST character is port 0 (how simple_switch_CLI
builds them); LAGs are refused (the engine has none)."""

from __future__ import annotations

import json

from bm_runtime.simple_pre_lag.ttypes import InvalidMcOperation, McOperationErrorCode

from lanes.switch.thrift.context import SwitchContext, log

MC = McOperationErrorCode


def ports_of(port_map: str | None) -> list[int] | str:
    """The ports a bmv2 port map names, or why it is refused."""
    if not port_map:
        return []
    if set(port_map) - {"0", "1"}:
        return f"port map '{port_map}' is not made of 0 and 1"
    return [i for i, c in enumerate(reversed(port_map)) if c == "1"]


def _code(message: str) -> int:
    """bmv2's code for one of the engine's one-line errors."""
    if "no room" in message:
        return MC.TABLE_FULL
    if "multicast group" in message and ("out of range" in message or "exists" in message):
        return MC.INVALID_MGID
    if "no multicast group" in message:
        return MC.INVALID_MGRP_HANDLE
    if "node" in message:
        return MC.INVALID_L1_HANDLE
    return MC.ERROR


class PreHandler:
    def __init__(self, ctx: SwitchContext) -> None:
        self.ctx = ctx

    def _run(self, call: str, line: str) -> str:
        try:
            return self.ctx.command(line)
        except ValueError as e:
            code = _code(str(e))
            log(call, f"{MC._VALUES_TO_NAMES.get(code, code)}: {e}")
            raise InvalidMcOperation(code=code) from None

    def _ports(self, call: str, port_map: str | None, lag_map: str | None) -> str:
        ports = ports_of(port_map)
        lags = ports_of(lag_map)
        for why in (ports, lags):
            if isinstance(why, str):
                log(call, f"ERROR: {why}")
                raise InvalidMcOperation(code=MC.ERROR)
        if lags:
            log(call, "ERROR: LAGs are not supported (name the ports in the node)")
            raise InvalidMcOperation(code=MC.ERROR)
        return " ".join(map(str, ports))

    def bm_mc_mgrp_create(self, cxt_id, mgrp):
        self._run("bm_mc_mgrp_create", f"mc_mgrp_create {mgrp}")
        return mgrp

    def bm_mc_mgrp_destroy(self, cxt_id, mgrp_handle):
        self._run("bm_mc_mgrp_destroy", f"mc_mgrp_destroy {mgrp_handle}")

    def bm_mc_node_create(self, cxt_id, rid, port_map, lag_map=None):
        ports = self._ports("bm_mc_node_create", port_map, lag_map)
        out = self._run("bm_mc_node_create", f"mc_node_create {rid} {ports}")
        return int(out.split()[-1])

    def bm_mc_node_update(self, cxt_id, l1_handle, port_map, lag_map=None):
        ports = self._ports("bm_mc_node_update", port_map, lag_map)
        self._run("bm_mc_node_update", f"mc_node_update {l1_handle} {ports}")

    def bm_mc_node_associate(self, cxt_id, mgrp_handle, l1_handle):
        self._run("bm_mc_node_associate", f"mc_node_associate {mgrp_handle} {l1_handle}")

    def bm_mc_node_dissociate(self, cxt_id, mgrp_handle, l1_handle):
        self._run("bm_mc_node_dissociate", f"mc_node_dissociate {mgrp_handle} {l1_handle}")

    def bm_mc_node_destroy(self, cxt_id, l1_handle):
        self._run("bm_mc_node_destroy", f"mc_node_destroy {l1_handle}")

    def bm_mc_set_lag_membership(self, cxt_id, lag_index, port_map):
        log("bm_mc_set_lag_membership", "ERROR: LAGs are not supported")
        raise InvalidMcOperation(code=MC.ERROR)

    def bm_mc_get_entries(self, cxt_id):
        """The engine's state in bmv2's JSON layout (what simple_switch_CLI's mc_dump reads):
        each node is its own L2 entry, with the same handle."""
        d = json.loads(self._run("bm_mc_get_entries", "mc_dump_json"))
        return json.dumps(
            {
                "mgrps": [{"id": g["mgid"], "l1_handles": g["nodes"]} for g in d["groups"]],
                "l1_handles": [
                    {"handle": n["handle"], "rid": n["rid"], "l2_handle": n["handle"]} for n in d["nodes"]
                ],
                "l2_handles": [{"handle": n["handle"], "ports": n["ports"], "lags": []} for n in d["nodes"]],
                "lags": [],
            }
        )

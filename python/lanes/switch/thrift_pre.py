"""bmv2's SimplePre and SimplePreLAG services (multicast groups, nodes, ports)."""

from __future__ import annotations

from bm_runtime.simple_pre_lag.ttypes import InvalidMcOperation, McOperationErrorCode

from lanes.switch.thrift_context import SwitchContext, log

MC = McOperationErrorCode


class PreHandler:
    def __init__(self, ctx: SwitchContext) -> None:
        self.ctx = ctx

    def _unsupported(self, call: str):
        log(call, "ERROR: this switch has no packet replication engine")
        raise InvalidMcOperation(code=MC.ERROR)

    def bm_mc_mgrp_create(self, cxt_id, mgrp):
        self._unsupported("bm_mc_mgrp_create")

    def bm_mc_mgrp_destroy(self, cxt_id, mgrp_handle):
        self._unsupported("bm_mc_mgrp_destroy")

    def bm_mc_node_create(self, cxt_id, rid, port_map, lag_map=None):
        self._unsupported("bm_mc_node_create")

    def bm_mc_node_associate(self, cxt_id, mgrp_handle, l1_handle):
        self._unsupported("bm_mc_node_associate")

    def bm_mc_node_dissociate(self, cxt_id, mgrp_handle, l1_handle):
        self._unsupported("bm_mc_node_dissociate")

    def bm_mc_node_destroy(self, cxt_id, l1_handle):
        self._unsupported("bm_mc_node_destroy")

    def bm_mc_node_update(self, cxt_id, l1_handle, port_map, lag_map=None):
        self._unsupported("bm_mc_node_update")

    def bm_mc_set_lag_membership(self, cxt_id, lag_index, port_map):
        self._unsupported("bm_mc_set_lag_membership")

    def bm_mc_get_entries(self, cxt_id):
        self._unsupported("bm_mc_get_entries")

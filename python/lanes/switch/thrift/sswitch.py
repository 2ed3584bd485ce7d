"""bmv2's SimpleSwitch service on a lanes switch: mirroring sessions, egress queue depth and
rate (packets per second, as simple_switch; the byte rates, bursts, quanta and schedulers of the
traffic manager stay in `lanes ctl`), and the switch's clock. Every call goes through the typed
bindings `_native.bm_mirror_*` and `_native.bm_set_queue_*`."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVarTuple

from sswitch_runtime.ttypes import (
    InvalidMirroringOperation,
    MirroringOperationErrorCode,
    MirroringSessionConfig,
)

from lanes import _native
from lanes._native import Switch
from lanes.switch.thrift.context import SwitchContext, log

SESSION_NOT_FOUND = MirroringOperationErrorCode.SESSION_NOT_FOUND
Args = TypeVarTuple("Args")


class SimpleSwitchHandler:
    def __init__(self, ctx: SwitchContext) -> None:
        self.ctx = ctx

    # ---- mirroring ----

    def _mirror(self, fn: Callable[[Switch, *Args], None], *args: *Args) -> str | None:
        """One mirror session call; why it was refused, or None."""
        try:
            fn(self.ctx.sw, *args)
        except _native.BmError as e:
            return str(e.args[1])
        return None

    def mirroring_session_add(self, mirror_id: int, config: MirroringSessionConfig | None) -> None:
        """A session to a port, to a multicast group (`mgid`, copies to every (port, rid) of the
        group), or both, replacing what the session had."""
        port = None if config is None else config.port
        mgid = (None if config is None else config.mgid) or None  # 0 is no group
        why: str | None = "no port and no multicast group"
        if port is not None or mgid is not None:
            why = self._mirror(_native.bm_mirror_session_set, mirror_id, port, mgid)
        if why is not None:
            log("mirroring_session_add", f"SESSION_NOT_FOUND: session {mirror_id}: {why}")
            raise InvalidMirroringOperation(code=SESSION_NOT_FOUND)

    def mirroring_session_delete(self, mirror_id: int) -> None:
        why = self._mirror(_native.bm_mirror_session_delete, mirror_id)
        if why is not None:
            log("mirroring_session_delete", f"SESSION_NOT_FOUND: {why}")
            raise InvalidMirroringOperation(code=SESSION_NOT_FOUND)

    def mirroring_session_get(self, mirror_id: int) -> MirroringSessionConfig:
        s = _native.bm_mirror_session(self.ctx.sw, mirror_id)
        if s is None:
            raise InvalidMirroringOperation(code=SESSION_NOT_FOUND)
        return MirroringSessionConfig(port=s.port, mgid=s.mgid)

    # the older calls: 0 for success, as simple_switch answers them
    def mirroring_mapping_add(self, mirror_id: int, egress_port: int) -> int:
        why = self._mirror(_native.bm_mirror_session_set, mirror_id, egress_port, None)
        if why is not None:
            log("mirroring_mapping_add", why)
            return 1
        return 0

    def mirroring_mapping_delete(self, mirror_id: int) -> int:
        return 0 if self._mirror(_native.bm_mirror_session_delete, mirror_id) is None else 1

    def mirroring_mapping_get_egress_port(self, mirror_id: int) -> int:
        s = _native.bm_mirror_session(self.ctx.sw, mirror_id)
        return -1 if s is None or s.port is None else s.port

    # ---- queues ----

    def _queue(
        self, call: str, fn: Callable[[Switch, int | None, int], None], port: int | None, value: int
    ) -> int:
        try:
            fn(self.ctx.sw, port, value)
        except ValueError as e:
            log(call, str(e))
            return 1
        return 0

    def set_egress_queue_depth(self, port_num: int, depth_pkts: int) -> int:
        return self._queue("set_egress_queue_depth", _native.bm_set_queue_depth, port_num, depth_pkts)

    def set_all_egress_queue_depths(self, depth_pkts: int) -> int:
        return self._queue("set_all_egress_queue_depths", _native.bm_set_queue_depth, None, depth_pkts)

    def set_egress_queue_rate(self, port_num: int, rate_pps: int) -> int:
        return self._queue("set_egress_queue_rate", _native.bm_set_queue_rate, port_num, rate_pps)

    def set_all_egress_queue_rates(self, rate_pps: int) -> int:
        return self._queue("set_all_egress_queue_rates", _native.bm_set_queue_rate, None, rate_pps)

    # ---- clock ----

    def get_time_elapsed_us(self) -> int:
        return int((time.monotonic() - self.ctx.started) * 1e6)

    def get_time_since_epoch_us(self) -> int:
        return int(time.time() * 1e6)

"""bmv2's SimpleSwitch service on a lanes switch: mirroring sessions, egress queue depth and
rate (packets per second, as simple_switch; the byte rates, bursts, quanta and schedulers of the
traffic manager stay in `lanes ctl`), and the switch's clock."""

from __future__ import annotations

import time

from sswitch_runtime.ttypes import (
    InvalidMirroringOperation,
    MirroringOperationErrorCode,
    MirroringSessionConfig,
)

from lanes import _native
from lanes.switch.thrift.context import SwitchContext, log, native_code

SESSION_NOT_FOUND = MirroringOperationErrorCode.SESSION_NOT_FOUND


class SimpleSwitchHandler:
    def __init__(self, ctx: SwitchContext) -> None:
        self.ctx = ctx

    # ---- mirroring ----

    def _sessions(self) -> dict[int, tuple[int, int]]:
        return {s: (port, trunc) for s, port, trunc in _native.p4rt_clone_sessions(self.ctx.sw)}

    def _add(self, call: str, mirror_id: int, port: int) -> str | None:
        """Add or replace a session to a port; why not, or None."""
        if mirror_id < 0 or port < 0:
            return f"session {mirror_id} or port {port} is negative"
        op = _native.OP_MODIFY if mirror_id in self._sessions() else _native.OP_INSERT
        try:
            _native.p4rt_clone_session_write(self.ctx.sw, op, mirror_id, port, 0)
        except _native.P4rtError as e:
            return native_code(e)[1]
        return None

    def mirroring_session_add(self, mirror_id, config):
        """A session to a port, to a multicast group (`mgid`, copies to every (port, rid) of the
        group), or both, replacing what the session had."""
        call = "mirroring_session_add"
        port = None if config is None else config.port
        mgid = None if config is None else config.mgid
        why = None
        if port is None and not mgid:
            why = "no port and no multicast group"
        elif mirror_id < 0 or (mgid is not None and mgid < 0):
            why = f"session {mirror_id} or group {mgid} is negative"
        elif port is not None:
            why = self._add(call, mirror_id, port)
        elif mirror_id in self._sessions():
            _native.p4rt_clone_session_write(self.ctx.sw, _native.OP_DELETE, mirror_id, 0, 0)
        if why is None and mgid:
            try:
                self.ctx.command(f"mirroring_add_mc {mirror_id} {mgid}")
            except ValueError as e:
                why = str(e)
        if why is not None:
            log(call, f"SESSION_NOT_FOUND: session {mirror_id}: {why}")
            raise InvalidMirroringOperation(code=SESSION_NOT_FOUND)

    def mirroring_session_delete(self, mirror_id):
        try:
            self.ctx.command(f"mirroring_delete {mirror_id}")
        except ValueError as e:
            log("mirroring_session_delete", f"SESSION_NOT_FOUND: {e}")
            raise InvalidMirroringOperation(code=SESSION_NOT_FOUND) from None

    def mirroring_session_get(self, mirror_id):
        try:  # "session 5: port 2 mgid 7 truncate 64", the parts it has
            words = self.ctx.command(f"mirroring_get {mirror_id}").split()
        except ValueError:
            raise InvalidMirroringOperation(code=SESSION_NOT_FOUND) from None
        part = {k: int(v) for k, v in zip(words[2::2], words[3::2], strict=False) if v.isdigit()}
        return MirroringSessionConfig(port=part.get("port"), mgid=part.get("mgid"))

    # the older calls: 0 for success, as simple_switch answers them
    def mirroring_mapping_add(self, mirror_id, egress_port):
        why = self._add("mirroring_mapping_add", mirror_id, egress_port)
        if why is not None:
            log("mirroring_mapping_add", why)
            return 1
        return 0

    def mirroring_mapping_delete(self, mirror_id):
        if mirror_id not in self._sessions():
            return 1
        _native.p4rt_clone_session_write(self.ctx.sw, _native.OP_DELETE, mirror_id, 0, 0)
        return 0

    def mirroring_mapping_get_egress_port(self, mirror_id):
        s = self._sessions().get(mirror_id)
        return -1 if s is None else s[0]

    # ---- queues ----

    def _queue(self, call: str, line: str) -> int:
        try:
            self.ctx.command(line)
        except ValueError as e:
            log(call, str(e))
            return 1
        return 0

    def set_egress_queue_depth(self, port_num, depth_pkts):
        return self._queue("set_egress_queue_depth", f"set_queue_depth {depth_pkts} {port_num}")

    def set_all_egress_queue_depths(self, depth_pkts):
        return self._queue("set_all_egress_queue_depths", f"set_queue_depth {depth_pkts}")

    def set_egress_queue_rate(self, port_num, rate_pps):
        return self._queue("set_egress_queue_rate", f"set_queue_rate {rate_pps} {port_num}")

    def set_all_egress_queue_rates(self, rate_pps):
        return self._queue("set_all_egress_queue_rates", f"set_queue_rate {rate_pps}")

    # ---- clock ----

    def get_time_elapsed_us(self):
        return int((time.monotonic() - self.ctx.started) * 1e6)

    def get_time_since_epoch_us(self):
        return int(time.time() * 1e6)

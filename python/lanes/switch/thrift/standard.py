"""bmv2's Standard service on a lanes switch: tables and externs (the mixins), the program
(bm_get_config and its md5, load and swap), management calls, and bmv2's error codes for what
the switch has not (learning over Thrift, parser value sets, custom CRCs, run-time port changes)."""

from __future__ import annotations

from typing import NoReturn

from bm_runtime.standard.ttypes import (
    BmConfig,
    BmCrc16Config,
    BmCrc32Config,
    BmResourceType,
    CrcErrorCode,
    DevMgrErrorCode,
    DevMgrPortInfo,
    IdLookupErrorCode,
    InvalidCrcOperation,
    InvalidDevMgrOperation,
    InvalidIdLookup,
    InvalidLearnOperation,
    InvalidParseVSetOperation,
    InvalidSwapOperation,
    LearnOperationErrorCode,
    ParseVSetOperationErrorCode,
    SwapOperationErrorCode,
)

from lanes import _native
from lanes._native import P4rtProgram
from lanes.switch.thrift.context import NOT_FOUND, SwitchContext, log, native_code
from lanes.switch.thrift.externs import ExternsMixin
from lanes.switch.thrift.profiles import ProfilesMixin

S = SwapOperationErrorCode


class StandardHandler(ProfilesMixin, ExternsMixin):  # ProfilesMixin is over TablesMixin
    def __init__(self, ctx: SwitchContext) -> None:
        self.ctx = ctx
        self._staged: tuple[str, P4rtProgram] | None = None  # (text, compiled program) of a load

    # ---- the program ----

    def bm_get_config(self) -> str:
        return self.ctx.config.text()

    def bm_get_config_md5(self) -> bytes:
        v = self.ctx.config.view()
        if v is not None:
            return v.md5
        import hashlib

        return hashlib.md5(self.ctx.config.text().encode()).digest()

    def bm_load_new_config(self, config_str: str) -> None:
        with self.ctx.lock:
            if self._staged is not None:
                log("bm_load_new_config", "ONGOING_SWAP: a loaded config waits for bm_swap_configs")
                raise InvalidSwapOperation(code=S.ONGOING_SWAP)
            try:
                staged = _native.p4rt_compile(config_str)
            except _native.P4rtError as e:
                # bmv2's swap errors have no code for a program it cannot run
                log("bm_load_new_config", f"CONFIG_SWAP_DISABLED: program refused: {native_code(e)[1]}")
                raise InvalidSwapOperation(code=S.CONFIG_SWAP_DISABLED) from None
            self._staged = (config_str, staged)

    def bm_swap_configs(self) -> None:
        with self.ctx.lock:
            if self._staged is None:
                log("bm_swap_configs", "NO_ONGOING_SWAP: load a config first (bm_load_new_config)")
                raise InvalidSwapOperation(code=S.NO_ONGOING_SWAP)
            text, staged = self._staged
            self._staged = None
            _native.p4rt_commit(self.ctx.sw, staged)
            self.ctx.config.set_text(text)

    def bm_reset_state(self) -> None:
        """Every table, counter, meter and register back to the program's start (the program,
        mirror sessions and queue settings stay), by installing the running program again."""
        with self.ctx.lock:
            text = self.ctx.config.text()
            if self.ctx.config.view() is None:
                return
            try:
                _native.p4rt_commit(self.ctx.sw, _native.p4rt_compile(text))
            except _native.P4rtError as e:  # it runs, so it compiles; never crash the caller
                log("bm_reset_state", native_code(e)[1])

    def bm_serialize_state(self) -> str:
        log("bm_serialize_state", "not supported: answered with a one-line note")
        return "lanes switch: serialize_state is not supported\n"

    # ---- management ----

    def bm_mgmt_get_info(self) -> BmConfig:
        return BmConfig(
            device_id=self.ctx.device_id,
            thrift_port=self.ctx.thrift_port,
            notifications_socket="",
            elogger_socket="",
            debugger_socket="",
        )

    def bm_dev_mgr_show_ports(self) -> list[DevMgrPortInfo]:
        return [
            DevMgrPortInfo(port_num=n, iface_name=i, is_up=True, extra={}) for n, i in self.ctx.interfaces
        ]

    def bm_dev_mgr_add_port(self, iface_name: str, port_num: int, pcap_path: str) -> None:
        log("bm_dev_mgr_add_port", "ports are fixed at start (-i N@IFACE)")
        raise InvalidDevMgrOperation(code=DevMgrErrorCode.ERROR)

    def bm_dev_mgr_remove_port(self, port_num: int) -> None:
        log("bm_dev_mgr_remove_port", "ports are fixed at start (-i N@IFACE)")
        raise InvalidDevMgrOperation(code=DevMgrErrorCode.ERROR)

    def bm_get_id_from_name(self, cxt_id: int, resource_type: int, resource_name: str) -> int:
        kind = {
            BmResourceType.MATCH_TABLE: "table",
            BmResourceType.COUNTER: "counter",
            BmResourceType.METER: "meter",
            BmResourceType.REGISTER: "register",
            BmResourceType.LEARNING_LIST: "learn",
            BmResourceType.ACTION_PROFILE: "action_profile",
        }.get(resource_type)
        if kind is None:
            raise InvalidIdLookup(code=IdLookupErrorCode.INVALID_RESOURCE_TYPE)
        v = self.ctx.config.view()
        found = None if v is None else v.ids.get((kind, resource_name))
        if found is None:
            raise InvalidIdLookup(code=IdLookupErrorCode.INVALID_RESOURCE_NAME)
        return found

    # ---- what the switch has not ----

    def _no_learning(self, call: str) -> NoReturn:
        log(call, "INVALID_LIST_ID: learning is not served over Thrift (digests go to P4Runtime clients)")
        raise InvalidLearnOperation(code=LearnOperationErrorCode.INVALID_LIST_ID)

    def bm_learning_ack(self, cxt_id: int, list_id: int, buffer_id: int, sample_ids: list[int]) -> None:
        self._no_learning("bm_learning_ack")

    def bm_learning_ack_buffer(self, cxt_id: int, list_id: int, buffer_id: int) -> None:
        self._no_learning("bm_learning_ack_buffer")

    def bm_learning_set_timeout(self, cxt_id: int, list_id: int, timeout_ms: int) -> None:
        self._no_learning("bm_learning_set_timeout")

    def bm_learning_set_buffer_size(self, cxt_id: int, list_id: int, nb_samples: int) -> None:
        self._no_learning("bm_learning_set_buffer_size")

    def _vset(
        self, call: str, name: str, op: int | None = None, value: bytes | None = None
    ) -> list[tuple[bytes, bytes]]:
        """A value set operation (`op` None: read the members; a write answers []); bmv2's codes
        for an unknown set or a bad value."""
        try:
            if op is None:
                return _native.vset_members(self.ctx.sw, name)
            _native.vset_write(self.ctx.sw, name, op, value)
            return []
        except _native.P4rtError as e:
            code, msg = native_code(e)
            if code == NOT_FOUND and "no value set named" in msg:
                log(call, f"INVALID_PARSE_VSET_NAME: {msg}")
                raise InvalidParseVSetOperation(
                    code=ParseVSetOperationErrorCode.INVALID_PARSE_VSET_NAME
                ) from None
            if code == NOT_FOUND:  # removing a value that is not there: bmv2 says nothing
                return []
            log(call, f"ERROR: {msg}")
            raise InvalidParseVSetOperation(code=ParseVSetOperationErrorCode.ERROR) from None

    def bm_parse_vset_add(self, cxt_id: int, parse_vset_name: str, value: bytes) -> None:
        self._vset("bm_parse_vset_add", parse_vset_name, _native.VSET_ADD, bytes(value))

    def bm_parse_vset_remove(self, cxt_id: int, parse_vset_name: str, value: bytes) -> None:
        self._vset("bm_parse_vset_remove", parse_vset_name, _native.VSET_REMOVE, bytes(value))

    def bm_parse_vset_get(self, cxt_id: int, parse_vset_name: str) -> list[bytes]:
        members = self._vset("bm_parse_vset_get", parse_vset_name)
        return [bytes(v) for v, _mask in members]

    def bm_parse_vset_clear(self, cxt_id: int, parse_vset_name: str) -> None:
        self._vset("bm_parse_vset_clear", parse_vset_name, _native.VSET_CLEAR)

    def bm_set_crc16_custom_parameters(
        self, cxt_id: int, calc_name: str, crc16_config: BmCrc16Config
    ) -> None:
        log("bm_set_crc16_custom_parameters", f"no custom CRC calculation '{calc_name}'")
        raise InvalidCrcOperation(code=CrcErrorCode.INVALID_CALCULATION_NAME)

    def bm_set_crc32_custom_parameters(
        self, cxt_id: int, calc_name: str, crc32_config: BmCrc32Config
    ) -> None:
        log("bm_set_crc32_custom_parameters", f"no custom CRC calculation '{calc_name}'")
        raise InvalidCrcOperation(code=CrcErrorCode.INVALID_CALCULATION_NAME)

"""bmv2's Standard service, indexed externs: counter, meter and register arrays by name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, TypeVarTuple

from bm_runtime.standard.ttypes import (
    BmCounterValue,
    BmMeterRateConfig,
    CounterOperationErrorCode,
    InvalidCounterOperation,
    InvalidMeterOperation,
    InvalidRegisterOperation,
    MeterOperationErrorCode,
    RegisterOperationErrorCode,
)

from lanes import _native
from lanes._native import Switch
from lanes.switch.thrift.context import OUT_OF_RANGE, SwitchContext, log, native_code, thrift_code
from lanes.switch.thrift.tables import E, UnsendableRates, meter_rates, meter_rates_out

C, M, R = CounterOperationErrorCode, MeterOperationErrorCode, RegisterOperationErrorCode
U64 = (1 << 64) - 1
T = TypeVar("T")
Args = TypeVarTuple("Args")


def _err(exc_type: Callable[..., Exception], codes: Any, call: str, code: int, message: str) -> Exception:
    log(call, f"{codes._VALUES_TO_NAMES.get(code, code)}: {message}")
    return exc_type(code=code)


def _i64(v: int) -> int:
    """A 64-bit cell as Thrift's signed i64 (bmv2 does the same)."""
    return v - (1 << 64) if v >= 1 << 63 else v


class ExternsMixin:
    ctx: SwitchContext

    def _extern(self, call: str, kind: str, name: str) -> str:
        exc, codes, bad_name = {
            "counter": (InvalidCounterOperation, C, C.INVALID_COUNTER_NAME),
            "meter": (InvalidMeterOperation, M, M.INVALID_METER_NAME),
            "register": (InvalidRegisterOperation, R, R.INVALID_REGISTER_NAME),
        }[kind]
        v = self.ctx.config.view()
        if v is None:
            raise _err(exc, codes, call, bad_name, "no P4 program loaded")
        names = {"counter": v.counters, "meter": v.meters, "register": v.registers}[kind]
        full = v.extern(names, name)
        if full is None:
            raise _err(exc, codes, call, bad_name, f"no {kind} array named '{name}'")
        return full

    def _call(
        self,
        call: str,
        kind: str,
        fn: Callable[[Switch, str, int | None, *Args], T],
        name: str,
        index: int | None,
        *args: *Args,
    ) -> T:
        """`fn` on the extern `name`, cell `index` (None: every cell); its error as bmv2's code."""
        exc, codes, bad_index, error = {
            "counter": (InvalidCounterOperation, C, C.INVALID_INDEX, C.ERROR),
            "meter": (InvalidMeterOperation, M, M.INVALID_INDEX, M.ERROR),
            "register": (InvalidRegisterOperation, R, R.INVALID_INDEX, R.ERROR),
        }[kind]
        if index is not None and index < 0:
            raise _err(exc, codes, call, bad_index, f"index {index} is negative")
        try:
            return fn(self.ctx.sw, name, index, *args)
        except _native.P4rtError as e:
            code, msg = native_code(e)
            if code == OUT_OF_RANGE:
                error = bad_index
            elif kind == "meter" and thrift_code(e) == E.INVALID_METER_OPERATION:
                error = M.INVALID_INFO_RATE_VALUE  # the rates' rule (MeterRates::check)
            raise _err(exc, codes, call, error, msg) from None

    # ---- counters ----

    def bm_counter_read(self, cxt_id: int, counter_name: str, index: int) -> BmCounterValue:
        name = self._extern("bm_counter_read", "counter", counter_name)
        [(_, pk, by)] = self._call("bm_counter_read", "counter", _native.p4rt_counter_read, name, index)
        return BmCounterValue(bytes=by, packets=pk)

    def bm_counter_reset_all(self, cxt_id: int, counter_name: str) -> None:
        name = self._extern("bm_counter_reset_all", "counter", counter_name)
        self._call("bm_counter_reset_all", "counter", _native.p4rt_counter_write, name, None, 0, 0)

    def bm_counter_write(self, cxt_id: int, counter_name: str, index: int, value: BmCounterValue) -> None:
        name = self._extern("bm_counter_write", "counter", counter_name)
        pk, by = (value.packets or 0) & U64, (value.bytes or 0) & U64
        self._call("bm_counter_write", "counter", _native.p4rt_counter_write, name, index, pk, by)

    # ---- meters ----

    def _set_meter(
        self, call: str, meter_array_name: str, index: int | None, rates: list[BmMeterRateConfig]
    ) -> None:
        name = self._extern(call, "meter", meter_array_name)
        r = meter_rates(rates)
        if isinstance(r, UnsendableRates):
            code = {"list": M.BAD_RATES_LIST, "rate": M.INVALID_INFO_RATE_VALUE, "burst": M.INVALID_BURST_SIZE_VALUE}
            raise _err(InvalidMeterOperation, M, call, code[r.what], r.message)
        self._call(call, "meter", _native.p4rt_meter_write, name, index, r)

    def bm_meter_array_set_rates(
        self, cxt_id: int, meter_array_name: str, rates: list[BmMeterRateConfig]
    ) -> None:
        self._set_meter("bm_meter_array_set_rates", meter_array_name, None, rates)

    def bm_meter_set_rates(
        self, cxt_id: int, meter_array_name: str, index: int, rates: list[BmMeterRateConfig]
    ) -> None:
        if index < 0:
            raise _err(InvalidMeterOperation, M, "bm_meter_set_rates", M.INVALID_INDEX, "negative index")
        self._set_meter("bm_meter_set_rates", meter_array_name, index, rates)

    def bm_meter_get_rates(self, cxt_id: int, meter_array_name: str, index: int) -> list[BmMeterRateConfig]:
        name = self._extern("bm_meter_get_rates", "meter", meter_array_name)
        [(_, r)] = self._call("bm_meter_get_rates", "meter", _native.p4rt_meter_read, name, index)
        return meter_rates_out(r)

    # ---- registers ----

    def bm_register_read(self, cxt_id: int, register_array_name: str, idx: int) -> int:
        name = self._extern("bm_register_read", "register", register_array_name)
        [(_, v)] = self._call("bm_register_read", "register", _native.p4rt_register_read, name, idx)
        return _i64(v)

    def bm_register_read_all(self, cxt_id: int, register_array_name: str) -> list[int]:
        name = self._extern("bm_register_read_all", "register", register_array_name)
        cells = self._call("bm_register_read_all", "register", _native.p4rt_register_read, name, None)
        return [_i64(v) for _, v in cells]

    def bm_register_write(self, cxt_id: int, register_array_name: str, index: int, value: int) -> None:
        name = self._extern("bm_register_write", "register", register_array_name)
        self._call("bm_register_write", "register", _native.p4rt_register_write, name, index, value & U64)

    def bm_register_write_range(
        self, cxt_id: int, register_array_name: str, start_index: int, end_index: int, value: int
    ) -> None:
        call = "bm_register_write_range"
        name = self._extern(call, "register", register_array_name)
        if start_index < 0 or end_index < start_index:
            raise _err(
                InvalidRegisterOperation, R, call, R.INVALID_INDEX, f"bad range {start_index}..{end_index}"
            )
        size = len(self._call(call, "register", _native.p4rt_register_read, name, None))
        if end_index >= size:
            raise _err(InvalidRegisterOperation, R, call, R.INVALID_INDEX, f"{end_index} >= size {size}")
        for i in range(start_index, end_index + 1):
            self._call(call, "register", _native.p4rt_register_write, name, i, value & U64)

    def bm_register_reset(self, cxt_id: int, register_array_name: str) -> None:
        name = self._extern("bm_register_reset", "register", register_array_name)
        self._call("bm_register_reset", "register", _native.p4rt_register_write, name, None, 0)

"""Values and constants shared by entity writes and reads: canonical byte strings, native key
kinds and table operations, conversion of data-plane errors."""

from __future__ import annotations

from typing import Any

import grpc

from lanes import _native
from lanes.p4runtime.errors import P4RTError, code_from_number, invalid
from lanes.p4runtime.proto import p4i, p4r

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
TABLE_ONLY, DEFAULT_ONLY = p4i.ActionRef.TABLE_ONLY, p4i.ActionRef.DEFAULT_ONLY
# the extension's key kinds and table operations (defined once, in crates/py/src/codes.rs)
K_EXACT, K_LPM, K_TERNARY = _native.KEY_EXACT, _native.KEY_LPM, _native.KEY_TERNARY
K_RANGE, K_OPTIONAL, K_ANY = _native.KEY_RANGE, _native.KEY_OPTIONAL, _native.KEY_ANY
OP_INSERT, OP_MODIFY, OP_DELETE = _native.OP_INSERT, _native.OP_MODIFY, _native.OP_DELETE
OP_DEFAULT, OP_COUNTER, OP_METER = _native.OP_DEFAULT, _native.OP_COUNTER, _native.OP_METER
OK = grpc.StatusCode.OK

# a match field as the switch takes it: (position in the table's key, kind, a, b, prefix length)
Key = tuple[int, int, bytes, bytes, int]


def to_bytes(v: int, bitwidth: int) -> bytes:
    return v.to_bytes(max(1, (bitwidth + 7) // 8), "big")


def canonical(v: int) -> bytes:
    """P4Runtime's canonical binary string: no leading zero bytes, at least one byte."""
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


def value_of(b: bytes, bitwidth: int, what: str) -> int:
    if not b:
        raise invalid(f"{what}: empty value")
    v = int.from_bytes(b, "big")
    if v >> bitwidth:
        raise invalid(f"{what}: value {b.hex()} does not fit in {bitwidth} bits")
    return v


def native_error(e: Exception) -> P4RTError:
    """A _native.P4rtError(code, message, thrift code) as P4Runtime's error."""
    return P4RTError(code_from_number(e.args[0]), e.args[1])


INT64_MAX = (1 << 63) - 1


def int64(v: float) -> int:
    """A data-plane value for an int64 protobuf field (saturating: counters are u64 there)."""
    return min(int(v), INT64_MAX)


def counter_pair(data: Any) -> tuple[int, int]:
    """CounterData -> (packets, bytes); INVALID_ARGUMENT for negative counts."""
    if data.packet_count < 0 or data.byte_count < 0:
        raise invalid("counter data must not be negative")
    return (data.packet_count, data.byte_count)


def meter_rates(cfg: Any) -> tuple[float, int, float, int] | None:
    """MeterConfig -> (cir, cburst, pir, pburst); None for an empty config (reset to default).
    The rates' rule (none negative, cir not above pir) is the switch's (MeterRates::check); a
    negative burst has no form to send it in and is refused here."""
    if cfg.cburst < 0 or cfg.pburst < 0:
        raise invalid("a burst size is negative")
    if not any((cfg.cir, cfg.cburst, cfg.pir, cfg.pburst)):
        return None
    return (float(cfg.cir), int(cfg.cburst), float(cfg.pir), int(cfg.pburst))


def config_out(rates: tuple[float, int, float, int] | None) -> Any:
    if rates is None:
        return p4r.MeterConfig()
    cir, cbs, pir, pbs = rates
    return p4r.MeterConfig(cir=int64(cir), cburst=int64(cbs), pir=int64(pir), pburst=int64(pbs))

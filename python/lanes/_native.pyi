# The Rust extension (crates/py), built by maturin. Table writes and the bindings for bmv2's Thrift
# services are typed here; the rest is typed as Any until the bindings ship their own stubs.
from typing import Any

# (position in the table's key, KEY_* kind, value or low bound, mask or high bound, prefix length)
Key = tuple[int, int, bytes, bytes, int]
# a meter's (cir, cburst, pir, pburst)
Rates = tuple[float, int, float, int]

OP_INSERT: int
OP_MODIFY: int
OP_DELETE: int
OP_DEFAULT: int
OP_COUNTER: int
OP_METER: int
KEY_EXACT: int
KEY_LPM: int
KEY_TERNARY: int
KEY_RANGE: int
KEY_OPTIONAL: int
KEY_ANY: int

class P4rtError(Exception):
    """args: (gRPC status code, one-line message, bmv2's TableOperationErrorCode)."""

class TableWrite:
    """One table write; the switch checks the key (P4Runtime's rules, or bmv2's with
    p4runtime_rules=False) and sets the idle timeout in the same call (None: left as it is,
    0: never ages) and the controller's metadata (None: left as it is, b"": none)."""

    def __init__(
        self,
        kind: int,
        table: int,
        keys: list[Key] = ...,
        priority: int = 0,
        action: int | None = None,
        params: list[bytes] = ...,
        target: tuple[bool, int] | None = None,
        counter: tuple[int, int] | None = None,
        meter: Rates | None = None,
        idle_timeout_ns: int | None = None,
        metadata: bytes | None = None,
        p4runtime_rules: bool = True,
    ) -> None: ...

class WriteResult:
    """code: gRPC status (0 = OK); thrift_code: bmv2's code of the same error (0 = OK);
    handle: the entry's handle (-1: none)."""

    code: int
    thrift_code: int
    handle: int
    message: str

def p4rt_table_write(sw: Any, writes: list[TableWrite]) -> list[WriteResult]: ...
def p4rt_table_find(
    sw: Any, table: int, keys: list[Key], priority: int, p4runtime_rules: bool = True
) -> tuple[Any, ...] | None: ...
def p4rt_table_read(sw: Any, table: int, fields: list[Key] | None = None) -> list[tuple[Any, ...]]: ...
def __getattr__(name: str) -> Any: ...

# ---- bmv2's Thrift services (crates/py/src/thrift_*.rs) ----

class BmError(Exception):
    """args: (code, message); code is the service's error code in bmv2's IDL."""

MC_TABLE_FULL: int
MC_INVALID_MGID: int
MC_INVALID_MGRP_HANDLE: int
MC_INVALID_L1_HANDLE: int
MC_ERROR: int
MIRROR_SESSION_NOT_FOUND: int

def bm_mc_mgrp_create(sw: Any, mgid: int) -> int: ...
def bm_mc_mgrp_destroy(sw: Any, mgid: int) -> None: ...
def bm_mc_node_create(sw: Any, rid: int, ports: list[int]) -> int: ...
def bm_mc_node_update(sw: Any, handle: int, ports: list[int]) -> None: ...
def bm_mc_node_associate(sw: Any, mgid: int, handle: int) -> None: ...
def bm_mc_node_dissociate(sw: Any, mgid: int, handle: int) -> None: ...
def bm_mc_node_destroy(sw: Any, handle: int) -> None: ...
def bm_mc_entries(sw: Any) -> tuple[list[tuple[int, list[int]]], list[tuple[int, int, list[int]]]]:
    """(groups as (mgid, node handles), nodes as (handle, rid, ports))."""

class MirrorSession:
    @property
    def port(self) -> int | None: ...
    @property
    def mgid(self) -> int | None: ...
    @property
    def truncate(self) -> int | None: ...

def bm_mirror_session_set(sw: Any, session: int, port: int | None, mgid: int | None) -> None: ...
def bm_mirror_session(sw: Any, session: int) -> MirrorSession | None: ...
def bm_mirror_session_delete(sw: Any, session: int) -> None: ...
def bm_set_queue_depth(sw: Any, port: int | None, depth_pkts: int) -> None: ...
def bm_set_queue_rate(sw: Any, port: int | None, rate_pps: int) -> None: ...
def bm_table_num_entries(sw: Any, table: int) -> int: ...

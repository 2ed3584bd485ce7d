# The Rust extension (crates/py), built by maturin: every name it exports, grouped by the Rust
# file that registers it. tests/test_native_stub.py checks this list against the built module.
# Arguments PyO3 reads as a Rust Vec accept any sequence (tuples too); results are lists.
import builtins
import os
from collections.abc import Sequence
from typing import TypeAlias

# ---- shared shapes (not exported) ----

# a key field written: (position in the table's key, KEY_* kind, value or low bound, mask or high
# bound, prefix length)
_Key: TypeAlias = tuple[int, int, bytes, bytes, int]
# a key field read back, in key order: (KEY_* kind, value or low bound, mask or high bound,
# prefix length)
_OutKey: TypeAlias = tuple[int, bytes, bytes, int]
# a meter's (cir, cburst, pir, pburst), rates per second
_Rates: TypeAlias = tuple[float, int, float, int]
# a member or group of an action profile: (is a group, handle)
_Target: TypeAlias = tuple[bool, int]
_Path: TypeAlias = str | os.PathLike[str]

# ---- entry_read.rs ----

class EntryRead:
    """A table entry as read: keys (kind, a, b, prefix length), action index and parameters,
    direct counter and meter rates (None: no meter set), the member or group of an indirect
    entry (None: a direct action), the controller's metadata."""

    @property
    def handle(self) -> int: ...
    @property
    def keys(self) -> list[_OutKey]: ...
    @property
    def action(self) -> int: ...
    @property
    def params(self) -> list[builtins.bytes]: ...
    @property
    def priority(self) -> int: ...
    @property
    def packets(self) -> int: ...
    @property
    def bytes(self) -> int: ...
    @property
    def meter(self) -> _Rates | None: ...
    @property
    def target(self) -> _Target | None: ...
    @property
    def metadata(self) -> builtins.bytes: ...

# ---- codes.rs ----

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
GROUP_CREATE: int
GROUP_DELETE: int
GROUP_SET: int
GROUP_ADD_MEMBER: int
GROUP_REMOVE_MEMBER: int
VSET_ADD: int
VSET_REMOVE: int
VSET_CLEAR: int

# ---- sim_bindings.rs ----

def simulate_toml(toml_text: str, progress: bool = False) -> str:
    """The scenario's result as JSON text; ValueError (one line) on a bad scenario."""

# ---- switch_bindings.rs ----

class Switch:
    """A running switch: on network interfaces, or on pcap files with `use_files_wait_s`."""

    def __init__(
        self,
        ports: Sequence[tuple[int, str, float | None]],
        rate_bps: float = 10e9,
        scheduler: str = "strict",
        queues: int = 8,
        depth_pkts: int = 64,
        buffer_bytes: int | None = None,
        pcap_dir: _Path | None = None,
        cpu_port: int | None = None,
        batch_ns: int = ...,
        drop: str = "tail",
        use_files_wait_s: int | None = None,
        rx_mode: str = "packet",
        poll_ns: int = 0,
        tm_model: str = "lanes",
        wake_top_class: bool = False,
        reply_poll_ns: int = ...,
        wake_after_turn: bool = True,
    ) -> None: ...
    def load_program(self, json_text: str) -> None: ...
    def set_trace_log(self, level: str, console: bool = False, file: _Path | None = None) -> None: ...
    def has_program(self) -> bool: ...
    def command(self, line: str) -> str: ...
    def command_answer(self, line: str) -> tuple[str, int | None]:
        """(output, handle of the entry, member, group or node created, or None)."""
    def wait_packet_ins(self, timeout_ms: int) -> list[bytes]: ...
    def wait_digests(self, timeout_ms: int) -> list[tuple[int, list[bytes]]]:
        """(learn list index, field values) per digest."""
    def inject(self, frame: Sequence[int]) -> None:
        """A frame (bytes) in on the CPU port; ValueError if there is none."""
    def start_ports(self) -> None: ...
    def is_running(self) -> bool: ...
    def stop(self) -> None: ...
    def stats_json(self) -> str: ...

def parse_rate_bps(text: str) -> float: ...
def default_burst_bytes(rate_bytes_per_s: float) -> int: ...
def delay_bucket_lower(i: int) -> int | None: ...

# ---- fabric_bindings.rs (JSON text in and out; ValueError with one line on error) ----

def fabric_gen(spec: str, out: str | None = None) -> str: ...
def fabric_route(net: str, engine: str, out: str, opts: str = "{}") -> str: ...
def fabric_check(net: str, dump: str) -> str: ...
def fabric_balance(net: str, dump: str) -> str: ...
def fabric_diff(old: str, new: str) -> str: ...
def fabric_eval(net: str, dump: str, opts: str) -> str: ...
def fabric_normalize(net: str, out: str, lids_from: str | None = None) -> str: ...
def fabric_migrate(net: str, dump: str, opts: str) -> str: ...
def fabric_order_study(net: str, opts: str) -> str: ...
def fabric_migsim(spec: str, opts: str) -> str: ...
def fabric_paths_modified(net: str, opts: str) -> str: ...
def fabric_fail(net: str, opts: str) -> str: ...
def fabric_phases(net: str, old: str, new: str, dir: str) -> str: ...
def fabric_guid_files(net: str, dir: str, io: Sequence[str]) -> str: ...
def fabric_slurm(net: str, topology: str | None = None, order: str | None = None) -> str: ...
def fabric_sa_storm(opts: str) -> str: ...
def fabric_check_vl(
    net: str, dump: str, path_sl: str, sl2vl: Sequence[int], sl2vl_dump: str | None = None
) -> str: ...

# ---- idle_bindings.rs ----

def p4rt_entry_ttl(sw: Switch, table: int, handle: int, ttl_ns: int | None) -> None: ...
def p4rt_entry_life(sw: Switch, table: int, handle: int) -> tuple[int, int | None] | None:
    """(ns since the last hit, timeout ns or None); None if the table keeps no hit times."""

def p4rt_take_idle(sw: Switch) -> list[tuple[int, int]]: ...

# ---- p4rt_bindings.rs ----

class P4rtError(Exception):
    """args: (gRPC status code, one-line message, bmv2's TableOperationErrorCode)."""

class P4rtProgram:
    """A program compiled and checked but not yet running."""

    def names_json(self) -> str: ...

def p4rt_compile(json_text: str) -> P4rtProgram: ...
def p4rt_commit(sw: Switch, staged: P4rtProgram) -> None: ...
def p4rt_reconcile(sw: Switch, staged: P4rtProgram) -> None: ...
def p4rt_table_default(sw: Switch, table: int) -> tuple[int, list[bytes]] | None: ...
def p4rt_table_clear(sw: Switch, table: int) -> None: ...
def p4rt_counter_read(sw: Switch, name: str, index: int | None = None) -> list[tuple[int, int, int]]:
    """[(index, packets, bytes)]"""

def p4rt_counter_write(sw: Switch, name: str, index: int | None, packets: int, bytes: int) -> None: ...
def p4rt_register_read(sw: Switch, name: str, index: int | None = None) -> list[tuple[int, int]]: ...
def p4rt_register_write(sw: Switch, name: str, index: int | None, value: int) -> None: ...
def p4rt_meter_read(sw: Switch, name: str, index: int | None = None) -> list[tuple[int, _Rates | None]]: ...
def p4rt_meter_write(sw: Switch, name: str, index: int | None, rates_: _Rates | None) -> None: ...

# ---- pre_bindings.rs ----

def p4rt_clone_session_write(sw: Switch, op: int, session: int, port: int, truncate: int) -> None: ...
def p4rt_clone_sessions(sw: Switch) -> list[tuple[int, int, int]]:
    """[(session, port, truncation length or 0)]"""

def p4rt_clone_sessions_clear(sw: Switch) -> None: ...
def p4rt_multicast_group_write(
    sw: Switch, op: int, mgid: int, replicas: Sequence[tuple[int, int]]
) -> None: ...
def p4rt_multicast_groups(sw: Switch) -> list[tuple[int, list[tuple[int, int]]]]:
    """[(group id, [(port, rid)])]"""

def p4rt_multicast_clear(sw: Switch) -> None: ...

# ---- profile_bindings.rs ----

def ap_member_write(
    sw: Switch, profile: int, op: int, handle: int | None, action: int = 0, params: Sequence[bytes] = ...
) -> int: ...
def ap_group_write(
    sw: Switch,
    profile: int,
    op: int,
    handle: int | None,
    members: Sequence[tuple[int, int]] = ...,
    max_size: int = 0,
) -> int: ...
def ap_members(sw: Switch, profile: int) -> list[tuple[int, int, list[bytes]]]:
    """[(handle, action index, params)]"""

def ap_groups(sw: Switch, profile: int) -> list[tuple[int, list[tuple[int, int]], int]]:
    """[(handle, [(member, weight)], max_size)]"""

def ap_default_target(sw: Switch, table: int) -> _Target | None: ...

# ---- consolidate_bindings.rs ----

def consolidate_pack_delay(
    series: bytes,
    vms: int,
    days: int,
    samples: int,
    order: Sequence[int],
    means: Sequence[float],
    dt_min: float,
    packings: Sequence[tuple[float, float, str]],
) -> list[list[int]]: ...

# ---- thrift_bindings.rs ----

def bm_entry(sw: Switch, table: int, handle: int) -> EntryRead: ...
def bm_entry_modify(sw: Switch, table: int, handle: int, action: int, params: Sequence[bytes]) -> None: ...
def bm_entry_delete(sw: Switch, table: int, handle: int) -> None: ...
def bm_table_num_entries(sw: Switch, table: int) -> int: ...
def bm_direct_counter(
    sw: Switch, table: int, handle: int, value: tuple[int, int] | None = None
) -> tuple[int, int]: ...
def bm_direct_counters_reset(sw: Switch, table: int) -> None: ...
def bm_direct_meter_set(sw: Switch, table: int, handle: int, rates_: _Rates | None) -> None: ...
def bm_direct_meter_get(sw: Switch, table: int, handle: int) -> _Rates | None: ...

# ---- thrift_errors.rs ----

class BmError(Exception):
    """args: (code, message); code is the service's error code in bmv2's IDL."""

MC_TABLE_FULL: int
MC_INVALID_MGID: int
MC_INVALID_MGRP_HANDLE: int
MC_INVALID_L1_HANDLE: int
MC_ERROR: int
MIRROR_SESSION_NOT_FOUND: int

# ---- thrift_pre_bindings.rs ----

def bm_mc_mgrp_create(sw: Switch, mgid: int) -> int: ...
def bm_mc_mgrp_destroy(sw: Switch, mgid: int) -> None: ...
def bm_mc_node_create(sw: Switch, rid: int, ports: Sequence[int]) -> int: ...
def bm_mc_node_update(sw: Switch, handle: int, ports: Sequence[int]) -> None: ...
def bm_mc_node_associate(sw: Switch, mgid: int, handle: int) -> None: ...
def bm_mc_node_dissociate(sw: Switch, mgid: int, handle: int) -> None: ...
def bm_mc_node_destroy(sw: Switch, handle: int) -> None: ...
def bm_mc_entries(sw: Switch) -> tuple[list[tuple[int, list[int]]], list[tuple[int, int, list[int]]]]:
    """(groups as (mgid, node handles), nodes as (handle, rid, ports))."""

# ---- thrift_sswitch_bindings.rs ----

class MirrorSession:
    @property
    def port(self) -> int | None: ...
    @property
    def mgid(self) -> int | None: ...
    @property
    def truncate(self) -> int | None: ...

def bm_mirror_session_set(sw: Switch, session: int, port: int | None, mgid: int | None) -> None: ...
def bm_mirror_session(sw: Switch, session: int) -> MirrorSession | None: ...
def bm_mirror_session_delete(sw: Switch, session: int) -> None: ...
def bm_set_queue_depth(sw: Switch, port: int | None, depth_pkts: int) -> None: ...
def bm_set_queue_rate(sw: Switch, port: int | None, rate_pps: int) -> None: ...

# ---- table_write_bindings.rs ----

class TableWrite:
    """One table write; the switch checks the key (P4Runtime's rules, or bmv2's with
    p4runtime_rules=False) and sets the idle timeout in the same call (None: left as it is,
    0: never ages) and the controller's metadata (None: left as it is, b"": none)."""

    def __init__(
        self,
        kind: int,
        table: int,
        keys: Sequence[_Key] = ...,
        priority: int = 0,
        action: int | None = None,
        params: Sequence[bytes] = ...,
        target: _Target | None = None,
        counter: tuple[int, int] | None = None,
        meter: _Rates | None = None,
        idle_timeout_ns: int | None = None,
        metadata: bytes | None = None,
        p4runtime_rules: bool = True,
    ) -> None: ...

class WriteResult:
    """code: gRPC status (0 = OK); thrift_code: bmv2's code of the same error (0 = OK);
    handle: the entry's handle (-1: none)."""

    @property
    def code(self) -> int: ...
    @property
    def thrift_code(self) -> int: ...
    @property
    def handle(self) -> int: ...
    @property
    def message(self) -> str: ...

def p4rt_table_write(sw: Switch, writes: Sequence[TableWrite]) -> list[WriteResult]: ...
def p4rt_table_find(
    sw: Switch, table: int, keys: Sequence[_Key], priority: int, p4runtime_rules: bool = True
) -> EntryRead | None: ...
def p4rt_table_read(sw: Switch, table: int, fields: Sequence[_Key] | None = None) -> list[EntryRead]: ...

# ---- vset_bindings.rs ----

def vset_write(
    sw: Switch, name: str, op: int, value: bytes | None = None, mask: bytes | None = None
) -> None: ...
def vset_members(sw: Switch, name: str) -> list[tuple[bytes, bytes]]:
    """[(value, mask)], big-endian."""

# ---- p4c_bindings.rs ----

def p4c_compile(
    path: _Path, include_dirs: Sequence[_Path] = ..., defines: Sequence[tuple[str, str]] = ...
) -> tuple[str, str]:
    """(bmv2 JSON, P4Info text); ValueError with the one-line diagnostic on a compile error."""

# ---- lib.rs ----

__version__: str

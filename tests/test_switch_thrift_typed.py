"""bmv2's Thrift handlers for multicast, mirror sessions and queue settings call the switch
through typed bindings: a switch in this process with pcap-file ports (bmv2's --use-files), the
handlers called as the Thrift server calls them, and the frames the switch writes checked byte
for byte. What a text answer could have hidden: a node on many ports, a session read back with
both its port and its group, a refused update that must leave the session as it was, and
bmv2's own error code for each refusal."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from bm_runtime.simple_pre_lag import SimplePreLAG
from bm_runtime.simple_pre_lag.ttypes import InvalidMcOperation, McOperationErrorCode
from bm_runtime.standard import Standard
from lanes import _native
from lanes.switch.thrift.context import RunningConfig, SwitchContext
from lanes.switch.thrift.pre import PreHandler
from lanes.switch.thrift.server import guarded
from lanes.switch.thrift.sswitch import SimpleSwitchHandler
from lanes.switch.thrift.standard import StandardHandler
from pcap_records import pcap_bytes, read_frames
from sswitch_runtime import SimpleSwitch
from sswitch_runtime.ttypes import (
    InvalidMirroringOperation,
    MirroringOperationErrorCode,
    MirroringSessionConfig,
)
from test_switch_clone import clone_program
from test_switch_multicast import multicast_program

MC = McOperationErrorCode
REPLICATION, I2E_CLONE = 5, 1  # bmv2's instance_type of a multicast copy and of an ingress clone
FRAME = bytes.fromhex("ffffffffffff0200000000010800") + bytes(range(46))


def port_map(ports: list[int]) -> str:
    """bmv2's port map string: the last character is port 0."""
    return "".join("1" if p in ports else "0" for p in reversed(range(max(ports) + 1)))


class Handlers:
    def __init__(self, ctx: SwitchContext) -> None:
        self.pre: Any = guarded(PreHandler(ctx), SimplePreLAG)
        self.sswitch: Any = guarded(SimpleSwitchHandler(ctx), SimpleSwitch)
        self.standard: Any = guarded(StandardHandler(ctx), Standard)


@contextmanager
def file_switch(tmp: Path, program: bytes, ports: list[int]) -> Iterator[tuple[Any, Handlers]]:
    """A switch whose port N reads pN_in.pcap (FRAME on port 1, nothing elsewhere) and writes
    pN_out.pcap; its ports start only when the caller calls `sw.start_ports()`."""
    for n in ports:
        (tmp / f"p{n}_in.pcap").write_bytes(pcap_bytes([(1.0, FRAME)] if n == 1 else []))
    sw = _native.Switch([(n, str(tmp / f"p{n}"), None) for n in ports], use_files_wait_s=0)
    try:
        sw.load_program(program.decode())
        yield sw, Handlers(SwitchContext(sw=sw, config=RunningConfig(program.decode())))
    finally:
        sw.stop()


def outputs(sw: Any, tmp: Path, ports: list[int], total: int) -> dict[int, list[bytes]]:
    """The frames each port wrote once `total` have been written (or the switch stops)."""
    sw.start_ports()
    deadline = time.monotonic() + 20
    while True:
        out = {n: read_frames(tmp / f"p{n}_out.pcap") for n in ports}
        if sum(map(len, out.values())) >= total or time.monotonic() > deadline:
            return {n: f for n, f in out.items() if f}


def mac(value: int) -> bytes:
    return value.to_bytes(6, "big")


def mc_code(call, *args) -> int:
    with pytest.raises(InvalidMcOperation) as e:
        call(*args)
    return e.value.code


def test_the_bindings_codes_are_bmv2s() -> None:
    assert (_native.MC_TABLE_FULL, _native.MC_INVALID_MGID, _native.MC_INVALID_MGRP_HANDLE) == (
        MC.TABLE_FULL,
        MC.INVALID_MGID,
        MC.INVALID_MGRP_HANDLE,
    )
    assert (_native.MC_INVALID_L1_HANDLE, _native.MC_ERROR) == (MC.INVALID_L1_HANDLE, MC.ERROR)
    assert _native.MIRROR_SESSION_NOT_FOUND == MirroringOperationErrorCode.SESSION_NOT_FOUND


def test_a_node_on_many_ports_copies_to_each_with_its_rid(tmp_path: Path) -> None:
    ports = list(range(1, 25))
    wide, narrow = list(range(2, 25)), [3, 24]
    with file_switch(tmp_path, multicast_program(), ports) as (sw, h):
        assert h.pre.bm_mc_mgrp_create(0, 1) == 1
        a = h.pre.bm_mc_node_create(0, 0x0123, port_map(wide), "")
        b = h.pre.bm_mc_node_create(0, 7, port_map(narrow), None)
        h.pre.bm_mc_node_associate(0, 1, a)
        h.pre.bm_mc_node_associate(0, 1, b)
        assert json.loads(h.pre.bm_mc_get_entries(0)) == {
            "mgrps": [{"id": 1, "l1_handles": [a, b]}],
            "l1_handles": [
                {"handle": a, "rid": 0x0123, "l2_handle": a},
                {"handle": b, "rid": 7, "l2_handle": b},
            ],
            "l2_handles": [
                {"handle": a, "ports": wide, "lags": []},
                {"handle": b, "ports": narrow, "lags": []},
            ],
            "lags": [],
        }
        out = outputs(sw, tmp_path, ports, len(wide) + len(narrow))
    # egress writes instance_type into the destination MAC and egress_rid into the source MAC
    copy = {rid: mac(REPLICATION) + mac(rid) + FRAME[12:] for rid in (0x0123, 7)}
    assert out == {p: [copy[7], copy[0x0123]] if p in narrow else [copy[0x0123]] for p in wide}


def test_multicast_refusals_carry_bmv2s_codes(tmp_path: Path) -> None:
    with file_switch(tmp_path, multicast_program(), [1, 2]) as (_sw, h):
        pre = h.pre
        pre.bm_mc_mgrp_create(0, 1)
        pre.bm_mc_mgrp_create(0, 2)
        n = pre.bm_mc_node_create(0, 1, "10", "")
        pre.bm_mc_node_associate(0, 1, n)
        # bmv2's simple_pre answers plain ERROR here (a message naming the node is not
        # INVALID_L1_HANDLE: the node exists)
        assert mc_code(pre.bm_mc_node_associate, 0, 2, n) == MC.ERROR
        assert mc_code(pre.bm_mc_node_dissociate, 0, 2, n) == MC.ERROR
        assert mc_code(pre.bm_mc_node_associate, 0, 1, 99) == MC.INVALID_L1_HANDLE
        assert mc_code(pre.bm_mc_node_update, 0, -1, "1", "") == MC.INVALID_L1_HANDLE
        assert mc_code(pre.bm_mc_node_destroy, 0, 99) == MC.INVALID_L1_HANDLE
        assert mc_code(pre.bm_mc_node_associate, 0, 9, n) == MC.INVALID_MGRP_HANDLE
        assert mc_code(pre.bm_mc_mgrp_destroy, 0, -3) == MC.INVALID_MGRP_HANDLE
        for mgid in (0, 65536, 1, -1):  # out of range, or group 1 again
            assert mc_code(pre.bm_mc_mgrp_create, 0, mgid) == MC.INVALID_MGID
        assert mc_code(pre.bm_mc_node_create, 0, 1, port_map([511]), "") == MC.ERROR
        assert mc_code(pre.bm_mc_node_create, 0, 70000, "1", "") == MC.ERROR
        assert mc_code(pre.bm_mc_node_create, 0, 1, "12", "") == MC.ERROR
        assert mc_code(pre.bm_mc_node_create, 0, 1, "1", "1") == MC.ERROR  # a LAG
        # nothing above changed the engine
        assert json.loads(pre.bm_mc_get_entries(0))["l2_handles"] == [{"handle": n, "ports": [1], "lags": []}]
        for _ in range(16383):
            pre.bm_mc_node_create(0, 0, "1", "")
        assert mc_code(pre.bm_mc_node_create, 0, 0, "1", "") == MC.TABLE_FULL


def test_a_session_to_a_port_and_a_group_reads_back_whole_and_copies_to_both(tmp_path: Path) -> None:
    ports = [1, 2, 3, 4]
    with file_switch(tmp_path, clone_program(), ports) as (sw, h):
        ss, pre = h.sswitch, h.pre
        pre.bm_mc_mgrp_create(0, 7)
        pre.bm_mc_node_associate(0, 7, pre.bm_mc_node_create(0, 9, port_map([3, 4]), ""))
        ss.mirroring_session_add(5, MirroringSessionConfig(port=2, mgid=7))
        assert ss.mirroring_session_get(5) == MirroringSessionConfig(port=2, mgid=7)
        assert ss.mirroring_mapping_get_egress_port(5) == 2
        # a refused update leaves the session as it was (no port 9; group out of range)
        for bad in (MirroringSessionConfig(port=9), MirroringSessionConfig(port=3, mgid=70000)):
            with pytest.raises(InvalidMirroringOperation) as e:
                ss.mirroring_session_add(5, bad)
            assert e.value.code == MirroringOperationErrorCode.SESSION_NOT_FOUND
        assert ss.mirroring_session_get(5) == MirroringSessionConfig(port=2, mgid=7)
        for session in (40000, -1):
            with pytest.raises(InvalidMirroringOperation):
                ss.mirroring_session_add(session, MirroringSessionConfig(port=2))
        with pytest.raises(InvalidMirroringOperation):
            ss.mirroring_session_get(6)
        out = outputs(sw, tmp_path, ports, 3)
    # the clone's egress writes instance_type into the source MAC and cuts the copy to 20 bytes
    clone = FRAME[:6] + mac(I2E_CLONE) + FRAME[12:20]
    assert out == {2: [clone], 3: [clone], 4: [clone]}


def test_mirror_session_delete_and_the_older_mapping_calls(tmp_path: Path) -> None:
    with file_switch(tmp_path, clone_program(), [1, 2]) as (_sw, h):
        ss = h.sswitch
        assert ss.mirroring_mapping_add(3, 2) == 0
        assert ss.mirroring_session_get(3) == MirroringSessionConfig(port=2, mgid=None)
        assert ss.mirroring_mapping_add(3, 8) == 1  # no port 8
        assert ss.mirroring_mapping_get_egress_port(3) == 2
        ss.mirroring_session_add(4, MirroringSessionConfig(mgid=1))
        assert ss.mirroring_mapping_get_egress_port(4) == -1  # a group, no port
        ss.mirroring_session_delete(4)
        with pytest.raises(InvalidMirroringOperation):
            ss.mirroring_session_delete(4)
        assert ss.mirroring_mapping_delete(3) == 0
        assert ss.mirroring_mapping_delete(3) == 1
        assert ss.mirroring_mapping_get_egress_port(3) == -1


def test_queue_depth_and_rate_in_bmv2s_units(tmp_path: Path) -> None:
    with file_switch(tmp_path, clone_program(), [1, 2]) as (sw, h):
        ss = h.sswitch
        assert ss.set_egress_queue_depth(2, 17) == 0
        assert ss.set_all_egress_queue_rates(1000) == 0  # packets/s of 1500 bytes
        assert ss.set_egress_queue_rate(1, 2000) == 0
        for refused in (
            lambda: ss.set_egress_queue_depth(9, 5),  # no port 9
            lambda: ss.set_egress_queue_depth(2, 0),
            lambda: ss.set_all_egress_queue_depths(-4),
            lambda: ss.set_egress_queue_rate(2, 0),
            lambda: ss.set_egress_queue_rate(-1, 10),
        ):
            assert refused() == 1
        stats = json.loads(sw.stats_json())
    queues = {p["port"]: p["queues"] for p in stats["ports"]}
    assert {q["limit_pkts"] for q in queues[2]} == {17}
    assert {q["limit_pkts"] for q in queues[1]} != {17}
    assert {q["rate_Bps"] for q in queues[2]} == {1_500_000}
    assert {q["rate_Bps"] for q in queues[1]} == {3_000_000}


def test_table_num_entries_counts_without_reading(tmp_path: Path) -> None:
    from bm_runtime.standard.ttypes import BmMatchParam, BmMatchParamExact, BmMatchParamType

    program = (Path(__file__).parent.parent / "p4" / "p4rt_test.json").read_bytes()
    with file_switch(tmp_path, program, [1]) as (_sw, h):
        std = h.standard
        assert std.bm_mt_get_num_entries(0, "MyIngress.l2_fwd") == 0
        for i in range(3):
            key = [BmMatchParam(type=BmMatchParamType.EXACT, exact=BmMatchParamExact(mac(i)))]
            std.bm_mt_add_entry(0, "MyIngress.l2_fwd", key, "MyIngress.set_port", [b"\x00\x01"], None)
        assert std.bm_mt_get_num_entries(0, "MyIngress.l2_fwd") == 3

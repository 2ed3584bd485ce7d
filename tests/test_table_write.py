"""The one typed table write through the bindings, on an in-process switch without ports
running p4/p4rt_test.json: each key rule answers with its P4Runtime code and message and bmv2's
Thrift code from one mapping, P4Runtime's rules refuse what bmv2's mask, and a whole batch is
applied in order with one result per write."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest
from bm_runtime.standard.ttypes import TableOperationErrorCode as E
from lanes import _native as n

PROGRAM = Path(__file__).resolve().parents[1] / "p4" / "p4rt_test.json"
ACL, L2, SET_PORT = 1, 2, 2  # the program's own indices (names_json)
C = grpc.StatusCode


@pytest.fixture(scope="module")
def sw():
    s = n.Switch([])
    prog = n.p4rt_compile(PROGRAM.read_text())
    tables = {t["name"]: t["index"] for t in json.loads(prog.names_json())["tables"]}
    assert (tables["MyIngress.acl"], tables["MyIngress.l2_fwd"]) == (ACL, L2)
    n.p4rt_commit(s, prog)
    return s


def l2(mac: int, kind: int = n.OP_INSERT, **kw) -> n.TableWrite:
    key = (0, n.KEY_EXACT, mac.to_bytes(7, "big"), b"", 0)  # a leading zero byte: still 48 bits
    return n.TableWrite(kind, L2, [key], action=SET_PORT, params=[b"\x01"], **kw)


def acl(value: bytes, mask: bytes, lo: bytes, hi: bytes, prio: int, **kw) -> n.TableWrite:
    keys = [(0, n.KEY_TERNARY, value, mask, 0), (1, n.KEY_RANGE, lo, hi, 0)]
    return n.TableWrite(n.OP_INSERT, ACL, keys, priority=prio, action=SET_PORT, params=[b"\x02"], **kw)


def outcome(sw, w: n.TableWrite) -> tuple[int, int, str]:
    (r,) = n.p4rt_table_write(sw, [w])
    return r.code, r.thrift_code, r.message


BAD_KEY = (C.INVALID_ARGUMENT.value[0], E.BAD_MATCH_KEY)


@pytest.mark.parametrize(
    ("write", "message"),
    [
        (lambda: l2(1 << 48), "value 01000000000000 does not fit in 48 bits"),
        (lambda: l2(5, priority=3), "has no ternary/range/optional field: priority must be 0"),
        (lambda: acl(b"\x08\x00", b"\xff\xff", b"\x01", b"\x03", 0), "needs a priority > 0"),
        (lambda: acl(b"\x08\x01", b"\xff\x00", b"\x01", b"\x03", 1), "value has bits set outside the mask"),
        (lambda: acl(b"\x08\x00", b"\xff\xff", b"\x05", b"\x03", 1), "low bound above high bound"),
        (
            lambda: n.TableWrite(n.OP_INSERT, L2, [], action=SET_PORT, params=[b"\x01"]),
            "exact match field missing",
        ),
        (
            lambda: n.TableWrite(
                n.OP_INSERT, L2, [(0, n.KEY_EXACT, b"\x01", b"", 0)] * 2, action=SET_PORT, params=[b"\x01"]
            ),
            "match field hdr.ethernet.dstAddr given twice",
        ),
    ],
)
def test_each_key_rule_has_one_answer_for_every_route(sw, write, message: str) -> None:
    code, thrift, msg = outcome(sw, write())
    assert (code, thrift) == BAD_KEY
    assert message in msg and "\n" not in msg


def test_p4runtime_rules_refuse_what_bmv2_rules_mask(sw) -> None:
    strict = acl(b"\x08\x01", b"\xff\x00", b"\x01", b"\x03", 7)
    assert outcome(sw, strict)[:2] == BAD_KEY
    lenient = acl(b"\x08\x01", b"\xff\x00", b"\x01", b"\x03", 7, p4runtime_rules=False)
    code, _, _ = outcome(sw, lenient)
    assert code == 0
    (e,) = [e for e in n.p4rt_table_read(sw, ACL) if e.priority == 7]
    assert e.keys[0][1:3] == (b"\x08\x00", b"\xff\x00")  # stored masked
    found = n.p4rt_table_find(
        sw,
        ACL,
        [(0, n.KEY_TERNARY, b"\x08\x00", b"\xff\x00", 0)] + [(1, n.KEY_RANGE, b"\x01", b"\x03", 0)],
        7,
    )
    assert found is not None and found.handle == e.handle


def test_a_batch_is_applied_in_order_with_one_result_each(sw) -> None:
    out = n.p4rt_table_write(sw, [l2(0x10), l2(0x10), l2(0x99, n.OP_DELETE), l2(0x10, n.OP_DELETE)])
    assert [(r.code, r.thrift_code) for r in out] == [
        (0, 0),
        (C.ALREADY_EXISTS.value[0], E.DUPLICATE_ENTRY),
        (C.NOT_FOUND.value[0], E.INVALID_HANDLE),
        (0, 0),
    ]
    assert out[0].handle >= 0 and out[3].handle == out[0].handle and out[1].handle == -1
    assert out[2].message == "no entry with this match key"


def test_an_idle_timeout_on_a_table_without_them_changes_nothing(sw) -> None:
    code, thrift, msg = outcome(sw, l2(0x20, idle_timeout_ns=1_000_000))
    assert (code, thrift) == (C.INVALID_ARGUMENT.value[0], E.AGEING_DISABLED)
    assert msg == "table MyIngress.l2_fwd does not support idle timeouts"
    assert n.p4rt_table_find(sw, L2, [(0, n.KEY_EXACT, b"\x20", b"", 0)], 0) is None


def test_errors_outside_a_write_carry_both_codes(sw) -> None:
    with pytest.raises(n.P4rtError) as e:
        n.bm_entry_delete(sw, L2, 12345)
    assert e.value.args == (C.NOT_FOUND.value[0], "no entry with handle 12345", E.INVALID_HANDLE)

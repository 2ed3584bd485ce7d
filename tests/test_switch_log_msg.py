"""v1model's `log_msg` in the switch's log, as bmv2 writes it: at `-L info` (and above) one line
at info level per call, without a packet's context, each `{}` replaced by the next value in
decimal; `-L info` writes none of the per-packet lines, `-L debug` writes both."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from lanes._native import p4c_compile
from pcap_records import HEADER, pcap_bytes, read_frames
from test_switch_use_files import SIMPLE_SWITCH, free_port, stop, wait_for

PROGRAM = r"""
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
struct headers { ethernet_t eth; }
struct metadata { bit<8> seen; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        log_msg("parsed a frame");
        transition accept;
    }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action forward(bit<9> port) {
        sm.egress_spec = port;
        log_msg("to port {} for type {}", {port, hdr.eth.etherType});
    }
    apply {
        forward(2);
        if (hdr.eth.dst == 0xffffffffffff) {
            log_msg("broadcast \{not a value\} from {}", {hdr.eth.src});
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""

INFO_LINE = re.compile(r"\[\d\d:\d\d:\d\d\.\d{3}\] \[bmv2\] \[I\] \[thread \d+\] (.*)")
PACKET_LINE = re.compile(
    r"\[\d\d:\d\d:\d\d\.\d{3}\] \[bmv2\] \[[DT]\] \[thread \d+\] \[\d+\.0\] \[cxt 0\] (.*)"
)


def frame(dst: int, src: int) -> bytes:
    return dst.to_bytes(6, "big") + src.to_bytes(6, "big") + (0x0800).to_bytes(2, "big") + bytes(46)


def run(tmp_path: Path, level: str) -> list[str]:
    """The switch's log lines after two frames: one broadcast, one unicast."""
    src = tmp_path / "log_msg.p4"
    src.write_text(PROGRAM)
    json_text, _ = p4c_compile(str(src), [], [])
    (tmp_path / "log_msg.json").write_text(json_text)
    frames = [(1.0, frame(0xFFFFFFFFFFFF, 0x0A0B0C)), (1.1, frame(0x02, 0x01))]
    (tmp_path / "s1-eth1_in.pcap").write_bytes(pcap_bytes(frames))
    (tmp_path / "s1-eth2_in.pcap").write_bytes(HEADER)
    cmd = [SIMPLE_SWITCH, "--use-files", "0", "--log-file", "switch.log", "--log-flush",
           "--thrift-port", str(free_port()), "-i 1@s1-eth1", "-i 2@s1-eth2", "-L", level, "log_msg.json"]  # fmt: skip
    sw = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out2, log = tmp_path / "s1-eth2_out.pcap", tmp_path / "switch.log.txt"
    try:
        wait_for("two frames out of port 2", lambda: len(read_frames(out2)) >= 2, sw)
        wait_for("five log_msg lines", lambda: log.exists() and log.read_text().count("] [I] [") >= 5, sw)
    finally:
        stop(sw)
    return log.read_text().splitlines()


def messages(lines: list[str], pattern: re.Pattern) -> list[str]:
    return [m.group(1) for m in map(pattern.match, lines) if m]


EXPECTED = [
    "parsed a frame",
    "to port 2 for type 2048",
    # 0x0a0b0c in decimal; the escaped braces are text
    "broadcast {not a value} from 658188",
    "parsed a frame",
    "to port 2 for type 2048",
]


def test_info_level_writes_the_programs_messages_only(tmp_path: Path) -> None:
    lines = run(tmp_path, "info")
    assert messages(lines, INFO_LINE) == EXPECTED
    assert messages(lines, PACKET_LINE) == []


def test_debug_level_writes_them_among_the_packet_lines(tmp_path: Path) -> None:
    lines = run(tmp_path, "debug")
    assert messages(lines, INFO_LINE) == EXPECTED
    packet_lines = messages(lines, PACKET_LINE)
    assert "Processing packet received on port 1" in packet_lines
    # the action's message comes after the table that ran it and before the egress port
    order = [m for line in lines for m in [INFO_LINE.match(line), PACKET_LINE.match(line)] if m]
    texts = [m.group(1) for m in order]
    assert texts.index("to port 2 for type 2048") < texts.index("Egress port is 2")

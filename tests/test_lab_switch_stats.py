"""The lab's typed read of a switch's statistics (lanes.lab.switch_stats): a real `stats_json`
answer from a running switch (pcap-file ports, so no root) after known frames went through, its
`reset` clearing the delay histograms only, and a malformed answer refused with one line."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from lanes.lab.switch_stats import parse_stats, read_stats
from lanes.switch.command_client import CommandClient
from pcap_records import HEADER, pcap_bytes, read_frames
from test_switch_use_files import ENTRIES, RUNT, frame, free_port, start, stop, wait_for


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def test_a_real_answer_after_known_frames(tmp_path: Path) -> None:
    (tmp_path / "entries.txt").write_text("\n".join(ENTRIES) + "\n")
    to2, dropped = frame(2, 0xAA), frame(3, 0xBB)  # l2_fwd: to port 2; to the drop action
    (tmp_path / "s1-eth1_in.pcap").write_bytes(pcap_bytes([(1.0, to2), (1.1, dropped), (1.2, RUNT)]))
    (tmp_path / "s1-eth2_in.pcap").write_bytes(HEADER)
    thrift = free_port()
    sw = start(tmp_path, thrift, "--commands", "entries.txt")
    out2 = tmp_path / "s1-eth2_out.pcap"
    try:
        wait_for("two frames out of port 2", lambda: len(read_frames(out2)) >= 2, sw)
        wait_for("the command port", lambda: listening(thrift), sw)
        ctl = CommandClient(thrift)
        try:
            first = read_stats(ctl, reset=True)
            second = read_stats(ctl)
        finally:
            ctl.close()
    finally:
        stop(sw)
    ports = {p.port: p for p in first.ports}
    assert sorted(ports) == [1, 2]
    assert (ports[1].rx_pkts, ports[1].tx_pkts, ports[2].rx_pkts, ports[2].tx_pkts) == (3, 0, 0, 2)
    assert ports[2].tx_bytes == len(to2) + len(RUNT)
    assert sum(q.enq_pkts for q in ports[2].queues) == sum(q.deq_pkts for q in ports[2].queues) == 2
    assert all(q.depth_pkts == 0 and q.drops == 0 for q in first.queues())
    delayed = [q for q in first.queues() if q.delay.pkts]
    assert [(q.port, q.delay.pkts) for q in delayed] == [(2, 2)]
    d = delayed[0].delay
    assert sum(d.buckets.values()) == 2 and d.max_ns <= d.sum_ns
    assert first.drops["ingress"] == 1 and first.drops["queue_full"] == 0
    # the monitor's rows carry the same numbers
    assert delayed[0].delay_row()["pkts"] == 2 and delayed[0].depth_row()["enq_pkts"] == 2
    # reset cleared the histograms, not the counters
    assert [q for q in second.queues() if q.delay.pkts] == []
    assert {p.port: p.tx_pkts for p in second.ports} == {1: 0, 2: 2}


def test_the_event_loops_counters_are_read_and_checked() -> None:
    doc = {"ports": [], "drops": {}, "event_loop": {"turns": 12, "turns_sent": 9, "looks": 0}}
    assert parse_stats(json.dumps(doc)).loop == {"turns": 12, "turns_sent": 9, "looks": 0}
    # an older switch without them: none
    assert parse_stats('{"ports": [], "drops": {}}').loop == {}
    port = {"port": 3, "rx_pkts": 1, "rx_bytes": 1, "rx_backlog_max": 0, "tx_pkts": 0, "tx_bytes": 0,
            "tx_errors": 0, "queues": [], "rx_wakeups": 5}  # fmt: skip
    assert parse_stats(json.dumps({"ports": [port], "drops": {}})).wakeups_by_port() == {"3": 5}
    doc["event_loop"] = {"turns": -1.5}
    with pytest.raises(ValueError, match=r"^stats_json: event_loop: 'turns' is not an integer: -1.5$"):
        parse_stats(json.dumps(doc))


def test_a_malformed_answer_is_one_line_naming_the_field() -> None:
    port = {"port": 3, "rx_pkts": 1, "rx_bytes": 1, "rx_backlog_max": 0, "tx_pkts": "x", "tx_bytes": 0,
            "tx_errors": 0, "queues": []}  # fmt: skip
    with pytest.raises(ValueError, match=r"^stats_json: port 3: 'tx_pkts' is not an integer: 'x'$"):
        parse_stats(json.dumps({"ports": [port], "drops": {}}))
    with pytest.raises(ValueError, match="^stats_json: not JSON"):
        parse_stats("port rx_pkts rx_backlog_max")
    with pytest.raises(ValueError, match="^stats_json: ports is not a list$"):
        parse_stats('{"drops": {}}')

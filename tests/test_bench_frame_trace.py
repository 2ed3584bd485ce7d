"""bench/frame_trace.py: a switch's residence is the time between a frame's arrivals at two
switches on its path, read from tcpdump's lines as Debian 12's tcpdump 4.99 prints them."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import frame_trace  # noqa: E402

REQ = "IP 10.0.1.1.35532 > 10.0.3.7.49511: Flags [P.], seq 546:559, ack 504, win 83, options [nop], length 13"
ACK = "IP 10.0.1.1.35532 > 10.0.3.7.49511: Flags [.], ack 517, win 83, options [nop], length 0"
OTHER = "IP 10.0.1.1.40000 > 10.0.3.7.49511: Flags [P.], seq 546:559, ack 504, win 83, options [nop], length 13"
LINES = [
    f"100.000100 s1-eth1 P   {REQ}",
    f"100.000100 s1-eth1 P   {ACK}",  # no payload: not a message
    f"100.000600 s5-eth1 P   {REQ}",
    f"100.000650 s7-eth1 P   {REQ}",
    f"100.002000 s1-eth1 P   {REQ}",  # a retransmission: the first sight counts
    f"100.000200 s1-eth1 P   {OTHER}",  # another connection with the same numbers is another frame
    f"100.000300 s5-eth1 P   {OTHER}",
    f"100.000400 s7-eth1 P   {OTHER}",
    "tcpdump: listening on any, link-type LINUX_SLL2",
]


def test_a_frame_is_followed_from_switch_to_switch() -> None:
    recs = frame_trace.frames(LINES)
    assert len(recs) == 2
    assert recs[0]["arrivals"] == {"s1-eth1": 100.0001, "s5-eth1": 100.0006, "s7-eth1": 100.00065}
    held = frame_trace.residences(recs, "10.0.1.1", ["s1-eth1", "s5-eth1", "s7-eth1"], since=0.0)
    assert [[round(x * 1e6) for x in hop] for hop in held] == [[500, 100], [50, 100]]


def test_frames_before_the_phase_or_off_the_path_are_left_out() -> None:
    recs = frame_trace.frames(LINES)
    late = frame_trace.residences(recs, "10.0.1.1", ["s1-eth1", "s5-eth1"], since=100.00015)
    assert [[round(x * 1e6) for x in hop] for hop in late] == [[100]]  # only the other connection's
    assert frame_trace.residences(recs, "10.0.3.7", ["s1-eth1", "s5-eth1"], since=0.0) == [[]]
    assert frame_trace.residences(recs, "10.0.1.1", ["s1-eth1", "s6-eth1"], since=0.0) == [[]]


def test_digest_counts_frames_held_longer_than_a_frame_time() -> None:
    d = frame_trace.digest([0.0001, 0.0002, 0.0015, 0.0003], frame_us=1211.2)
    assert d["frames"] == 4 and d["p50_us"] == 250.0 and d["over_frame_pct"] == 25.0
    assert d["hist_25us"] == {100: 1, 200: 1, 300: 1, 1500: 1}
    assert frame_trace.digest([0.009], 1211.2)["hist_25us"] == {frame_trace.HIST_TOP_US: 1}
    assert frame_trace.digest([], 1211.2) == {"frames": 0}


def test_holds_are_binned_by_the_time_since_the_senders_previous_frame_left() -> None:
    # the first two arrive before any frame of theirs has left s1 (not binned); the first leaves
    # at 100.000600, and a third arrives 700 us later and is held 300 us
    third = REQ.replace("seq 546:559", "seq 559:572")
    lines = [*LINES[:8], f"100.001300 s1-eth1 P   {third}", f"100.001600 s5-eth1 P   {third}"]
    got = frame_trace.held_by_phase(frame_trace.frames(lines), "10.0.1.1", "s1-eth1", "s5-eth1", 0.0)
    assert got == {600: {"frames": 1, "p50_us": 300.0}}

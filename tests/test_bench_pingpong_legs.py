"""bench/pingpong_legs.py: each leg of a ping-pong from tcpdump -v's two-line records as Debian
12's tcpdump 4.99 prints them, frames matched by IP id and source, each request paired with the
first answer after it reached the far host."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import pingpong_legs  # noqa: E402

H1, H4 = "10.0.1.1", "10.0.1.4"


def rec(t_ns: int, ip_id: int, src: str, dst: str) -> str:
    s, ns = divmod(t_ns, 10**9)
    return (
        f"{s}.{ns:09d} IP (tos 0x0, ttl 64, id {ip_id}, offset 0, flags [DF], proto UDP (17), length 42)\n"
        f"    {src}.37000 > {dst}.11111: UDP, length 14\n"
    )


T0 = 1_764_000_000 * 10**9


def test_ids_and_sources_are_read_from_the_two_line_records() -> None:
    text = "tcpdump: listening on s1-eth1\n" + rec(T0 + 100, 7, H1, H4) + rec(T0 + 200, 7, H4, H1) + rec(T0 + 300, 7, H1, H4)
    # the answer with the same id is another source; a repeat of an id keeps the first sight
    assert pingpong_legs.arrivals(text, H1) == {7: T0 + 100}
    assert pingpong_legs.arrivals(text, H4) == {7: T0 + 200}


def test_each_request_is_paired_with_the_first_answer_after_it() -> None:
    caps = {
        # two requests 1 ms apart: at the switch, then 30 us later at h4
        "req_at_switch": rec(T0, 1, H1, H4) + rec(T0 + 1_000_000, 2, H1, H4),
        "req_at_h4": rec(T0 + 30_000, 1, H1, H4) + rec(T0 + 1_040_000, 2, H1, H4),
        # h4 answers 50 us after each request reached it; the switch forwards in 5 us
        "ans_at_switch": rec(T0 + 80_000, 900, H4, H1) + rec(T0 + 1_090_000, 901, H4, H1),
        "ans_at_h1": rec(T0 + 85_000, 900, H4, H1) + rec(T0 + 1_095_000, 901, H4, H1),
    }
    legs = pingpong_legs.legs(caps, H1, H4)
    assert legs["pairs"] == 2
    assert legs["switch_hold_request_us"] == 35.0  # median of 30 and 40
    assert legs["h4_turnaround_us"] == 50.0
    assert legs["switch_hold_answer_us"] == 5.0


def test_a_request_lost_on_the_way_is_left_out() -> None:
    caps = {
        "req_at_switch": rec(T0, 1, H1, H4) + rec(T0 + 1_000_000, 2, H1, H4),
        "req_at_h4": rec(T0 + 30_000, 1, H1, H4),  # the second never reached h4
        "ans_at_switch": rec(T0 + 80_000, 900, H4, H1),
        "ans_at_h1": rec(T0 + 85_000, 900, H4, H1),
    }
    assert pingpong_legs.legs(caps, H1, H4)["pairs"] == 1

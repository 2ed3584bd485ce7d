"""The switch's event loop looks at its rings for an expected answer instead of sleeping
(`--reply-poll-us`): in a ping-pong through an idle switch it looks after each request and the
answer ends the look; turned off, it never looks and every frame's arrival wakes it. Counted by
the loop (`stats_json`'s "event_loop", which also says what ended each wait), with real packets
between namespaces; every ping answered either way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from netns import REPO, Star, is_root, ping_rtts

pytestmark = [pytest.mark.root, pytest.mark.skipif(not is_root(), reason="needs root for network namespaces")]

PINGS = 30


def loop_counters(star: Star) -> dict[str, int]:
    """The loop's counters, and "rx_wakeups": the waits the ports' arrivals ended, summed."""
    doc = json.loads(star.ctl("stats_json").strip().splitlines()[-1])
    return {**doc["event_loop"], "rx_wakeups": sum(p["rx_wakeups"] for p in doc["ports"])}


@pytest.mark.parametrize("reply_poll_us", [None, "0"])
def test_a_ping_pong_is_answered_into_a_look_unless_looking_is_off(tmp_path: Path, reply_poll_us: str | None) -> None:
    commands = tmp_path / "commands.txt"
    commands.write_text(
        "\n".join(f"table_add ipv4_lpm ipv4_forward 10.0.1.{i}/32 => 00:00:00:00:01:0{i} {i}" for i in (1, 2))
    )
    extra = ("--reply-poll-us", reply_poll_us) if reply_poll_us is not None else ()
    with Star(2) as star:
        star.start_switch(
            str(REPO / "p4" / "l3_basic.json"), "--commands", str(commands), *extra, log=tmp_path / "switch.log"
        )
        before = loop_counters(star)
        rtts = ping_rtts(star, 1, 2, PINGS, interval=0.02)
        after = loop_counters(star)
    assert len(rtts) == PINGS, "every ping answered"
    looks = after["looks"] - before["looks"]
    answered = after["looks_answered"] - before["looks_answered"]
    delta = {k: after[k] - before[k] for k in after}
    # every turn ended one wait, and says what ended it (counted in the same locked turn)
    woken = ("woken_by_arrival", "woken_by_timer", "woken_by_control", "woken_by_backlog", "looks_answered")
    assert delta["turns"] == sum(delta[k] for k in woken), delta
    # an arrival's wake-up is counted at every port that had a frame then: at least once
    assert delta["rx_wakeups"] >= delta["woken_by_arrival"], delta
    if reply_poll_us == "0":
        # nothing queued between pings: each request and each answer wakes the sleeping loop
        assert delta["woken_by_arrival"] >= 2 * PINGS - 2, delta
    else:
        # each request after the first is followed by a look that h2's answer ends; h1's next
        # request comes 20 ms after its answer, too late to be looked for
        assert answered >= PINGS // 2, after
        assert looks <= 2 * PINGS, after

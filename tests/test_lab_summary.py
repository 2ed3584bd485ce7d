"""A phase's numbers start when its change took effect (lanes.lab.summary, lanes.lab.delay)."""

from __future__ import annotations

from lanes.lab.cases import measured_from
from lanes.lab.delay import per_phase
from lanes.lab.summary import _phase_stats


def _rows(lossy_until: float) -> list[dict]:
    """One-second UDP intervals ending at t = 1..9: 38 % loss while the old setting holds."""
    return [
        {"t": float(t), "mbps": 16.2 if t <= lossy_until else 26.2, "lost": 850 if t <= lossy_until else 0,
         "total": 2230, "owd_ms": 46.0 if t <= lossy_until else 0.07, "owd_max_ms": 48.0}
        for t in range(1, 10)
    ]  # fmt: skip


def test_on_time_change_is_measured_from_the_planned_start() -> None:
    ph = {"name": "prioritized", "start_s": 3.0, "end_s": 6.0, "changed_s": 3.02}
    st = _phase_stats(_rows(lossy_until=4.0), measured_from(ph), ph["end_s"], "udp")
    assert st == {"throughput_mbps": 26.2, "seconds": 2, "window_s": [4.0, 6.0], "loss_pct": 0.0, "owd_ms": 0.07,
                  "owd_max_ms": 48.0}  # fmt: skip


def test_late_change_leaves_the_old_settings_seconds_out() -> None:
    # the writes returned 1.1 s late: measured from the planned start, the second 4-5 would still
    # carry the old setting's loss; measured from the change, only the second 5-6 counts
    ph = {"name": "prioritized", "start_s": 3.0, "end_s": 6.0, "changed_s": 4.1}
    rows = _rows(lossy_until=5.0)
    assert _phase_stats(rows, ph["start_s"], ph["end_s"], "udp")["loss_pct"] > 15
    st = _phase_stats(rows, measured_from(ph), ph["end_s"], "udp")
    assert st["seconds"] == 1 and st["loss_pct"] == 0.0
    assert measured_from({"start_s": 3.0, "end_s": 6.0}) == 3.0  # a phase without a change


def test_queue_delays_follow_the_change_too() -> None:
    q = {"port": 4, "qid": 7, "pkts": 10, "sum_ns": 10_000, "max_ns": 1000, "buckets": {"40": 10}}
    records = [{"t": t, "switch": "s1", "queues": [q]} for t in (6.0, 7.0)]
    on_time = [{"name": "p", "start_s": 3.0, "end_s": 8.0}]
    late = [{"name": "p", "start_s": 3.0, "end_s": 8.0, "changed_s": 4.5}]
    assert per_phase(records, on_time)["s1"]["4"]["7"]["p"]["pkts"] == 20
    assert per_phase(records, late)["s1"]["4"]["7"]["p"]["pkts"] == 10  # t=6 covers (5, 6]: not after 4.5 + 1


def test_the_last_phase_ends_where_the_senders_stop() -> None:
    # an MPI phase that ended at 4.89 s: the second 4-5 was cut short when the senders stopped
    rows = [{"t": float(t), "mbps": 48.6 if t < 5 else 32.4, "lost": 0, "total": 4000} for t in range(1, 6)]
    assert _phase_stats(rows, 3.0, 4.89, "udp") is not None  # in the middle of a run it would count
    assert _phase_stats(rows, 3.0, 4.89, "udp", last=True) is None  # too short to measure
    full = _phase_stats(rows, 0.0, 5.0, "udp", last=True)
    assert full["seconds"] == 4 and full["throughput_mbps"] == 44.55  # a run that ends on the second

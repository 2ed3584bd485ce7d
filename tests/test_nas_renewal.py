"""lanes.nas.summary.renewal: a demotion within a hold time of the same flow's restore at the same
switch continues the detection before it (in band, after the hold lapsed while the flow was
starved upstream) and is not judged as a new one; any other demotion is."""

from __future__ import annotations

from lanes.nas.summary import renewal


def ev(t: float, kind: str, flow: str = "h1->h4", switch: str = "s1") -> dict:
    return {"t": t, "kind": kind, "flow": flow, "switch": switch}


def test_a_demotion_right_after_its_restore_is_a_renewal_and_a_later_one_is_not() -> None:
    events = [ev(14.0, "demote"), ev(16.0, "restore"), ev(16.05, "demote"), ev(18.05, "restore"),
              ev(20.5, "demote"), ev(22.5, "restore")]  # fmt: skip
    demotes = [e for e in events if e["kind"] == "demote"]
    # hold 2 s: 16.05 is 0.05 s after a restore; 20.5 is 2.45 s after one, a new detection
    assert [renewal(e, events, 2.0) for e in demotes] == [False, True, False]
    assert [renewal(e, events, 3.0) for e in demotes] == [False, True, True]


def test_another_flow_or_switch_restored_just_before_makes_no_renewal() -> None:
    events = [ev(16.0, "restore", flow="h2->h3"), ev(16.0, "restore", switch="s2"), ev(16.1, "demote")]
    assert not renewal(events[-1], events, 2.0)

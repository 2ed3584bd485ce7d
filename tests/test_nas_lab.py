"""`lanes lab run --case nas` end to end on Mininet with short runs: the automatic mechanism finds
the flow that dies downstream, demotes it where it shares the first bottleneck, the others take
its capacity, and it is restored once the downstream competitor stops; a lone flow that loses at
every hop is left alone; the report has the section; bad input is a one-line error."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LANES = str(REPO / ".venv" / "bin" / "lanes")

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="Mininet needs root"),
]

LINK = 50  # Mb/s scale: nas3's bottlenecks are then 25 and 30 Mb/s


# A run is repeated once if the hypervisor took over this share (%) of the machine's CPU time in
# a phase whose goodput the tests judge (a switch it stops loses its ports' line time), and the
# less-stolen run is judged
STEAL_RETRY_PCT = 5.0
JUDGED_PHASES = ("calibrate", "baseline", "active")


def nas_once(out: Path, *args: str, duration: int) -> dict:
    cmd = [LANES, "lab", "run", "--case", "nas", "--link-mbps", str(LINK), "--duration", str(duration),
           "--hold", "2", "--out", str(out), *args]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads((out / "summary.json").read_text())


def most_stolen(s: dict) -> float:
    return max(s["steal_pct"][ph] for ph in JUDGED_PHASES)


def nas(out: Path, *args: str, duration: int = 30) -> dict:
    """The summary of a nas run into `out`: of up to two runs, the one with less CPU time stolen."""
    first = nas_once(out, *args, duration=duration)
    if most_stolen(first) <= STEAL_RETRY_PCT:
        return first
    aside = Path(tempfile.mkdtemp(prefix="nas-stolen-")) / "run"  # outside `out`'s parent: reports read it
    shutil.move(out, aside)
    second = nas_once(out, *args, duration=duration)
    if most_stolen(second) <= most_stolen(first):
        shutil.rmtree(aside.parent)
        return second
    shutil.rmtree(out)
    shutil.move(aside, out)
    shutil.rmtree(aside.parent)
    return first


def stolen_more(s: dict, phase: str, than: str) -> float:
    """What a goodput ratio of `phase` over `than` may lose to the hypervisor: twice the share of
    the machine's CPU time it stole in `phase` beyond `than` (over both CPUs: all of it may have
    fallen on the one serving the bottleneck, and a stopped port loses its line time, as
    test_switch_afxdp's stall test shows)."""
    return 2 * max(0.0, s["steal_pct"][phase] - s["steal_pct"][than]) / 100


def test_nas3_auto_demotes_the_doomed_flow_upstream_and_restores_it(tmp_path: Path) -> None:
    s = nas(tmp_path / "auto", "--topo", "nas3", "--alg", "nas-auto", "--proto", "udp")
    victim = s["flows"]["victim"]["key"]
    demotes = [e for e in s["events"] if e["kind"] == "demote"]
    # one demotion: the victim, at s1 (where it shares the first bottleneck), found losing at s2's
    # port to s4, after the downstream competitor came back and not before
    assert [(e["flow"], e["switch"], e["detected_at"]) for e in demotes] == [(victim, "s1", "s2:3")], s["events"]
    assert s["onset_s"] <= demotes[0]["t"] <= s["onset_s"] + 4.0, s["events"]
    assert s["false_positives"] == 0
    # the baseline is what one FIFO per port gives, and the active phase reaches the ceiling
    # (each less what the hypervisor took in one phase beyond the other)
    why = (s["goodput_mbps"], s["steal_pct"])
    base = max(stolen_more(s, "baseline", "calibrate"), stolen_more(s, "calibrate", "baseline"))
    assert abs(s["baseline_vs_fair"] - 1) < 0.08 + base, why
    assert s["active_vs_ceiling"] >= 0.9 - stolen_more(s, "active", "calibrate"), why
    assert s["gain"] >= 1.15 - stolen_more(s, "active", "baseline"), why
    # restored once, after the competitor stopped; never two changes within a hold time
    restores = [e for e in s["events"] if e["kind"] == "restore"]
    assert len(restores) == 1 and restores[0]["t"] > s["reset_s"], s["events"]
    assert s["max_changes_per_hold"] == 1
    assert s["feedback_msgs"] == s["writes_after_setup"] == 2  # the demotion and the restore
    assert (tmp_path / "auto" / "goodput.png").stat().st_size > 10_000
    r = subprocess.run([LANES, "lab", "report", str(tmp_path), "--out", str(tmp_path / "report")],
                       capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr
    md = (tmp_path / "report" / "report.md").read_text()
    assert "# Network-aware scheduling" in md and "| nas-auto | 1 |" in md
    # the last column: the share of the CPU time stolen in the active phase, as the summary has it
    nas_row = next(line for line in md.splitlines() if line.startswith("| nas-auto | 1 |"))
    assert nas_row.split("|")[-2].strip() == f"{s['steal_pct']['active']:.3g}", nas_row


def test_nas3_inband_the_switches_do_it_alone(tmp_path: Path) -> None:
    s = nas(tmp_path, "--topo", "nas3", "--alg", "nas-inband", "--proto", "udp")
    victim = s["flows"]["victim"]["key"]
    events = s["events"]
    # only the victim, only at s1 (where it shares the first bottleneck), read from s1's register;
    # demotions and restores alternate, the first after the competitor's return, the last
    # restore once it stopped (a hold time after the last feedback frame)
    assert {(e["flow"], e["switch"]) for e in events} == {(victim, "s1")}, events
    assert [e["kind"] for e in events] == ["demote", "restore"] * (len(events) // 2), events
    assert s["onset_s"] <= events[0]["t"] <= s["onset_s"] + 4.0, events
    assert events[-1]["t"] > s["reset_s"], events
    assert all(e["t"] < s["reset_s"] for e in events if e["kind"] == "demote"), events
    # and demoted through the active phase. s2's port forgets the doomed flow after a window in
    # which it was not 90 % busy; when the competitor's iperf falls short of that (2 of 6 runs on
    # 2026-11-29, bench/results/nas.md), feedback stops, the hold lapses and the victim's next
    # loss at s2 demotes it again within a window: renewals, not new detections
    demoted = sum(min(r["t"], s["reset_s"]) - d["t"] for d, r in zip(events[::2], events[1::2], strict=True))
    assert demoted >= 0.9 * (s["reset_s"] - events[0]["t"]), events
    assert s["renewals"] == len(events) // 2 - 1, events
    assert s["active_vs_ceiling"] >= 0.9 - stolen_more(s, "active", "calibrate"), (s["goodput_mbps"], s["steal_pct"])
    assert s["feedback_msgs"] > 0 and s["false_positives"] == 0
    # no writes after set-up but the one that switched it on (the hold time, at each switch):
    # the feedback was frames in band, the demotion and its end the switches' own
    assert s["setup_writes"] > 0
    assert s["writes_after_setup"] == 4  # nas3's s1-s4


def victim_loss(out: Path, s: dict, hop: int, phase: str) -> list[float | None]:
    """The victim's loss at its `hop`-th switch in each poll of the in-band run's `phase`, after
    the phase's first second (its transition)."""
    ph = next(p for p in s["phases"] if p["name"] == phase)
    rows = [json.loads(line) for line in (out / "nas_trace.jsonl").read_text().splitlines()]
    return [r["loss"][s["flows"]["victim"]["key"]][hop] for r in rows if ph["start_s"] + 1 <= r["t"] < ph["end_s"]]


def test_inband_sends_nothing_for_a_flow_that_loses_only_downstream(tmp_path: Path) -> None:
    # victim and down only: the victim loses at s2 but nothing upstream is to gain (no mark).
    # At 80 % of their host links: at 100 % the victim alone fills s1's port to s2 (both 25 Mb/s),
    # so whatever the hypervisor stops there is lost at s1 too, and the flow is rightly marked
    # (a run on 2026-11-29 with 16-24 % stolen lost up to 6.7 % at s1 in 120-ms polls and was
    # demoted there once). No repeat for steal: no goodput is judged.
    s = nas_once(tmp_path, "--topo", "nas3", "--alg", "nas-inband", "--proto", "udp", "--roles", "victim,down",
                 "--load", "80", duration=20)  # fmt: skip
    # the premise: the victim dies downstream (44 Mb/s on the wire to s2's 30 Mb/s port to s4)
    at_s2 = [x for x in victim_loss(tmp_path, s, 1, "active") if x is not None]
    assert at_s2 and sum(at_s2) / len(at_s2) > 0.2, at_s2
    assert (s["deprioritisations"], s["feedback_msgs"]) == (0, 0), (s["events"], victim_loss(tmp_path, s, 0, "active"))


def test_a_lone_flow_losing_at_every_hop_is_left_alone(tmp_path: Path) -> None:
    # nas-line: one flow at twice its path's rate; it loses at the first hop, nobody shares it
    s = nas(tmp_path, "--topo", "nas-line", "--alg", "nas-auto", "--proto", "udp", duration=20)
    # it gets its path's 25 Mb/s, less twice the share stolen in the phase (why: stolen_more)
    lost = 2 * s["steal_pct"]["active"] / 100
    assert s["goodput_mbps"]["active"]["victim"] > (0.9 - lost) * LINK / 2, (s["goodput_mbps"], s["steal_pct"])
    assert (s["deprioritisations"], s["feedback_msgs"], s["state_changes"]) == (0, 0, 0), s["events"]


def test_bad_nas_input_is_a_one_line_error(tmp_path: Path) -> None:
    for args, why in [
        (["--topo", "nas3", "--alg", "strict"], "unknown algorithm 'strict' for case nas"),
        (["--topo", "nas3", "--alg", "nas-auto", "--duration", "5"], "at least 20 s"),
        (["--topo", "nas3", "--alg", "nas-auto", "--roles", "victim,nobody"], "unknown role(s) nobody"),
        (["--topo", "nas3", "--alg", "nas-auto", "--hold", "0"], "--hold must be"),
        (["--topo", "star", "--alg", "nas-auto"], "topology star has none of the roles"),
    ]:
        cmd = [LANES, "lab", "run", "--case", "nas", "--out", str(tmp_path / "bad"), *args]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
        assert r.returncode != 0
        assert why in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    keep = tmp_path / "mine"
    keep.mkdir()
    (keep / "notes.txt").write_text("not a run")
    for args, why in [
        (["--topo", "nas3", "--case", "proactive"], "topology nas3 is for case nas"),
        (["--topo", "nas3", "--case", "nas", "--alg", "nas-auto", "--out", str(keep)], "not a lab run's"),
        (["--topo", "star", "--case", "proactive", "--out", str(keep)], "not a lab run's"),
    ]:
        cmd = [LANES, "lab", "run", "--out", str(tmp_path / "bad"), *args]  # a later --out wins
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
        assert r.returncode != 0
        assert why in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert (keep / "notes.txt").read_text() == "not a run", "nothing already stored is lost"

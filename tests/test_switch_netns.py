"""The switch with real packets between network namespaces: LPM forwarding, TTL and checksum,
queue selection, rate and quantum through P4 metadata, shares at a congested 100 Mb/s port,
high-class latency under saturating load."""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import time
from pathlib import Path

import pytest
from lanes.lab.monitor import CLK_TCK, proc_cpu_ticks
from netns import REPO, Star, UdpFlows, is_root, ping_rtts, steal_ms

pytestmark = [pytest.mark.root, pytest.mark.skipif(not is_root(), reason="needs root for network namespaces")]

# 100 Mb/s bottleneck toward h4; high class 60 % of it (7.5 MB/s), two low classes by DRR.
TM_BASIC_COMMANDS = """
table_add ipv4_lpm ipv4_forward 10.0.1.1/32 => 00:00:00:00:01:01 1
table_add ipv4_lpm ipv4_forward 10.0.1.2/32 => 00:00:00:00:01:02 2
table_add ipv4_lpm ipv4_forward 10.0.1.3/32 => 00:00:00:00:01:03 3
table_add ipv4_lpm ipv4_forward 10.0.1.4/32 => 00:00:00:00:01:04 4
table_add src_ip_prio set_priority 10.0.1.1/32 => 7 7500000 7000
table_add src_ip_prio set_priority 10.0.1.2/32 => 6 0 7000
table_add src_ip_prio set_priority 10.0.1.3/32 => 5 0 7000
table_add src_ip_prio set_priority 10.0.1.4/32 => 7 7500000 7000
"""


def start(
    star: Star,
    tmp: Path,
    scheduler: str,
    program: str = "tm_basic",
    commands: str = TM_BASIC_COMMANDS,
    extra: tuple[str, ...] = (),
) -> None:
    cmds = tmp / "commands.txt"
    cmds.write_text(commands)
    star.start_switch(
        str(REPO / "p4" / f"{program}.json"),
        "--scheduler",
        scheduler,
        "--port-rate",
        "4@100Mbps",
        "--default-rate",
        "1Gbps",
        "--commands",
        str(cmds),
        *extra,
        log=tmp / "switch.log",
    )


def test_forwarding_ttl_and_checksum_with_l3_basic(tmp_path: Path) -> None:
    commands = "\n".join(
        f"table_add ipv4_lpm ipv4_forward 10.0.1.{i}/32 => 00:00:00:00:01:0{i} {i}" for i in range(1, 5)
    )
    with Star(4) as star:
        start(star, tmp_path, "strict", program="l3_basic", commands=commands)
        out = star.host(1, "ping", "-n", "-c", "3", "-i", "0.2", star.ip(4)).stdout
        # the kernel drops IPv4 with a bad header checksum: replies prove the update is right;
        # 64 - 1 (switch) = 63 proves the TTL decrement
        assert re.search(r"3 received", out) and "ttl=63" in out, out
        ports = star.ctl("show_ports")
        assert (
            re.search(r"^4 1000000000 strict \d+ \d+ [1-9]", ports, re.MULTILINE) is None
        )  # port 4 at 100 Mb/s
        assert re.search(r"^4 100000000 strict", ports, re.MULTILINE), ports


SIM_SCENARIO = """
duration_s = 2.0
seed = 1
[[port]]
name = "p4"
rate_bps = 100e6
scheduler = "rlsp-drr"
  [[port.queue]]
  index = 7
  rate_Bps = 7.5e6
  quantum = 7000
  [[port.queue]]
  index = 6
  quantum = 7000
  [[port.queue]]
  index = 5
  quantum = 7000
"""


def sim_prediction(tmp: Path, offered_wire_mbps: float, frame_bytes: int) -> dict[int, float]:
    """What `lanes sim` predicts (Mb/s of frames) for hosts 1-3 sending into queues 7, 6, 5."""
    scenario = SIM_SCENARIO + "".join(
        f'[[flow]]\nname = "h{h}"\nport = "p4"\nqueue = {q}\nrate_bps = {offered_wire_mbps * 1e6}\n'
        f"packet_bytes = {frame_bytes}\n"
        for h, q in ((1, 7), (2, 6), (3, 5))
    )
    (tmp / "sim.toml").write_text(scenario)
    p = subprocess.run(
        [str(REPO / ".venv" / "bin" / "lanes"), "sim", str(tmp / "sim.toml"), "--out", str(tmp / "sim.json")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    flows = json.loads((tmp / "sim.json").read_text())["flows"]
    return {h: flows[f"h{h}"]["throughput_bps"] / 1e6 for h in (1, 2, 3)}


def test_rlsp_drr_shares_at_congested_port(tmp_path: Path) -> None:
    # iperf3 counts UDP payload: 1400 of 1442 bytes on the wire, so 100 Mb/s of frames is 97 Mb/s.
    wire = 1442 / 1400
    predicted = sim_prediction(tmp_path, 50 * wire, 1442)
    # On a shared VM the hypervisor may take the CPU away ("steal" in /proc/stat): a switch that
    # is not running cannot send, so the time stolen during the run is allowed for, as line
    # time the port may have lost (and the high-class packets that arrived meanwhile). Up to 3
    # attempts, stopping at one with less than 0.1 s stolen; the least-stolen one is judged.
    runs = []
    for _attempt in range(3):
        with Star(4) as star:
            # Deep queues: a sender descheduled on a busy machine catches up in a burst, which a
            # 64-packet queue would drop; the shares are the point here, not burst absorption.
            start(star, tmp_path, "rlsp-drr", extra=("--queue-depth", "512"))
            before = steal_ms()
            r = UdpFlows(star, tmp_path, {1: 50, 2: 50, 3: 50}, seconds=4).received()
            runs.append((steal_ms() - before, r, star.ctl("show_queues 4")))
        if runs[-1][0] < 100:
            break
    stolen, r, queues = min(runs, key=lambda x: x[0])
    lost = 100 * stolen / 4000  # Mb/s of the 100 Mb/s port over the 4 s run
    why = f"steal {stolen:.0f} ms in the least-stolen of {len(runs)} run(s)"
    # high class: all of its 50 Mb/s, no loss; the low classes split the other 50 equally.
    # the switch dropped none of the high class (iperf's own loss figure also counts what a
    # descheduled receiver's socket dropped on a busy machine, so it is only checked loosely)
    high = re.search(r"^4 7 (?:\S+ ){7}(\d+) \S+$", queues, re.MULTILINE)  # drops, burst
    assert high and int(high.group(1)) <= stolen / 1000 * 51.5e6 / (1442 * 8), (queues, why)
    assert r[1]["lost_pct"] < 2 + lost, (r, queues, why)
    assert abs(r[1]["mbps"] * wire - 50) < 2.5 + lost, (r, why)
    low = [r[2]["mbps"] * wire, r[3]["mbps"] * wire]
    assert abs(low[0] - low[1]) < 0.05 * 25 + lost, (r, why)
    assert -2.5 - lost < sum(low) - 50 < 2.5, (r, why)
    # and each class within 5 % of what the simulator predicts for the same TM configuration
    for h in (1, 2, 3):
        assert abs(r[h]["mbps"] * wire - predicted[h]) < 0.05 * predicted[h] + lost, (h, r, predicted, why)
    # queue 7 took rate and quantum from the packets' metadata; the low queues their quantum
    assert re.search(r"^4 7 \d+ \d+ 7500000 7000 ", queues, re.MULTILINE), queues
    assert re.search(r"^4 6 \d+ \d+ - 7000 ", queues, re.MULTILINE), queues


def latency_run(tmp_path: Path, scheduler: str) -> tuple[float, list[float], list[float]]:
    """Idle and loaded RTTs h1 -> h4, and the share of the CPU time the hypervisor took during
    the loaded pings (0.05: a twentieth of both CPUs' time)."""
    with Star(4) as star:
        start(star, tmp_path, scheduler)
        idle = ping_rtts(star, 1, 4, 50)
        UdpFlows(star, tmp_path, {2: 60, 3: 60}, seconds=8)  # stopped with the namespaces
        time.sleep(1.5)
        before, t0 = steal_ms(), time.monotonic()
        loaded = ping_rtts(star, 1, 4, 300)
        elapsed_ms = (time.monotonic() - t0) * 1000 * (os.cpu_count() or 1)
        return (steal_ms() - before) / elapsed_ms, idle, loaded


@pytest.mark.parametrize("scheduler", ["fifo", "rlsp-drr"])
def test_high_class_latency_under_saturating_load(tmp_path: Path, scheduler: str) -> None:
    # As in the shares test: up to 4 attempts, stopping at one with under 1 % of the CPU time
    # stolen; the least-stolen one is judged. A ping whose round trip meets a stall of the VM
    # takes the stall's length, so a run with a share s of the time stolen has about that share
    # of its pings measuring the host, not the switch: the judged quantile leaves out twice it,
    # below the 95th (in full `make test` runs on this shared VM, p98 reached 1.2 ms with 0.5 %
    # stolen, while run alone its p99 stayed under 0.55 ms: the last few pings measure the machine)
    runs = []
    for _attempt in range(4):
        runs.append(latency_run(tmp_path, scheduler))
        if runs[-1][0] < 0.01:
            break
    stolen, idle, loaded = min(runs, key=lambda x: x[0])
    # the high class loses none. FIFO drops pings with the load, how many depends on how the
    # 10-ms pings fall against the constant-rate senders' drain pattern (tail drop shares loss by
    # phase, not evenly: a sixth to 71 % seen), so it only needs enough of them for a median
    need = 290 if scheduler == "rlsp-drr" else 50
    assert len(idle) >= 45 and len(loaded) >= need, (len(idle), len(loaded))
    judged = max(50, round(95 - 200 * stolen))
    tail = statistics.quantiles(loaded, n=100)[judged - 1]
    print(
        f"{scheduler}: idle p50 {statistics.median(idle):.3f} ms, loaded p50 {statistics.median(loaded):.3f} "
        f"p{judged} {tail:.3f} ms, {100 * stolen:.1f} % stolen"
    )
    if scheduler == "rlsp-drr":
        # the physical bound is one 1442 B frame at 100 Mb/s (0.115 ms) on top of the idle RTT
        # (FIFO's full 64-packet queue adds ~7 ms); 1 ms leaves room for a busy shared VM
        why = (judged, tail, idle, f"{100 * stolen:.1f} % of the CPU time stolen")
        assert tail < statistics.median(idle) + 1.0, why
    else:
        # FIFO: the high class waits behind a full 64-packet queue, ~7 ms at 100 Mb/s
        assert statistics.median(loaded) > 3.0, loaded


def test_a_port_whose_interface_vanishes_is_reported_not_spun_on(tmp_path: Path) -> None:
    """A link torn down under a running switch (as Mininet does at the end of a run) leaves an
    error on its socket; the switch reports it once, keeps forwarding between the other ports,
    does not spin on it (it runs at real-time priority) and stops on SIGTERM."""
    with Star(4) as star:
        start(star, tmp_path, "rlsp-drr")
        sw = star.procs[-1]
        assert ping_rtts(star, 2, 3, count=3)
        star.host(1, "ip", "link", "del", "eth0")
        time.sleep(0.5)
        before, t0 = proc_cpu_ticks(sw.pid), time.monotonic()
        time.sleep(2.0)
        used = (proc_cpu_ticks(sw.pid) - before) / CLK_TCK / (time.monotonic() - t0)
        # an idle switch uses well under 1 % of a core; spinning on the error would take 100 %
        assert used < 0.3, f"switch used {100 * used:.0f} % of a core after losing a port"
        assert ping_rtts(star, 2, 3, count=3), "the other ports stopped forwarding"
        sw.terminate()
        sw.wait(timeout=10)
    assert "lanes switch: port 1:" in (tmp_path / "switch.log").read_text()

"""A long run of one `lanes switch` (p4/p4rt_test, P4Runtime on, CPU port 255) under steady load:
h1 sends UDP to h2 above port 2's 200 Mb/s (iperf3, 1400 B datagrams), a P4Runtime controller
writes a table entry every second and keeps a PacketOut stream (to h3) and a PacketIn stream
(h3's frames of EtherType 0x88B5, sent to the CPU by an acl rule) going. Every 10 s it samples
the switch process's resident memory, open descriptors and CPU time, and its counters.

At the end (traffic stopped, queues drained) it checks the switch's own accounting: frames
received on all ports = frames sent + frames it counted as dropped (drop counters and transmit
errors), exactly. Reported: the slope per hour (least squares) of memory and descriptors, the
accounting, and the switch's CPU time per received frame in the first and the last 5 minutes.

    sudo .venv/bin/python bench/soak.py [--seconds 1800] [--out bench/results] [--lock /work/timing.lock]

Holds --lock (flock) for the run: its figures depend on the machine's load (`--lock ''`: none).
Writes OUT/soak.json and OUT/soak.md. Needs root (namespaces) and iperf3.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import queue
import signal
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from switch_proc import REPO, free_port, running  # noqa: E402
from vethns import Hosts  # noqa: E402

PROGRAM = REPO / "p4" / "p4rt_test.json"
P4INFO = REPO / "p4" / "p4rt_test.p4info.txtpb"
RAW = str(REPO / "bench" / "raw_frames.py")
SAMPLE_S = 10.0
RATE = "200Mbps"
OFFER_MBPS = 240
PACKET_PPS = 100  # PacketOuts per second, and h3's frames for PacketIn
PIN_TYPE, POUT_TYPE = 0x88B5, 0x88B6
TICK = os.sysconf("SC_CLK_TCK")


def proc_sample(pid: int) -> dict:
    status = Path(f"/proc/{pid}/status").read_text()
    rss_kb = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return {"rss_kb": rss_kb, "fds": len(os.listdir(f"/proc/{pid}/fd")), "cpu_s": (int(f[11]) + int(f[12])) / TICK}


def slope_per_hour(ts: list[float], ys: list[float]) -> float:
    """Least-squares slope of ys over ts (seconds), per hour."""
    n = len(ts)
    if n < 2:
        return 0.0
    mt, my = sum(ts) / n, sum(ys) / n
    den = sum((t - mt) ** 2 for t in ts)
    return 3600 * sum((t - mt) * (y - my) for t, y in zip(ts, ys, strict=True)) / den if den else 0.0


def counters(ctl) -> dict:
    """The switch's counters from `show_ports`: per port rx/tx/errors, and the drop counters."""
    out = ctl.run("show_ports").splitlines()
    ports = {}
    for line in out[1:]:
        if line.startswith("drops:"):
            drops = {k: int(v) for k, v in (w.split("=") for w in line.split()[1:])}
            continue
        w = line.split()
        ports[int(w[0])] = {"rx": int(w[3]), "tx": int(w[5]), "tx_errors": int(w[7])}
    return {"ports": ports, "drops": drops}


def queued(ctl) -> int:
    return sum(int(line.split()[2]) for line in ctl.run("show_queues").splitlines()[1:] if not line.startswith("#"))


def accounting(c: dict) -> dict:
    rx = sum(p["rx"] for p in c["ports"].values())
    tx = sum(p["tx"] for p in c["ports"].values())
    errors = sum(p["tx_errors"] for p in c["ports"].values())
    # `digests` counts digests the controller was too slow for, not frames
    drops = {k: v for k, v in c["drops"].items() if k != "digests" and v}
    return {"rx": rx, "tx": tx, "tx_errors": errors, "drops": drops,
            "balanced": rx == tx + errors + sum(drops.values())}  # fmt: skip


class Controller:
    """The P4Runtime side: one entry written per second, PacketOuts at PACKET_PPS, PacketIns counted."""

    def __init__(self, addr: str) -> None:
        from lanes.p4runtime.client import Client
        from lanes.p4runtime.p4info_file import load_p4info

        self.c = Client(addr, device_id=0, election_id=1)
        if self.c.arbitrate(1).status.code != 0:
            raise RuntimeError("the controller did not become primary")
        self.c.set_pipeline(load_p4info(P4INFO), PROGRAM.read_bytes())
        self.stop = threading.Event()
        self.writes = self.write_errors = self.packet_outs = self.packet_ins = 0
        self.threads = [threading.Thread(target=f, daemon=True) for f in (self._packet_outs, self._packet_ins)]

    def entries(self, hosts: Hosts) -> None:
        from lanes.p4runtime.proto import p4r

        ups = [self._update(p4r.Update.INSERT, self._l2(int(hosts.mac(i).replace(":", ""), 16), i)) for i in (1, 2, 3)]
        te = p4r.TableEntry(table_id=33554436, priority=10)  # acl: EtherType 0x88B5 from any port -> CPU
        fm = te.match.add(field_id=1)
        fm.ternary.value, fm.ternary.mask = PIN_TYPE.to_bytes(2, "big"), b"\xff\xff"
        fm = te.match.add(field_id=2)
        fm.range.low, fm.range.high = b"\x00\x00", b"\x01\xff"
        te.action.action.action_id = 16777220  # send_to_cpu
        self.c.write([*ups, self._update(p4r.Update.INSERT, te)])

    @staticmethod
    def _l2(mac: int, port: int):
        from lanes.p4runtime.proto import p4r

        te = p4r.TableEntry(table_id=33554435)  # l2_fwd
        te.match.add(field_id=1).exact.value = mac.to_bytes(6, "big")
        te.action.action.action_id = 16777219  # set_port
        te.action.action.params.add(param_id=1, value=port.to_bytes(2, "big"))
        return te

    @staticmethod
    def _update(kind: int, te):
        from lanes.p4runtime.proto import p4r

        u = p4r.Update(type=kind)
        u.entity.table_entry.CopyFrom(te)
        return u

    def write_one(self, n: int) -> None:
        """Second n: an entry for a MAC no host has, inserted on even seconds, deleted on odd."""
        import grpc
        from lanes.p4runtime.proto import p4r

        kind = p4r.Update.INSERT if n % 2 == 0 else p4r.Update.DELETE
        try:
            self.c.write([self._update(kind, self._l2(0x0200_0000_0000 + (n // 2) % 1000, 3))])
            self.writes += 1
        except grpc.RpcError:
            self.write_errors += 1

    def _packet_outs(self) -> None:
        frame = bytes.fromhex("000000000103" + "0000000001ff") + POUT_TYPE.to_bytes(2, "big") + bytes(46)
        start = time.monotonic()
        while not self.stop.is_set():
            due = int((time.monotonic() - start) * PACKET_PPS)
            while self.packet_outs < due:
                self.c.packet_out(frame, {1: (3).to_bytes(2, "big")})  # egress_port 3
                self.packet_outs += 1
            time.sleep(0.01)

    def _packet_ins(self) -> None:
        while not self.stop.is_set():
            try:
                self.c.next_message("packet", timeout=0.5)
                self.packet_ins += 1
            except queue.Empty:
                pass

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def finish(self, grace_s: float = 3.0) -> None:
        """Stop sending; count PacketIns still on their way for `grace_s`."""
        self.stop.set()
        for t in self.threads:
            t.join()
        end = time.monotonic() + grace_s
        while time.monotonic() < end:
            try:
                self.c.next_message("packet", timeout=0.2)
                self.packet_ins += 1
            except queue.Empty:
                pass
        self.c.close()


def window_cost(samples: list[dict], lo: float, hi: float) -> dict:
    """Switch CPU time per received frame between the samples nearest lo and hi seconds."""
    a = min(samples, key=lambda s: abs(s["t"] - lo))
    b = min(samples, key=lambda s: abs(s["t"] - hi))
    frames = b["rx"] - a["rx"]
    cpu = b["cpu_s"] - a["cpu_s"]
    return {"from_s": a["t"], "to_s": b["t"], "frames": frames, "cpu_s": round(cpu, 2),
            "us_per_frame": round(1e6 * cpu / frames, 3) if frames else None}  # fmt: skip


def soak(seconds: float, log_dir: Path, progress=print) -> dict:
    from lanes.switch.command_client import CommandClient

    with ExitStack() as stack:
        hosts = stack.enter_context(Hosts(3))
        port, gport = free_port(), free_port()
        addr = f"127.0.0.1:{gport}"
        args = ["switch", str(PROGRAM), *hosts.ports(), "--port-rate", f"2@{RATE}", "--thrift-port", str(port),
                "--", "--grpc-server-addr", addr, "--cpu-port", "255"]  # fmt: skip
        out = stack.enter_context(open(log_dir / "switch.log", "w"))
        sw = stack.enter_context(running(args, tcp_port=port, grpc_addr=addr, out=out))
        ctl = CommandClient(port)
        stack.callback(ctl.close)
        ctrl = Controller(addr)
        ctrl.entries(hosts)
        counter = hosts.start(3, "python3", RAW, "count", "eth0", hex(POUT_TYPE), log=log_dir / "h3_count.txt")
        server = hosts.start(2, "iperf3", "-s", "-1", "-J", log=log_dir / "iperf_server.json")
        time.sleep(0.5)
        client = hosts.start(1, "iperf3", "-u", "-c", hosts.ip(2), "-b", f"{OFFER_MBPS}M", "-l", "1400",
                             "-t", f"{seconds:g}", "-J", log=log_dir / "iperf_client.json")  # fmt: skip
        sender = hosts.start(3, "python3", RAW, "send", "eth0", "ff:ff:ff:ff:ff:ff", hosts.mac(3), hex(PIN_TYPE),
                             str(PACKET_PPS), f"{seconds:g}", log=log_dir / "h3_send.txt")  # fmt: skip
        ctrl.start()
        start = time.monotonic()
        samples: list[dict] = []
        n = 0
        next_sample = start
        while (now := time.monotonic()) - start < seconds:
            if now >= next_sample:
                s = {"t": round(now - start, 1), **proc_sample(sw.pid), "load": Path("/proc/loadavg").read_text().split()[0]}
                s["rx"] = sum(p["rx"] for p in counters(ctl)["ports"].values())
                samples.append(s)
                progress(f"soak: {s['t']:.0f} s: RSS {s['rss_kb']} kB, {s['fds']} fds, CPU {s['cpu_s']:.1f} s, "
                         f"rx {s['rx']}, writes {ctrl.writes} ({ctrl.write_errors} refused), PacketOut "
                         f"{ctrl.packet_outs}, PacketIn {ctrl.packet_ins}, load {s['load']}")  # fmt: skip
                next_sample += SAMPLE_S
            ctrl.write_one(n)
            n += 1
            time.sleep(max(0.0, min(1.0, start + n - time.monotonic())))
        client.wait(timeout=60)
        sender.wait(timeout=60)
        ctrl.finish()
        drained = time.monotonic() + 30
        while queued(ctl) and time.monotonic() < drained:
            time.sleep(0.2)
        left = queued(ctl)
        final = counters(ctl)
        last = {"t": round(time.monotonic() - start, 1), **proc_sample(sw.pid), "load": Path("/proc/loadavg").read_text().split()[0],
                "rx": sum(p["rx"] for p in final["ports"].values())}  # fmt: skip
        samples.append(last)
        counter.terminate()
        counter.wait(timeout=10)
        server.wait(timeout=30)
        alive = sw.poll() is None
    window = min(300.0, seconds / 3)
    t_end = samples[-2]["t"] if len(samples) > 2 else samples[-1]["t"]
    ts = [s["t"] for s in samples[:-1]]
    end = json.loads((log_dir / "iperf_server.json").read_text() or "{}").get("end", {})
    recv = end.get("sum_received") or end.get("sum") or {}
    return {
        "seconds": seconds, "rate": RATE, "offered_mbps": OFFER_MBPS, "switch_alive_at_end": alive,
        "samples": samples,
        "rss_kb_per_hour": round(slope_per_hour(ts, [s["rss_kb"] for s in samples[:-1]]), 1),
        "fds_per_hour": round(slope_per_hour(ts, [s["fds"] for s in samples[:-1]]), 2),
        # the sample after the end is left out: the controller's connection is closed by then
        "fds_first_last": [samples[0]["fds"], samples[-2]["fds"] if len(samples) > 1 else samples[0]["fds"]],
        "fds_after_controller_left": samples[-1]["fds"],
        "accounting": accounting(final), "counters": final, "queued_at_end": left,
        "cost_first": window_cost(samples, 0, window), "cost_last": window_cost(samples, t_end - window, t_end),
        "p4runtime": {"writes": ctrl.writes, "write_errors": ctrl.write_errors, "packet_outs": ctrl.packet_outs,
                      "packet_ins": ctrl.packet_ins,
                      "h3_sent": int((log_dir / "h3_send.txt").read_text().split()[0]),
                      "h3_received": int((log_dir / "h3_count.txt").read_text().split()[0])},
        "iperf_received_mbps": round(recv.get("bits_per_second", 0) / 1e6, 1),
        "load_start_end": [samples[0]["load"], samples[-1]["load"]],
    }  # fmt: skip


def loads_between(r: dict, lo: float, hi: float) -> str:
    """The 1-minute load averages sampled from lo to hi seconds, as "min-max"."""
    v = [float(s["load"]) for s in r["samples"] if lo <= s["t"] <= hi]
    return f"{min(v):.2f}-{max(v):.2f}" if v else "?"


def markdown(r: dict) -> str:
    a, p = r["accounting"], r["p4runtime"]
    cf, cl = r["cost_first"], r["cost_last"]
    drops = ", ".join(f"{k} {v}" for k, v in a["drops"].items()) or "none"
    rows = [
        f"# Soak: one switch for {r['seconds'] / 60:g} minutes", "",
        f"p4/p4rt_test with P4Runtime and CPU port 255; h1 offers {r['offered_mbps']} Mb/s of UDP (iperf3, 1400 B) "
        f"to h2 behind port 2 at {r['rate']}; a P4Runtime write every second; {PACKET_PPS} PacketOuts/s to h3 and "
        f"{PACKET_PPS} frames/s from h3 sent to the controller as PacketIns. Made by `make soak` (bench/soak.py), "
        "under the machine's timing lock.", "",
        "Raw: `bench/results/soak.json` (every 10 s sample, the final counters).", "",
        "| figure | value |", "|---|---|",
        f"| resident memory, least-squares slope | {r['rss_kb_per_hour']:+.1f} kB/hour "
        f"({r['samples'][0]['rss_kb']} kB at the first sample, {r['samples'][-1]['rss_kb']} kB at the end) |",
        f"| open descriptors, least-squares slope | {r['fds_per_hour']:+.2f}/hour ({r['fds_first_last'][0]} first, "
        f"{r['fds_first_last'][1]} at the last sample; {r['fds_after_controller_left']} once the controller had left) |",
        f"| frames received (all ports, CPU port included) | {a['rx']} |",
        f"| frames sent + transmit errors + counted drops | {a['tx']} + {a['tx_errors']} + {sum(a['drops'].values())} "
        f"({drops}) = {a['tx'] + a['tx_errors'] + sum(a['drops'].values())}: "
        f"{'balanced' if a['balanced'] else 'NOT balanced'} |",
        f"| switch CPU per received frame, first {cf['to_s'] - cf['from_s']:.0f} s | {cf['us_per_frame']} us "
        f"({cf['frames']} frames, {cf['cpu_s']} s; load {loads_between(r, cf['from_s'], cf['to_s'])}) |",
        f"| switch CPU per received frame, last {cl['to_s'] - cl['from_s']:.0f} s | {cl['us_per_frame']} us "
        f"({cl['frames']} frames, {cl['cpu_s']} s; load {loads_between(r, cl['from_s'], cl['to_s'])}) |",
        f"| P4Runtime writes (refused) | {p['writes']} ({p['write_errors']}) |",
        f"| PacketOuts sent / frames h3 got | {p['packet_outs']} / {p['h3_received']} |",
        f"| frames h3 sent / PacketIns the controller got | {p['h3_sent']} / {p['packet_ins']} |",
        f"| UDP received by h2 (iperf3) | {r['iperf_received_mbps']} Mb/s |",
        f"| load average (1 min) at the start / the end (all samples) | {r['load_start_end'][0]} / "
        f"{r['load_start_end'][1]} ({loads_between(r, 0, r['samples'][-1]['t'])}) |",
    ]  # fmt: skip
    return "\n".join(rows) + "\n"


def main() -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # `kill` cleans up as Ctrl-C does
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=1800)
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    ap.add_argument("--lock", default="/work/timing.lock", help="lock file held for the run ('' for none)")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        if a.lock:
            fh = stack.enter_context(open(a.lock, "a"))
            print(f"soak: waiting for {a.lock}", file=sys.stderr, flush=True)
            fcntl.flock(fh, fcntl.LOCK_EX)
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="soak-")))
        r = soak(a.seconds, logs, progress=lambda line: print(line, file=sys.stderr, flush=True))
    (a.out / "soak.json").write_text(json.dumps(r, indent=1) + "\n")
    (a.out / "soak.md").write_text(markdown(r))
    print(markdown(r))
    return 0 if r["accounting"]["balanced"] and r["switch_alive_at_end"] else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The lanes switch against the Linux kernel (bridge + tc HTB shaped like RL-SP-DRR) in the same
run, on a quiet machine and beside a CPU-bound process:

- star, PROACTIVE, UDP at 200 Mb/s: lanes rlsp-drr and linux-htb back to back, ROUNDS rounds each
  quiet and busy. Per run: the high class's loss and one-way delay (median and 99th percentile of
  iperf's per-second means, and of every datagram from iperf's receive histograms), the shares, the switch's CPU, and the run's validity.
- tree2, RUNTIME, UDP at 100 Mb/s, the high class offering 80 % of the link: shares in the
  prioritised phase against 60/20/20 (with the thesis's 50 % it gets what it offers, 54 %).
- star, PROACTIVE, UDP at 1 Gb/s: as far as the senders get (the validity section says how far).

    sudo .venv/bin/python bench/lab_vs_htb.py [--rounds 3] [--duration 20] [--out results/bench/lab_vs_htb]
        [--wake leading,high,arrivals] [--batch-us 250,500]
    .venv/bin/python bench/lab_vs_htb.py --redigest --out DIR   # the figures again from DIR's runs

`--wake` and `--batch-us` run the lanes switch once per wake setting and batch window in every
round (star200 only), each beside the kernel's run of the same round.

Takes about 12 minutes with the defaults. Writes OUT/results.json and OUT/results.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Self

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))
from lanes.lab import owd_histogram  # noqa: E402

LANES = REPO / ".venv" / "bin" / "lanes"


def percentile(v: list[float], q: float) -> float | None:
    if not v:
        return None
    s = sorted(v)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def main_phase(case: str) -> str:
    return {"proactive": "high_present", "runtime": "prioritized"}[case]


def digest(run_dir: Path, case: str) -> dict:
    """The figures this benchmark compares, from one run's summary and series."""
    s = json.loads((run_dir / "summary.json").read_text())
    series = json.loads((run_dir / "series.json").read_text())
    phase = next(p for p in s["phases"] if p["name"] == main_phase(case))
    out: dict = {"valid": s["validity"]["valid"], "warnings": s["validity"]["warnings"], "classes": {}}
    for key, f in s["flows"].items():
        st = f["phases"].get(phase["name"])
        if st is None:
            continue
        settle = 2.0
        rows = [r for r in series[key] if phase["start_s"] + settle + 1 <= r["t"] <= phase["end_s"]]
        c = out["classes"].setdefault(f["class"], {"mbps": [], "share_pct": [], "loss_pct": [], "owd": [], "rows": []})
        c["mbps"].append(st["throughput_mbps"])
        c["share_pct"].append(st.get("share_pct"))
        c["loss_pct"].append(st.get("loss_pct"))
        c["owd"] += [r["owd_ms"] for r in rows if r.get("owd_ms") is not None]
        c["rows"] += rows
    for c in out["classes"].values():
        owd = c.pop("owd")
        c["owd_p50_ms"], c["owd_p99_ms"] = percentile(owd, 0.5), percentile(owd, 0.99)  # of the seconds' means
        bins, beyond = owd_histogram.merge(c.pop("rows"))
        c["datagrams"] = sum(bins.values()) + beyond
        for name, ms in owd_histogram.tail_ms(bins, beyond).items():
            c[f"pkt_owd_{name}_ms"] = ms
        # the same datagrams in 50-us bins (lower edge in us; 1000 holds everything from 1 ms on)
        coarse: dict[int, int] = {}
        for us, n in bins.items():
            edge = min(1000, (us - 1) // 50 * 50)
            coarse[edge] = coarse.get(edge, 0) + n
        c["pkt_owd_hist_50us"] = dict(sorted(coarse.items()))
        c["mbps"] = round(sum(c["mbps"]), 2)
        shares = [x for x in c["share_pct"] if x is not None]
        c["share_pct"] = round(statistics.mean(shares), 2) if shares else None
        losses = [x for x in c["loss_pct"] if x is not None]
        c["loss_pct"] = round(statistics.mean(losses), 3) if losses else None
    cpus = [v["mean"] for k, v in s.get("cpu_pct", {}).items() if k != "system_pct" and v]
    out["switch_cpu_pct"] = max(cpus) if cpus else None
    out["system_cpu_pct"] = s.get("cpu_pct", {}).get("system_pct", {}).get("mean")
    out["steal_pct"] = s["validity"].get("steal_pct")
    qd = s.get("queueing_delay_us", {})
    for sw in qd.values():
        for port in sw.values():
            hi = port.get("7", {}).get(phase["name"])
            if hi:
                out["switch_high_queue_delay_us"] = {k: hi.get(f"{k}_us") for k in ("p50", "p99")}
    return out


def lab_run(args: argparse.Namespace, name: str, topo: str, case: str, alg: str, mbps: float,
            extra: tuple[str, ...] = ()) -> dict:  # fmt: skip
    run_dir = args.out / name
    cmd = [str(LANES), "lab", "run", "--topo", topo, "--case", case, "--alg", alg, "--proto", "udp",
           "--link-mbps", f"{mbps:g}", "--duration", f"{args.duration:g}", "--out", str(run_dir), *extra]  # fmt: skip
    t = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    (args.out / f"{name}.log").write_text(r.stdout + r.stderr)
    if r.returncode != 0:
        tail = (r.stderr.strip().splitlines() or ["?"])[-1]
        print(f"bench: {name} failed: {tail}", file=sys.stderr, flush=True)
        return {"name": name, "error": tail}
    d = {"name": name, "topo": topo, "case": case, "alg": alg, "mbps": mbps, **digest(run_dir, case)}
    hi = d["classes"].get("high", {})
    print(f"bench: {name} done in {time.monotonic() - t:.0f} s: high {hi.get('mbps')} Mb/s, loss "
          f"{hi.get('loss_pct')} %, OWD p50 {hi.get('owd_p50_ms')} p99 {hi.get('owd_p99_ms')} ms (datagrams: "
          f"{hi.get('pkt_owd_p50_ms')} / {hi.get('pkt_owd_p99_ms')}), switch CPU "
          f"{d['switch_cpu_pct']} %, valid {d['valid']}", file=sys.stderr, flush=True)  # fmt: skip
    return d


class CpuHog:
    """A CPU-bound process at normal priority beside the run (stopped by PID)."""

    def __enter__(self) -> Self:
        self.p = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        return self

    def __exit__(self, *exc: object) -> None:
        self.p.kill()
        self.p.wait()


def table(results: list[dict]) -> str:
    head = ("| run | high Mb/s | high loss % | high OWD p50 / p99 ms (seconds' means) "
            "| high OWD p50 / p99 / p99.9 ms (datagrams) | shares h/m/l % | switch CPU % "
            "| machine CPU % | steal % | valid |")  # fmt: skip
    rows = [head, "|" + "---|" * 10]
    for r in results:
        if "error" in r:
            rows.append(f"| {r['name']} | failed: {r['error']} |" + " |" * 8)
            continue
        c = r["classes"]
        hi = c.get("high", {})
        shares = "/".join(f"{c[k]['share_pct']:.1f}" if c.get(k, {}).get("share_pct") is not None else "–"
                          for k in ("high", "medium", "low"))  # fmt: skip
        rows.append(
            f"| {r['name']} | {hi.get('mbps')} | {hi.get('loss_pct')} | {hi.get('owd_p50_ms')} / "
            f"{hi.get('owd_p99_ms')} | {hi.get('pkt_owd_p50_ms')} / {hi.get('pkt_owd_p99_ms')} / "
            f"{hi.get('pkt_owd_p999_ms')} | {shares} | {r['switch_cpu_pct'] if r['alg'] != 'linux-htb' else '–'} | "
            f"{r['system_cpu_pct']} | {r['steal_pct']} | {'yes' if r['valid'] else 'NO: ' + '; '.join(r['warnings'])} |"
        )
    return "\n".join(rows)


def redigest(out: Path) -> int:
    results = json.loads((out / "results.json").read_text())
    for r in results:
        if "error" not in r:
            r.update(digest(out / r["name"], r["case"]))
    (out / "results.json").write_text(json.dumps(results, indent=1))
    (out / "results.md").write_text(table(results) + "\n")
    print(table(results))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=20.0)
    ap.add_argument("--out", type=Path, default=REPO / "results" / "bench" / "lab_vs_htb")
    ap.add_argument("--only", choices=["star200", "tree2", "star1g"], help="run one part")
    ap.add_argument("--wake", help="lanes switch wake settings to compare in star200, comma-separated "
                    "(leading, high, arrivals; default: the switch's)")  # fmt: skip
    ap.add_argument("--batch-us", help="lanes switch batch windows to compare in star200, comma-separated "
                    "(default: the switch's own)")  # fmt: skip
    ap.add_argument("--redigest", action="store_true",
                    help="read OUT/results.json's runs again from their directories (after a change to the digest)")
    args = ap.parse_args()
    if args.redigest:
        return redigest(args.out)
    wakes: list[str | None] = [None]
    if args.wake:
        wakes = list(args.wake.split(","))
        if any(w not in ("leading", "high", "arrivals") for w in wakes):
            print(f"bench: --wake takes leading, high and/or arrivals, got '{args.wake}'", file=sys.stderr)
            return 2
    batches: list[str | None] = list(args.batch_us.split(",")) if args.batch_us else [None]
    args.out.mkdir(parents=True, exist_ok=True)
    results: list[dict] = []
    if args.only in (None, "star200"):
        for load in ("quiet", "busy"):
            for i in range(args.rounds):
                runs = [("rlsp-drr", w, b) for w in wakes for b in batches] + [("linux-htb", None, None)]
                for alg, wake, batch in runs:
                    name = f"star200_{load}_{i + 1}_{alg}" + (f"_wake-{wake}" if wake else "")
                    name += f"_batch-{batch}" if batch else ""
                    extra = (("--wake", wake) if wake else ()) + (("--batch-us", batch) if batch else ())
                    if load == "busy":
                        with CpuHog():
                            results.append(lab_run(args, name, "star", "proactive", alg, 200, extra))
                    else:
                        results.append(lab_run(args, name, "star", "proactive", alg, 200, extra))
    if args.only in (None, "tree2"):
        for alg in ("rlsp-drr", "linux-htb"):
            results.append(lab_run(args, f"tree2_100_runtime_high80_{alg}", "tree2", "runtime", alg, 100,
                                   ("--high-load", "80")))  # fmt: skip
    if args.only in (None, "star1g"):
        for alg in ("rlsp-drr", "linux-htb"):
            results.append(lab_run(args, f"star1000_{alg}", "star", "proactive", alg, 1000))
    (args.out / "results.json").write_text(json.dumps(results, indent=1))
    md = table(results)
    (args.out / "results.md").write_text(md + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A live subnet's reaction to failures, lanes's engines (OpenSM plugin) against OpenSM's own, with
OpenSM logging lightly (no routing dumps). Per cell (fat tree x engine x run) one OpenSM daemon
(1 s sweeps) on ibsim comes up, then ibsim's console applies, in order: a leaf's up link down, the
same link back (relink), a level-2 switch down and back, a compute node down and back. Per event:
seconds from the console command to OpenSM's SUBNET UP (and to 'tables configured'), from OpenSM's
log stamps; SMPs OpenSM sent meanwhile (QP0 MADs sent, its console's `status`); the engine OpenSM
says configured the tables; for lanes's engines the LFT blocks and the deadlock check the plugin
reports. With --check, after each event (outside the timed window) the switches' tables and the
fabric are read by SMP (dump_fts, ibnetdiscover) and lanes checks them: every engine, OpenSM's
fall-backs included, is judged on what the switches hold.

    python bench/fabric_live.py [--sizes 648,5832] [--engines ...] [--runs 3] [--check]
        [--json bench/results/fabric_live.json] [--commit]
    python bench/fabric_live.py --table [--json ...]     # Markdown tables from the JSON

Resumable: cells already in the JSON are skipped, unless their engine is named in --redo (cells
measured before a change to that engine: each is measured again, once, and replaced); each
finished cell is written at once (and committed with --commit), with the lanes commit it ran on.
Each cell holds /work/timing.lock (--lock) while it runs, and the load average before and after is
recorded beside it.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lanes.errors import LanesError
from lanes.fabric import native, smpread
from lanes.fabric.live import LiveSubnet

TREES = {648: "18-2-1-full", 5832: "18-3-1-half", 11664: "18-3-1-full"}
ENGINES = ("lanes-ftree", "lanes-slimupdate", "lanes-subtree", "ftree", "updn", "minhop")
# (label, console command): a leaf's up link (ports 19-36 of a leaf go up on these trees), a
# level-2 switch, a compute node; each brought back before the next.
EVENTS = (
    ("link", "unlink s1-0[20]"),
    ("relink", "relink s1-0[20]"),
    ("switch", "unlink s2-1"),
    ("switch back", "relink s2-1"),
    ("node", "unlink h-7"),
    ("node back", "relink h-7"),
)
SHOWN = ("link", "switch", "node", "relink")


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _lock(path: str) -> Any:
    fh = open(path, "a")  # noqa: SIM115 - held for the cell
    fcntl.flock(fh, fcntl.LOCK_EX)
    return fh


def _checked(sub: LiveSubnet, prev: str | None, k: int) -> tuple[dict[str, Any], str]:
    """The switches' tables and the fabric as it is, read by SMP and checked by lanes."""
    tables = str(smpread.read_tables(sub.sim_env, sub.outdir, sub.outdir / f"smp-{k}.dump"))
    net = str(smpread.discover(sub.sim_env, sub.outdir, sub.outdir / f"smp-{k}.net"))
    out: dict[str, Any] = {}
    try:
        c = native.check(net, tables)
        out = {k2: c[k2] for k2 in ("deadlock_free", "cdg_acyclic", "unreachable", "updown_violations")}
    except LanesError as e:
        out = {"check_error": str(e)}
    if prev is not None:
        out["lft_blocks_changed"] = native.diff(prev, tables)["blocks"]
    return out, tables


def _slim(r: dict[str, Any]) -> dict[str, Any]:
    """An event's record without the plugin's full report: its engine, blocks and check."""
    out = {k: v for k, v in r.items() if k != "lanes"}
    lanes = r.get("lanes")
    if lanes:
        rep = lanes.get("lanes", {})
        chk = rep.get("check", {})
        out["plugin"] = {
            "engine": lanes.get("engine"),
            "error": lanes.get("error"),
            "lft_blocks_changed": rep.get("lft_blocks_changed"),
            "routing_seconds": rep.get("routing_seconds"),
            "deadlock_free": chk.get("deadlock_free"),
            "unreachable": chk.get("unreachable"),
        }
    return out


def run_cell(
    net: str, engine: str, work: Path, check: bool, timeout: float, check_until: str | None = None
) -> dict[str, Any]:
    cell: dict[str, Any] = {"engine": engine, "load_before": loadavg(), "events": []}
    t0 = time.monotonic()
    with LiveSubnet(net, engine, str(work), sweep=1) as sub:
        start = sub.startup()
        cell["start"] = start
        prev = None
        if check:
            start["tables"], prev = _checked(sub, None, 0)
        for k, (label, cmd) in enumerate(EVENTS, start=1):
            print(f"bench:   {label} ({cmd}) ...", file=sys.stderr, flush=True)
            r = _slim(sub.apply(cmd, timeout=timeout))
            r["label"] = label
            if check:
                r["tables"], prev = _checked(sub, prev, k)
                # Reading a large fabric by SMP takes a minute: stop after the event asked for.
                check = label != check_until
            print(
                f"bench:   {label}: SUBNET UP after {r['event_to_subnet_up_seconds']} s, "
                f"{r['smps_sent']} SMPs, {r['engine_used']}",
                file=sys.stderr,
                flush=True,
            )
            cell["events"].append(r)
    cell["wall_seconds"] = round(time.monotonic() - t0, 1)
    cell["load_after"] = loadavg()
    return cell


def _lanes_commit() -> str:
    """The last commit that changed lanes's code (not the results the bench commits), with
    "+changes" when the tree differs from it."""
    repo = Path(__file__).resolve().parents[1]
    code = ["crates", "python", "Cargo.toml", "Cargo.lock"]
    head = subprocess.run(
        ["git", "-C", str(repo), "log", "-1", "--format=%h", "--", *code],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(repo), "diff", "--quiet", "HEAD", "--", *code], check=False
    ).returncode
    return head + ("+changes" if dirty else "")


def _stale(cell: dict[str, Any] | None, redo: set[str], commit: str) -> bool:
    """Whether a cell must be measured (again): missing, or of a --redo engine on another commit."""
    if cell is None:
        return True
    return cell.get("engine") in redo and cell.get("lanes_commit") != commit


def _git_commit(path: Path, msg: str) -> None:
    repo = Path(__file__).resolve().parents[1]
    for _ in range(5):  # another git command may hold the index lock for a moment
        add = subprocess.run(["git", "-C", str(repo), "add", str(path)], check=False)
        done = subprocess.run(
            ["git", "-C", str(repo), "commit", "-q", "-m", msg, "--", str(path)], check=False
        )
        if add.returncode == 0 and done.returncode == 0:
            return
        time.sleep(2)
    print(f"bench: could not commit {path} (it is written; commit it by hand)", file=sys.stderr)


def measure(args: argparse.Namespace) -> None:
    path = Path(args.json)
    data: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    data.setdefault("cells", {})
    data["command"] = "python bench/fabric_live.py " + " ".join(sys.argv[1:])
    work = Path(args.work or tempfile.mkdtemp(prefix="fabric-live-"))
    sizes = [int(s) for s in args.sizes.split(",")]
    engines = args.engines.split(",")
    redo = set(args.redo.split(",")) if args.redo else set()
    commit = _lanes_commit()
    todo = [
        (size, run, engine)
        for size in sizes
        for run in range(1, args.runs + 1)
        for engine in engines
        if _stale(data["cells"].get(f"{size}/{engine}/{run}"), redo, commit)
    ]
    print(f"bench: {len(todo)} cells to run, work in {work}", file=sys.stderr)
    for i, (size, run, engine) in enumerate(todo, start=1):
        key = f"{size}/{engine}/{run}"
        net = work / f"{TREES[size]}.net"
        if not net.exists():
            native.gen({"kind": "named", "name": TREES[size]}, str(net))
        print(f"bench: [{i}/{len(todo)}] {key} ({TREES[size]}) ...", file=sys.stderr, flush=True)
        check = args.check and run <= args.check_runs
        lock = _lock(args.lock)
        try:
            try:
                cell = run_cell(
                    str(net), engine, work / key.replace("/", "-"), check, args.timeout, args.check_until
                )
            except LanesError as e:
                cell = {"engine": engine, "error": str(e), "load_after": loadavg()}
                print(f"bench: {key}: {e}", file=sys.stderr)
            cell.update(
                size=size,
                tree=TREES[size],
                run=run,
                when=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                lanes_commit=commit,
            )
            # Re-read before writing (under the lock): another bench process may have added cells.
            if path.exists():
                data["cells"] = {**json.loads(path.read_text()).get("cells", {}), **data["cells"]}
            data["cells"][key] = cell
            path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        finally:
            lock.close()
        if args.commit:
            _git_commit(path, f"fabric live bench: {key} measured")
        if args.stop_at and time.strftime("%H:%M", time.gmtime()) >= args.stop_at:
            print(f"bench: stopping at {args.stop_at} UTC; rerun to resume", file=sys.stderr)
            break


def _mmm(xs: list[float]) -> str:
    if not xs:
        return "-"
    fmt = (lambda v: f"{v:.2f}") if isinstance(xs[0], float) else str
    if len(xs) < 3:
        return " / ".join(fmt(x) for x in xs) + f" ({len(xs)} run{'s' if len(xs) > 1 else ''})"
    return f"{fmt(min(xs))} / {fmt(statistics.median(xs))} / {fmt(max(xs))}"


def _either(event: dict[str, Any], key: str) -> Any:
    """From the tables read by SMP (--check) if there, else the plugin's report (lanes engines)."""
    for source in ("tables", "plugin"):
        value = (event.get(source) or {}).get(key)
        if value is not None:
            return value
    return None


def _events(rows: list[dict[str, Any]], engine: str, label: str) -> list[dict[str, Any]]:
    return [e for c in rows if c["engine"] == engine for e in c.get("events", []) if e.get("label") == label]


def _median(xs: list[Any]) -> float | None:
    return statistics.median(xs) if xs else None


def _start_table(rows: list[dict[str, Any]]) -> None:
    print(
        "| engine | runs | routing s | tables configured -> SUBNET UP s | MASTER -> SUBNET UP s | SMPs sent |"
    )
    print("|---|---|---|---|---|---|")
    for engine in ENGINES:
        starts = [c["start"] for c in rows if c["engine"] == engine and "start" in c]
        if not starts:
            print(f"| {engine} | 0 | missing | - | - | - |")
            continue

        def col(key: str, starts: list[dict[str, Any]] = starts) -> str:
            return _mmm([x for s in starts if (x := s.get(key)) is not None])

        print(
            f"| {engine} | {len(starts)} | {col('routing_seconds')} | {col('configured_to_subnet_up_seconds')} | "
            f"{col('master_to_subnet_up_seconds')} | {col('smps_sent')} |"
        )


def _event_table(rows: list[dict[str, Any]]) -> None:
    print(
        "| event | engine | runs | event -> SUBNET UP s | SMPs sent | LFT blocks | engine used | deadlock free |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for label in SHOWN:
        for engine in ENGINES:
            evs = _events(rows, engine, label)
            if not evs:
                print(f"| {label} | {engine} | 0 | missing | - | - | - | - |")
                continue
            up = [x for e in evs if (x := e.get("event_to_subnet_up_seconds")) is not None]
            smps = [e["smps_sent"] for e in evs]
            blocks = [x for e in evs if (x := _either(e, "lft_blocks_changed")) is not None]
            used = sorted({str(e.get("engine_used")) for e in evs})
            free = [f for e in evs if (f := _either(e, "deadlock_free")) is not None]
            free_s = f"{sum(1 for f in free if f)}/{len(free)}" if free else "-"
            print(
                f"| {label} | {engine} | {len(evs)} | {_mmm(up)} | {_mmm(smps)} | {_mmm(blocks)} | "
                f"{', '.join(used)} | {free_s} |"
            )


def _headline(cells: dict[str, Any]) -> None:
    """Per size and event, medians: lanes's best engine against OpenSM's best, for each measure."""
    print(
        "| nodes | event | fastest to SUBNET UP, lanes / OpenSM | fewest SMPs sent, lanes / OpenSM | "
        "fewest LFT blocks, lanes / OpenSM | sooner | fewer SMPs | fewer blocks |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for size in TREES:
        rows = [c for c in cells.values() if c.get("size") == size]
        for label in SHOWN:
            med: dict[str, list[float | None]] = {}
            for engine in ENGINES:
                evs = _events(rows, engine, label)
                if evs:
                    med[engine] = [
                        _median([x for e in evs if (x := e.get("event_to_subnet_up_seconds")) is not None]),
                        _median([e["smps_sent"] for e in evs]),
                        _median([x for e in evs if (x := _either(e, "lft_blocks_changed")) is not None]),
                    ]
            cols, verdicts = [], []
            for m, fmt in ((0, "{:.2f} s"), (1, "{:.0f}"), (2, "{:.0f}")):

                def best(
                    lanes: bool, m: int = m, med: dict[str, list[float | None]] = med
                ) -> tuple[str, float] | None:
                    got = {
                        e: v[m]
                        for e, v in med.items()
                        if e.startswith("lanes-") == lanes and v[m] is not None
                    }
                    return min(got.items(), key=lambda kv: kv[1]) if got else None

                ours, theirs = best(True), best(False)
                show = [f"{b[0]} {fmt.format(b[1])}" if b else "missing" for b in (ours, theirs)]
                cols.append(" / ".join(show))
                verdicts.append("-" if not ours or not theirs else ("yes" if ours[1] < theirs[1] else "no"))
            missing = [e for e in ENGINES if e not in med]
            note = f" (missing: {', '.join(missing)})" if missing else ""
            print(f"| {size} | {label} | {' | '.join(cols)} | {' | '.join(verdicts)}{note} |")


def table(args: argparse.Namespace) -> None:
    cells = json.loads(Path(args.json).read_text())["cells"]
    for size, tree in TREES.items():
        rows = [c for c in cells.values() if c.get("size") == size]
        if not rows:
            print(f"\n{tree} ({size} nodes): not measured\n")
            continue
        print(f"\n{tree} ({size} nodes), first sweep; min / median / max of the runs\n")
        _start_table(rows)
        print(f"\n{tree} ({size} nodes), events; min / median / max of the runs\n")
        _event_table(rows)
    print("\nMedians per engine; lanes's best engine against OpenSM's best, measure by measure\n")
    _headline(cells)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="648,5832,11664", help="compute nodes: 648, 5832, 11664")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument(
        "--redo",
        help="engines whose cells are measured again unless they ran on this commit, e.g. lanes-slimupdate",
    )
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--check", action="store_true", help="read the tables by SMP after each event and check them"
    )
    ap.add_argument("--check-runs", type=int, default=99, help="with --check: check only runs up to this one")
    ap.add_argument(
        "--check-until", help="with --check: read and check no more after this event (e.g. relink)"
    )
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for one event's SUBNET UP")
    ap.add_argument("--json", default=str(Path(__file__).resolve().parent / "results" / "fabric_live.json"))
    ap.add_argument("--work", help="directory for the runs (default: a new temporary one)")
    ap.add_argument("--lock", default="/work/timing.lock", help="lock file held while a cell runs")
    ap.add_argument("--commit", action="store_true", help="git commit the JSON after each cell")
    ap.add_argument("--stop-at", help="HH:MM UTC: start no cell after this time")
    ap.add_argument("--table", action="store_true", help="print the Markdown tables from the JSON")
    args = ap.parse_args()
    if args.table:
        table(args)
    else:
        measure(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())

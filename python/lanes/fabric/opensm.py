"""OpenSM + ibsim as the real peer: start ibsim on a netlist, run OpenSM once with one of its engines
or with our LFTs (-R file -U), collect its dumps and routing time, and trace sample routes with
ibtracert. Every process is started and stopped by PID; each run has its own IBSIM_SOCKNAME."""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from lanes.errors import LanesError
from lanes.fabric import native, plugin

UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
TOOLS = ("ibsim", "opensm", "ibtracert")
# OpenSM 3.3.23's own engines (opensm --help) and its "no_fallback" switch for -R lists.
OSM_ENGINES = (
    "minhop",
    "updn",
    "dnup",
    "file",
    "ftree",
    "lash",
    "dor",
    "torus-2QoS",
    "nue",
    "dfsssp",
    "sssp",
)


def check_engines(engines: str) -> list[str]:
    """The engine names of an -R list (comma separated); an unknown name is refused, since OpenSM
    itself only logs it and routes with min-hop."""
    names = [e.strip() for e in engines.split(",") if e.strip()]
    known = (*OSM_ENGINES, *plugin.ENGINES)
    for name in names:
        if name not in known and name != "no_fallback":
            raise LanesError(
                f"unknown routing engine {name!r} (OpenSM's: {', '.join(OSM_ENGINES)}; lanes's: {', '.join(plugin.ENGINES)})"
            )
    if not [n for n in names if n != "no_fallback"]:
        raise LanesError("no routing engine named")
    return names


def fallback(log: str, engines: str) -> str | None:
    """Why OpenSM did not route with the first engine asked for (None when it did): an engine it
    could not set up, or one that refused the fabric so that the next one (or min-hop) routed."""
    for line in log.splitlines():
        if "cannot find or setup routing engine" in line:
            return "OpenSM " + line.split("-> ", 1)[-1].strip()
    want = next(e for e in check_engines(engines) if e != "no_fallback")
    used = engine_used(log)
    if used is not None and used != want:
        return f"OpenSM routed with {used}, not {want} ({want} failed on this fabric; see opensm.log)"
    return None


def missing_tools() -> list[str]:
    """Names of the tools (or the umad2sim library) that are not installed."""
    missing = [t for t in TOOLS if shutil.which(t) is None and not Path("/usr/sbin", t).exists()]
    if not Path(UMAD2SIM).exists():
        missing.append("libumad2sim0")
    return missing


def _tool(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


_LOG_TIME = re.compile(r"^\w{3}\s+\d+\s+(\d\d):(\d\d):(\d\d)\s+(\d+)\s")


def _stamp(line: str) -> float | None:
    m = _LOG_TIME.match(line)
    if not m:
        return None
    h, mi, s, us = (int(x) for x in m.groups())
    return h * 3600 + mi * 60 + s + us / 1e6


def routing_times(log: str) -> dict[str, float | None]:
    """Times from OpenSM's log: from entering MASTER (discovery done) and, for ftree, from its
    topology summary (fat tree built) to 'tables configured on all switches' (routes computed and
    sent). Lines carry microsecond stamps."""
    master = topo = done = None
    for line in log.splitlines():
        t = _stamp(line)
        if t is None:
            continue
        if "Entering MASTER state" in line and master is None:
            master = t
        elif ("fabric_dump_general_info" in line or "lanes reads the subnet" in line) and topo is None:
            topo = t
        elif "tables configured on all switches" in line:
            done = t

    def span(a: float | None) -> float | None:
        if a is None or done is None:
            return None
        d = done - a
        return round(d + 86400 if d < 0 else d, 6)

    return {"master_to_configured_seconds": span(master), "routing_seconds": span(topo if topo else master)}


def engine_used(log: str) -> str | None:
    """The engine whose tables OpenSM configured last ('<name> tables configured on all switches'):
    shows a fall-back to min-hop when the engine asked for refused the fabric."""
    used = None
    for line in log.splitlines():
        m = re.search(r"-> (?:\w+: )?(\S+) tables configured on all switches", line)
        if m:
            used = m.group(1)
    return used


def parse_dump_lids(path: Path) -> dict[str, int]:
    """Compute-node name -> LID from an opensm-lfts.dump."""
    lids: dict[str, int] = {}
    headers = 0
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("Unicast"):
                headers += 1
                if headers > 1 and lids:
                    break  # every switch lists the same destinations
            m = re.match(r"0x([0-9a-fA-F]+) \d+ # Channel Adapter portguid \S+ '(.*)'", line)
            if m:
                lids[m.group(2)] = int(m.group(1), 16)
    return lids


def parse_lfts(path: Path) -> dict[int, dict[int, int]]:
    """switch GUID -> {LID: port} from an opensm-lfts.dump."""
    tables: dict[int, dict[int, int]] = {}
    cur: dict[int, int] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("Unicast"):
                m = re.search(r"guid (0x[0-9a-fA-F]+)", line)
                if not m:
                    raise LanesError(f"{path}: switch header without guid")
                cur = tables.setdefault(int(m.group(1), 16), {})
            elif line.startswith("0x"):
                parts = line.split()
                if len(parts) >= 2 and parts[1].isdigit():
                    cur[int(parts[0], 16)] = int(parts[1])
    return tables


_HOP = re.compile(r"^\[(\d+)\] -> (switch|ca) port \{(0x[0-9a-fA-F]+)\}\[\d+\] lid (\d+)")


def check_trace(output: str, dst: int, tables: dict[int, dict[int, int]]) -> tuple[bool, int]:
    """True when every switch hop ibtracert reports leaves by the port the LFTs name."""
    hops = [
        (int(m.group(1)), m.group(2), int(m.group(3), 16), int(m.group(4)))
        for m in (_HOP.match(x.strip()) for x in output.splitlines())
        if m
    ]
    if not hops or hops[-1][1] != "ca" or hops[-1][3] != dst:
        return False, len(hops)
    for prev, nxt in itertools.pairwise(hops):
        if prev[1] != "switch" or tables.get(prev[2], {}).get(dst) != nxt[0]:
            return False, len(hops)
    return True, len(hops)


def run(
    net: str,
    engine: str,
    out: str,
    timeout: float = 600.0,
    lfts: str | None = None,
    traces: int = 8,
    compare: bool = False,
    trace_nodes: list[str] | None = None,
    extra_args: list[str] | None = None,
    command: list[str] | None = None,
) -> dict[str, Any]:
    """`command` starts OpenSM instead of plain opensm (e.g. the lanes-opensm wrapper, which then
    loads the plugin itself)."""
    missing = missing_tools()
    if missing:
        raise LanesError(f"not installed: {', '.join(missing)} (run make setup)")
    check_engines(engine)
    if lfts is not None:
        engine = "file"
        if not Path(lfts).is_file():
            raise LanesError(f"cannot read {lfts}")
    elif engine == "file":
        raise LanesError("engine file needs --lfts")
    outdir = Path(out).resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    # Old dumps, and OpenSM's guid2lid cache, which would override the netlist's LIDs.
    for old in [
        *outdir.glob("opensm-*.dump"),
        outdir / "guid2lid",
        outdir / "guid2mkey",
        outdir / "neighbors",
        outdir / "opensm.log",  # OpenSM appends: an old run's stamps would skew the times
    ]:
        old.unlink(missing_ok=True)
    # ibsim takes LIDs from the netlist: give it ours (or those of the tables to load), so OpenSM's
    # LIDs are the ones our tables were computed for and dumps compare entry by entry.
    user_net = net
    net = str(outdir / "fabric.net")
    norm = native.normalize(user_net, net, str(Path(lfts).resolve()) if lfts else None)
    nodes, switches, ports = norm["nodes"], norm["switches"], norm["ports"]
    sock = f"lanes-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    env = dict(os.environ, IBSIM_SOCKNAME=sock)
    sim_env = dict(env, LD_PRELOAD=UMAD2SIM, OSM_CACHE_DIR=str(outdir), OSM_TMP_DIR=str(outdir))
    ibsim_log = open(outdir / "ibsim.log", "wb")  # noqa: SIM115 - closed in the finally below
    # -n: no console; sizes beyond ibsim's defaults (2048 nodes, 256 switches).
    ibsim = subprocess.Popen(
        [
            _tool("ibsim"),
            "-n",
            "-s",
            "-N",
            str(nodes + 16),
            "-S",
            str(switches + 16),
            "-P",
            str(ports + 64),
            "-L",
            str(max(30720, nodes + 64)),
            str(Path(net).resolve()),
        ],
        stdin=subprocess.DEVNULL,
        stdout=ibsim_log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    result: dict[str, Any] = {"engine": engine, "netlist": user_net, "out": str(outdir), "ibsim_socket": sock}
    try:
        deadline = time.monotonic() + min(timeout, 120)
        while b"Network simulator ready" not in (outdir / "ibsim.log").read_bytes():
            if ibsim.poll() is not None or time.monotonic() > deadline:
                tail = (outdir / "ibsim.log").read_text(errors="replace").strip().splitlines()[-1:]
                raise LanesError(f"ibsim did not start: {tail[0] if tail else 'no output'}")
            time.sleep(0.05)
        cmd = [
            *(command or [_tool("opensm")]),
            "-o",
            "-D",
            "0x43",
            "-f",
            str(outdir / "opensm.log"),
            "--dump_files_dir",
            str(outdir),
            "-R",
            engine,
        ]
        if lfts is not None:
            cmd += ["-U", str(Path(lfts).resolve())]
        if plugin.uses_plugin(engine) and command is None:
            cmd += ["-F", str(plugin.prepare(outdir, sim_env))]
        cmd += extra_args or []
        print(f"fabric: opensm -R {engine} on {net} ({nodes} nodes) ...", file=sys.stderr)
        start = time.monotonic()
        with open(outdir / "opensm.out", "wb") as osm_out:
            # umad2sim writes a fake sysfs (sys-<pid>/) into the working directory: use outdir.
            osm = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=osm_out,
                stderr=subprocess.STDOUT,
                env=sim_env,
                cwd=outdir,
            )
            try:
                while True:
                    try:
                        rc = osm.wait(timeout=10)
                        break
                    except subprocess.TimeoutExpired:
                        waited = time.monotonic() - start
                        if waited > timeout:
                            _stop(osm)
                            rc = -1
                            result["timeout"] = True
                            break
                        print(f"fabric: opensm running for {waited:.0f} s", file=sys.stderr)
            finally:
                _stop(osm)
        result["rc"] = rc
        result["wall_seconds"] = round(time.monotonic() - start, 3)
        log = (outdir / "opensm.log").read_text(errors="replace") if (outdir / "opensm.log").exists() else ""
        result.update(routing_times(log))
        result["engine_used"] = engine_used(log)
        why = fallback(log, engine)
        if why:
            result["fallback"] = why
        if plugin.uses_plugin(engine):
            result["lanes_routings"] = plugin.routings(outdir)
        errors = [x.split("-> ", 1)[-1] for x in log.splitlines() if " ERR " in x]
        result["log_errors"] = errors[:5]
        dump = outdir / "opensm-lfts.dump"
        if not dump.exists():
            result["rc"] = rc or 1
            result["error"] = "OpenSM wrote no opensm-lfts.dump"
            return result
        result["lfts_dump"] = str(dump)
        try:
            result["balance"] = native.balance(net, str(dump))
            result["check"] = native.check(net, str(dump))
        except LanesError as e:  # e.g. not a fat tree: OpenSM's tables are still traced below
            result["check_error"] = str(e)
        if lfts is not None:
            d = native.diff(lfts, str(dump))
            result["loaded_vs_ours"] = d
        result["lids_match"] = _lids_match(net, dump)
        if compare and lfts is None and "balance" in result:
            result["ours"] = _compare(net, engine, outdir, result["balance"])
        if traces > 0:
            result["traces"] = _traces(dump, traces, sim_env, outdir, trace_nodes or [])
    finally:
        _stop(ibsim)
        ibsim_log.close()
    return result


def _lids_match(net: str, dump: Path) -> bool:
    """True when OpenSM gave every compute node the LID the netlist names (ours)."""
    want: dict[str, int] = {}
    with open(net, encoding="utf-8") as fh:
        for line in fh:
            m = re.match(r'\[\d+\]\s+"([^"]+)"\[\d+\]\s+# lid (\d+)', line)
            if m:
                want[m.group(1)] = int(m.group(2))
    got = parse_dump_lids(dump)
    return bool(got) and all(want.get(name) == lid for name, lid in got.items())


def _compare(net: str, engine: str, outdir: Path, theirs: dict[str, Any]) -> dict[str, Any]:
    """Routes the same fabric with our engine of the same name and compares the balance."""
    if engine not in ("ftree",):
        return {"error": f"no lanes engine to compare with OpenSM's {engine}"}
    mine = str(outdir / "lanes-lfts.dump")
    r = native.route(net, engine, mine, {"check": False})
    b = native.balance(net, mine)
    return {
        "engine": engine,
        "lfts_dump": mine,
        "routing_seconds": round(r["seconds"], 6),
        "balance": b,
        "balance_equal": b["levels"] == theirs["levels"] and b["broken_routes"] == theirs["broken_routes"],
    }


def _traces(
    dump: Path, count: int, env: dict[str, str], outdir: Path, nodes: list[str]
) -> list[dict[str, Any]]:
    by_name = parse_dump_lids(dump)
    lids = sorted(by_name.values())
    tables = parse_lfts(dump)
    if len(lids) < 2:
        return []
    n = len(lids)
    # Deterministic spread of (source, destination) pairs over the node list, plus routes from a
    # few sources to each named node (e.g. a VM that just moved).
    pairs = [(lids[(i * 7919) % n], lids[(i * 7919 + n // 2 + i) % n]) for i in range(count)]
    for name in nodes:
        if name not in by_name:
            raise LanesError(f"trace: {name!r} is not a compute node of the dump")
        pairs += [(lids[(i * 104729) % n], by_name[name]) for i in range(4)]
    out = []
    for src, dst in pairs:
        if src == dst:
            continue
        try:
            p = subprocess.run(
                [_tool("ibtracert"), str(src), str(dst)],
                env=env,
                cwd=outdir,
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            ok, hops = check_trace(p.stdout, dst, tables)
        except subprocess.TimeoutExpired:
            ok, hops = False, 0
        out.append({"src": src, "dst": dst, "ok": ok, "hops": hops})
    (outdir / "traces.txt").write_text("".join(f"{t['src']} {t['dst']} {t['ok']}\n" for t in out))
    return out

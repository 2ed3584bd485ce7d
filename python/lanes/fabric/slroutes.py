"""Routes with service levels from OpenSM itself: a daemon on ibsim routes with LASH or DFSSSP
(engines that break cycles by putting paths on different SLs, so VLs) with QoS on (`-Q`, so it
programs and dumps the SL-to-VL tables); the SA answers one PathRecord per (source, destination)
pair of compute nodes (`saquery -p --src-to-dst`), which carries the path's SL. Written out: the
LFTs (opensm-lfts.dump), the SL-to-VL tables (opensm-sl2vl.dump) and path-sl.txt (SLID DLID SL),
then checked by lanes per VL and VL-blind."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from lanes.errors import LanesError
from lanes.fabric import native, opensm
from lanes.fabric.live import LiveSubnet

_SL = re.compile(r"^\s*sl\.+(0x[0-9a-fA-F]+|\d+)\s*$", re.MULTILINE)


def torus_netlist(n: int, m: int, hosts: int = 1) -> str:
    """An n x m 2-D torus of switches (ports 1/2: +x/-x, 3/4: +y/-y, then the compute nodes) as an
    ibnetdiscover netlist ibsim loads."""
    if n < 3 or m < 3 or not 1 <= hosts <= 8:
        raise LanesError("torus: at least 3 x 3 switches and 1 to 8 compute nodes per switch")

    def name(i: int, j: int) -> str:
        return f"t{i % n}-{j % m}"

    blocks, cas = [], []
    for i in range(n):
        for j in range(m):
            lines = [
                f"switchguid=0x{0x1000 + i * m + j:x}",
                f'Switch\t{4 + hosts} "{name(i, j)}"',
                f'[1]\t"{name(i + 1, j)}"[2]',
                f'[2]\t"{name(i - 1, j)}"[1]',
                f'[3]\t"{name(i, j + 1)}"[4]',
                f'[4]\t"{name(i, j - 1)}"[3]',
            ]
            for h in range(hosts):
                host = f"h{i}-{j}-{h}"
                lines.append(f'[{5 + h}]\t"{host}"[1]')
                cas.append(
                    f'caguid=0x{0x100000 + 2 * ((i * m + j) * hosts + h):x}\nCa\t1 "{host}"\n[1]\t"{name(i, j)}"[{5 + h}]\n'
                )
            blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks + cas)


def _path_sl(env: dict[str, str], cwd: Path, host: str, slid: int, dlid: int) -> int:
    p = subprocess.run(
        [opensm._tool("saquery"), "-p", "--src-to-dst", f"{slid}:{dlid}"],
        env=dict(env, SIM_HOST=host),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    m = _SL.search(p.stdout)
    if p.returncode != 0 or not m:
        tail = (p.stderr.strip().splitlines() or ["no PathRecord"])[-1]
        raise LanesError(f"saquery {slid}:{dlid} failed: {tail}")
    return int(m.group(1), 0)


def run(net: str, engine: str, out: str, timeout: float = 120) -> dict[str, Any]:
    if shutil.which("saquery") is None and not Path("/usr/sbin/saquery").exists():
        raise LanesError("not installed: saquery (infiniband-diags, run make setup)")
    outdir = Path(out).resolve()
    with LiveSubnet(net, engine, out, extra_args=["-Q"], dumps=True) as sub:
        log = (sub.outdir / "opensm.log").read_text(errors="replace")
        used = opensm.engine_used(log)
        if used != engine:
            errors = [x.split("-> ", 1)[-1] for x in log.splitlines() if " ERR " in x]
            raise LanesError(f"OpenSM routed with {used} instead of {engine}: {errors[:1]}")
        lids = opensm.parse_dump_lids(sub.outdir / "opensm-lfts.dump")
        if not lids:
            raise LanesError("OpenSM's dump names no compute node")
        host = min(lids)  # saquery runs on one compute node; the SA answers for any pair
        pairs = [(s, d) for s in sorted(lids.values()) for d in sorted(lids.values()) if s != d]
        print(f"fabric: {len(pairs)} PathRecords from the SA ...", file=sys.stderr)
        lines = []
        for i, (s, d) in enumerate(pairs):
            lines.append(f"{s} {d} {_path_sl(sub.sim_env, sub.outdir, host, s, d)}\n")
            if (i + 1) % 200 == 0:
                print(f"fabric: {i + 1}/{len(pairs)} PathRecords", file=sys.stderr)
        (outdir / "path-sl.txt").write_text("".join(lines))
        for name in ("opensm-lfts.dump", "opensm-sl2vl.dump"):
            if not (sub.outdir / name).exists():
                raise LanesError(f"OpenSM wrote no {name}")
            shutil.copyfile(sub.outdir / name, outdir / f"{engine}-{name}")
        routing = opensm.routing_times(log)
    lanes_lines = [x for x in log.splitlines() if "Lanes needed" in x or "Virtual Lanes needed" in x]
    lfts, sl2vl, path_sl = (
        str(outdir / f"{engine}-opensm-lfts.dump"),
        str(outdir / f"{engine}-opensm-sl2vl.dump"),
        str(outdir / "path-sl.txt"),
    )
    checked = native.check_vl(sub.net, lfts, path_sl, [], sl2vl)
    return {
        "engine": engine,
        "netlist": net,
        "out": str(outdir),
        "lfts_dump": lfts,
        "sl2vl_dump": sl2vl,
        "path_sl": path_sl,
        "pairs": len(pairs),
        "opensm_lanes_line": lanes_lines[-1].split("-> ", 1)[-1] if lanes_lines else None,
        "routing_seconds": routing.get("routing_seconds"),
        **checked,
    }

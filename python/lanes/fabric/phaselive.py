"""Drop-first phases applied by a live OpenSM: a daemon on ibsim routes with its file engine
(`-R file -U CUR`); each phase's dump is copied to CUR and a SIGHUP makes OpenSM read it again on
its next sweep and send the LFT blocks that changed. Per phase: the FT block writes OpenSM logged
(its debug line "Writing FT block"), and whether the tables it then dumps are the phase's."""

from __future__ import annotations

import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

from lanes.errors import LanesError
from lanes.fabric import native
from lanes.fabric.live import LiveSubnet

_BLOCK_WRITE = "Writing FT block"


def _log(sub: LiveSubnet) -> str:
    log = sub.outdir / "opensm.log"
    return log.read_text(errors="replace") if log.exists() else ""


def apply(net: str, dumps: list[str], out: str, timeout: float = 120) -> list[dict[str, Any]]:
    """Loads dumps[0] (the tables in place), then each further dump in turn; one row per dump."""
    if len(dumps) < 2:
        raise LanesError("phases: give the tables in place and at least one phase")
    for d in dumps:
        if not Path(d).is_file():
            raise LanesError(f"cannot read {d}")
    outdir = Path(out).resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    cur = outdir / "current-lfts.dump"
    shutil.copyfile(dumps[0], cur)
    rows: list[dict[str, Any]] = []
    # 0x4b: errors, info, verbose, debug (the block writes) and routing (the dumps).
    with LiveSubnet(net, "file", out, extra_args=["-U", str(cur)], log_flags="0x4b") as sub:
        # The first sweep programs every switch: its block writes are the initial load.
        rows.append(_state(sub, dumps[0], _log(sub).count(_BLOCK_WRITE), "in place"))
        for i, d in enumerate(dumps[1:], start=1):
            before_writes = _log(sub).count(_BLOCK_WRITE)
            ups = sub.subnet_ups()
            dump = sub.outdir / "opensm-lfts.dump"
            stamp = dump.stat().st_mtime_ns
            shutil.copyfile(d, cur)
            assert sub.osm is not None
            sub.osm.send_signal(signal.SIGHUP)
            start = time.monotonic()
            while True:
                ups = sub.wait_subnet_up(ups, timeout)
                if dump.stat().st_mtime_ns != stamp:
                    break
                if time.monotonic() - start > timeout:
                    raise LanesError(f"OpenSM did not load {d} within {timeout:.0f} s")
            writes = _log(sub).count(_BLOCK_WRITE) - before_writes
            rows.append(_state(sub, d, writes, f"phase {i}"))
    return rows


def _state(sub: LiveSubnet, want: str, writes: int, label: str) -> dict[str, Any]:
    snap = sub.outdir / f"osm-{label.replace(' ', '-')}.dump"
    snap.write_bytes((sub.outdir / "opensm-lfts.dump").read_bytes())
    d = native.diff(want, str(snap))
    print(f"fabric: {label}: OpenSM wrote {writes} LFT blocks", flush=True, file=sys.stderr)
    return {
        "phase": label,
        "tables": want,
        "opensm_dump": str(snap),
        "lft_blocks_written": writes,
        "entries_differing": d["entries"],
        "check": native.check(sub.net, str(snap)),
    }

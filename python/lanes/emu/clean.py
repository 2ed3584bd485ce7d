"""`lanes lab clean`: remove what lab runs that died left behind, using their state files.

Only processes and interfaces a dead run recorded are touched; a run still alive is left alone.
Idempotent: with nothing left over it does nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from lanes.emu.net import STATE_DIR


def _alive(pid: int) -> bool:
    """Whether `pid` still runs. A killed run whose parent died too stays a zombie until init
    reaps it: it is dead (its /proc entry alone would say otherwise)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")


def _kill(pid: int, marker: str) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False
    if marker not in cmdline:
        return False  # the PID was reused by something else
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return False
    return True


def clean() -> int:
    """Returns how many things were removed."""
    removed = 0
    if not STATE_DIR.exists():
        print("lab clean: nothing to clean", file=sys.stderr)
        return 0
    for f in sorted(STATE_DIR.glob("*.json")):
        try:
            st = json.loads(f.read_text())
        except (OSError, ValueError):
            f.unlink(missing_ok=True)
            continue
        if _alive(int(st.get("owner", 0))) and int(st.get("owner", 0)) != os.getpid():
            print(f"lab clean: run {st['owner']} is still running; left alone", file=sys.stderr)
            continue
        for pid in st.get("switch_pids", []):
            removed += _kill(pid, "lanes")
        for pid, name in st.get("host_pids", []):
            removed += _kill(pid, name)
        for pid in st.get("shell_pids", []):
            removed += _kill(pid, "mininet:")
        for name in [*st.get("bridges", []), *st.get("root_ifaces", [])]:
            if Path(f"/sys/class/net/{name}").exists():
                subprocess.run(["ip", "link", "del", name], capture_output=True, check=False)
                removed += 1
        f.unlink(missing_ok=True)
    print(f"lab clean: removed {removed} leftover process(es)/interface(s)", file=sys.stderr)
    return removed

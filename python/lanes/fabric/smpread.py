"""What the switches of a simulated subnet hold, read by SMP (infiniband-diags under umad2sim), so a
live OpenSM needs no debug dumps: `dump_fts` reads every switch's LFT and is rewritten here in
opensm-lfts.dump's format (what lanes's parsers and checks read); `ibnetdiscover` gives the fabric as
it now is (a netlist lanes reads), so tables after a failure are checked against the degraded tree."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from lanes.errors import LanesError

# dump_fts: 'Unicast lids [0x0-0x6] of switch DR path slid 0; dlid 0; 0,3 guid 0x0000000000000102 (s2):'
_HEADER = re.compile(r"^Unicast lids \[.*\] of switch .* guid (0x[0-9a-fA-F]+) \((.*)\):\s*$")
# '0x0004 000 : (Switch portguid 0x0000000000000102: 's2')'
_ENTRY = re.compile(r"^(0x[0-9a-fA-F]+) (\d+) : \((.*)\)\s*$")


def _tool(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


def _run(argv: list[str], env: dict[str, str], cwd: Path, timeout: float) -> str:
    try:
        p = subprocess.run(
            argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
        )
    except FileNotFoundError:
        raise LanesError(f"not installed: {argv[0]} (infiniband-diags; run make setup)") from None
    except subprocess.TimeoutExpired:
        raise LanesError(f"{Path(argv[0]).name} took longer than {timeout:.0f} s") from None
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["no output"])[-1]
        raise LanesError(f"{Path(argv[0]).name} failed (rc {p.returncode}): {last}")
    return p.stdout


def to_lfts_dump(text: str) -> str:
    """dump_fts's output in opensm-lfts.dump's format: a header naming the switch's LID (from its own
    port-0 entry) and guid, then 'LID PORT # TYPE portguid GUID: 'NAME'' lines; switches in GUID
    order, as OpenSM dumps them (dump_fts lists them in discovery order)."""
    tables: dict[int, list[str]] = {}
    guid = name = None
    rows: list[tuple[int, int, str]] = []

    def flush() -> None:
        if guid is None:
            return
        own = next((lid for lid, port, _ in rows if port == 0), 0)  # only its own LID leaves by port 0
        top = max((lid for lid, _, _ in rows), default=0)
        out = [f"Unicast lids [0-{top}] of switch Lid {own} guid 0x{int(guid, 16):016x} ('{name}'):"]
        out.extend(f"0x{lid:04x} {port:03d} # {dest}" for lid, port, dest in rows)
        out.append(f"{top} lids dumped")
        tables[int(guid, 16)] = out

    for line in text.splitlines():
        m = _HEADER.match(line)
        if m:
            flush()
            guid, name, rows = f"0x{int(m.group(1), 16):016x}", m.group(2), []
            continue
        m = _ENTRY.match(line)
        if m and guid is not None:
            rows.append((int(m.group(1), 16), int(m.group(2)), m.group(3)))
    flush()
    if not tables:
        raise LanesError("dump_fts found no switch tables")
    return "".join(line + "\n" for guid in sorted(tables) for line in tables[guid])


def read_tables(env: dict[str, str], cwd: Path, out: Path, timeout: float = 900) -> Path:
    """Reads every reachable switch's LFT by SMP and writes it to `out` as an opensm-lfts.dump."""
    out.write_text(to_lfts_dump(_run([_tool("dump_fts")], env, cwd, timeout)))
    return out


def discover(env: dict[str, str], cwd: Path, out: Path, timeout: float = 900) -> Path:
    """The subnet as it is now (ibnetdiscover's netlist) written to `out`."""
    out.write_text(_run([_tool("ibnetdiscover")], env, cwd, timeout))
    return out

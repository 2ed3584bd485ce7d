"""The OpenSM routing-engine plugin (build/opensm/liblanesosm.so, built by `make setup`): where it
is, the options file that makes OpenSM load it, and the JSON lines it reports per routing run."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from lanes.errors import LanesError

PLUGIN_NAME = "lanesosm"  # OpenSM dlopens lib<name>.so
ENGINES = ("lanes-ftree", "lanes-slimupdate", "lanes-subtree", "lanes-vswitch")


def plugin_dir() -> Path:
    """The directory holding liblanesosm.so: $LANES_OSM_PLUGIN_DIR or the repo's build/opensm."""
    env = os.environ.get("LANES_OSM_PLUGIN_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "build" / "opensm"


def uses_plugin(engines: str) -> bool:
    return any(e.strip() in ENGINES for e in engines.split(","))


def prepare(outdir: Path, env: dict[str, str], tenant: str | None = None, check: bool = True) -> Path:
    """Writes OpenSM's options file naming the plugin, points the loader at it (LD_LIBRARY_PATH in
    `env`) and returns the options file; the plugin appends its reports to lanes-report.jsonl."""
    lib = plugin_dir() / f"lib{PLUGIN_NAME}.so"
    if not lib.exists():
        raise LanesError(f"the OpenSM plugin is not built: {lib} missing (run make setup)")
    report = outdir / "lanes-report.jsonl"
    report.unlink(missing_ok=True)
    opts = [f"report={report}"]
    if not check:
        opts.append("check=0")
    if tenant:
        opts.append(f"tenant={Path(tenant).resolve()}")
    conf = outdir / "opensm-lanes.conf"
    conf.write_text(
        "# written by lanes: load the lanes routing-engine plugin\n"
        f"event_plugin_name {PLUGIN_NAME}\n"
        f"event_plugin_options {' '.join(opts)}\n"
        "force_log_flush TRUE\n"
    )
    env["LD_LIBRARY_PATH"] = ":".join(x for x in (str(lib.parent), env.get("LD_LIBRARY_PATH", "")) if x)
    return conf


def read_report(outdir: Path) -> list[dict[str, Any]]:
    """The plugin's JSON lines so far (routing runs and subnet events, in order)."""
    path = outdir / "lanes-report.jsonl"
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if line:
            try:
                out.append(json.loads(line))
            except ValueError:
                continue  # a line being written
    return out


def routings(outdir: Path) -> list[dict[str, Any]]:
    return [r for r in read_report(outdir) if "engine" in r]

"""The machine a run ran on, recorded in each sweep cell's cell.json: its node name, CPU model and
count, kernel and memory. Latencies are only comparable between machines of one kind (the same CPU
model and count); the node name tells whether two cells shared a machine."""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path


def _cpu_model(cpuinfo: str) -> str:
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "cpu model") and value.strip():
            return " ".join(value.split())
    return "unknown"


def _mem_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def describe() -> dict:
    """This machine, as cell.json records it."""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
    except OSError:
        cpuinfo = ""
    return {
        "node": socket.gethostname(),
        "cpu_model": _cpu_model(cpuinfo),
        "cpus": os.cpu_count() or 0,
        "kernel": platform.release(),
        "mem_gb": _mem_gb(),
    }


def kind(machine: dict | None) -> str:
    """What makes two machines' latencies comparable: CPU model and count ("?" if unrecorded)."""
    if not machine:
        return "?"
    return f"{machine.get('cpu_model', 'unknown')} x{machine.get('cpus', '?')}"

"""What one run of p4c's bmv2 test driver says about a program: refused by the compiler (with its
one-line reason), passed, or failed (with the first mismatch), read from the driver's log."""

from __future__ import annotations

import re
from dataclasses import dataclass

# the driver's log records: "LEVEL: message", a message may continue on the following lines
RECORD = re.compile(r"^(CRITICAL|ERROR|WARNING|INFO|DEBUG): ?(.*)$")
# the driver's own closing lines, which say nothing about why
GENERIC = ("Test failed", "Error compiling", "Execution completed")


@dataclass
class Outcome:
    compiled: bool
    result: str  # passed, failed, refused, timeout
    detail: str = ""


def records(output: str) -> list[tuple[str, str]]:
    """(level, message with its continuation lines joined by spaces)."""
    out: list[tuple[str, str]] = []
    for line in output.splitlines():
        m = RECORD.match(line)
        if m:
            out.append((m.group(1), m.group(2).strip()))
        elif out and line.strip():
            level, msg = out[-1]
            out[-1] = (level, f"{msg} {line.strip()}")
    return out


def compiler_reason(recs: list[tuple[str, str]]) -> str:
    """The compiler's stderr reaches the log as WARNING records: its first error line."""
    for level, msg in recs:
        if level == "WARNING" and "error" in msg.lower():
            return msg
    for level, msg in recs:
        if level in ("WARNING", "ERROR") and msg and not msg.startswith(GENERIC):
            return msg
    return "compiler exited non-zero without a message"


def first_mismatch(recs: list[tuple[str, str]]) -> str:
    errors = [msg for level, msg in recs if level in ("ERROR", "CRITICAL") and not msg.startswith(GENERIC)]
    if not errors:
        return "driver failed without an error message"
    position = next((m for m in errors if m.startswith("Packet different at position")), "")
    differs = next((m for m in errors if re.match(r"Packet \d+ on port \d+ differs", m)), "")
    if differs and position:
        return f"{differs}: {position}"
    return errors[0]


def classify(returncode: int | None, output: str, timeout_s: float) -> Outcome:
    recs = records(output)
    refused = any(msg.startswith("Error compiling") for _, msg in recs)
    if returncode is None:
        compiled = "Running model" in output
        return Outcome(compiled, "timeout", f"no verdict within {timeout_s:g} s")
    if refused:
        return Outcome(False, "refused", compiler_reason(recs))
    if returncode == 0:
        return Outcome(True, "passed")
    return Outcome(True, "failed", first_mismatch(recs))

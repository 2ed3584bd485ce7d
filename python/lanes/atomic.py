"""Files written whole or not at all: the text goes to a temporary file beside the target, is
flushed to disk, and is renamed over the target, so a run killed mid-write (`kill -9`, a power
cut) leaves the old file or none, never a half-written one a resumed sweep would take for a result."""

from __future__ import annotations

import os
from pathlib import Path


def write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)

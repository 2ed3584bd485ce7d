"""A P4Info file read into its protobuf: text format, or binary for .bin/.pb; one-line errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google.protobuf import text_format

from lanes.errors import LanesError
from lanes.p4runtime.proto import p4i


def load_p4info(path: Path) -> Any:
    """The P4Info in `path` (text format, or binary for .bin/.pb)."""
    try:
        text = path.read_text()
    except OSError as e:
        raise LanesError(f"cannot read {path}: {e.strerror}") from None
    info = p4i.P4Info()
    try:
        if path.suffix in (".bin", ".pb"):
            info.ParseFromString(path.read_bytes())
        else:
            text_format.Parse(text, info)
    except Exception as e:  # protobuf raises several error types  # noqa: BLE001
        raise LanesError(f"{path}: not a P4Info ({str(e).splitlines()[0]})") from None
    return info

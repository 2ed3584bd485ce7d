"""What the Thrift handlers share: the switch, the running program's text (changed by a Thrift
config swap or a P4Runtime pipeline commit) and its ProgramView, and the mapping from the
switch's errors to bmv2's error codes."""

from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lanes import _native
from lanes._native import Switch
from lanes.switch.thrift import program as thrift_program
from lanes.switch.thrift.program import ProgramView

if TYPE_CHECKING:  # imported where used: the P4Runtime server needs grpc
    from lanes.p4runtime.pipeline import Pipeline
    from lanes.p4runtime.server import P4RuntimeService

# gRPC codes in _native.P4rtError
NOT_FOUND, OUT_OF_RANGE = 5, 11
ERROR = 100  # bmv2's TableOperationErrorCode.ERROR

EMPTY_PROGRAM = "{}"  # what bm_get_config answers before any program: simple_switch_CLI loads it


class RunningConfig:
    """The bmv2 JSON the switch runs now; views are built once per text. A program committed
    over P4Runtime (the service's `pipeline`, a new object per commit) replaces the text."""

    def __init__(self, text: str | None) -> None:
        self._lock = threading.RLock()
        self._text = text
        self._view: ProgramView | None = None
        self._p4rt: P4RuntimeService | None = None
        self._p4rt_seen: Pipeline | None = None

    def attach_p4runtime(self, service: P4RuntimeService) -> None:
        with self._lock:
            self._p4rt = service
            self._p4rt_seen = getattr(service, "pipeline", None)

    def set_text(self, text: str | None) -> None:
        """A program installed through Thrift: P4Runtime's pipeline no longer describes it."""
        with self._lock:
            self._text = text
            self._view = None
            if self._p4rt is not None:
                with self._p4rt.lock:
                    self._p4rt.pipeline = None
                    self._p4rt.entities = None
                self._p4rt_seen = None

    def _sync(self) -> None:
        pl = getattr(self._p4rt, "pipeline", None)
        if pl is not None and pl is not self._p4rt_seen:
            self._p4rt_seen = pl
            self._text = pl.json_text
            self._view = None

    def text(self) -> str:
        with self._lock:
            self._sync()
            return self._text if self._text is not None else EMPTY_PROGRAM

    def view(self) -> ProgramView | None:
        with self._lock:
            self._sync()
            if self._text is None:
                return None
            if self._view is None:
                names = json.loads(_native.p4rt_compile(self._text).names_json())
                self._view = thrift_program.build(self._text, names)
            return self._view


@dataclass
class SwitchContext:
    sw: Switch
    config: RunningConfig
    device_id: int = 0
    thrift_port: int = 9090
    interfaces: list[tuple[int, str]] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    lock: threading.RLock = field(default_factory=threading.RLock)


def log(call: str, message: str) -> None:
    """One line on the switch's stderr for a refused call (bmv2's errors carry only a code)."""
    print(f"lanes switch: thrift {call}: {message}", file=sys.stderr, flush=True)


def native_code(e: Exception) -> tuple[int, str]:
    """(gRPC code, message) of a _native.P4rtError."""
    code, msg = e.args[:2] if len(e.args) >= 2 else (0, str(e))
    return int(code), str(msg)


def thrift_code(e: Exception) -> int:
    """bmv2's TableOperationErrorCode of a _native.P4rtError (the switch maps its errors once,
    lanes-p4's ApiError; the bindings' own refusals are ERROR)."""
    return int(e.args[2]) if len(e.args) >= 3 else ERROR

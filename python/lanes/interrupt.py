"""`kill PID` (SIGTERM) cleans up as Ctrl-C does: inside `terminate_as_interrupt()` it raises
KeyboardInterrupt, so the same `finally` blocks stop the processes and namespaces a command started."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager


def _raise_interrupt(*_: object) -> None:
    raise KeyboardInterrupt


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    old = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)

"""The switch's own messages: on stderr, and with --log-file PATH also in PATH.txt (the name bmv2
gives its log file), each line flushed at once."""

from __future__ import annotations

import sys
from pathlib import Path

from lanes.errors import LanesError


class SwitchLog:
    def __init__(self, log_file: Path | None) -> None:
        self.path = None if log_file is None else log_file.with_name(log_file.name + ".txt")
        if self.path is not None:
            try:
                self.path.write_text("")
            except OSError as e:
                raise LanesError(f"cannot write log file {self.path}: {e.strerror}") from None

    def line(self, text: str) -> None:
        print(text, file=sys.stderr, flush=True)
        if self.path is not None:
            with self.path.open("a") as f:
                f.write(text + "\n")

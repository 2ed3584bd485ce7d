"""Result files are written whole or not at all: a process killed with SIGKILL between writing
and renaming leaves the old file as it was (and a hidden temporary beside it), never a
half-written file that a resumed sweep would read as a result."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from lanes import atomic


def test_the_new_text_replaces_the_old(tmp_path: Path) -> None:
    f = tmp_path / "summary.json"
    f.write_text("old")
    atomic.write_text(f, '{"new": 1}')
    assert f.read_text() == '{"new": 1}'
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]


def test_a_failed_write_keeps_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    f = tmp_path / "summary.json"
    f.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        atomic.write_text(f, "\ud800")  # not encodable: the write fails part way
    assert f.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]


def test_sigkill_before_the_rename_leaves_the_old_file(tmp_path: Path) -> None:
    f = tmp_path / "summary.json"
    f.write_text("old")
    child = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from lanes import atomic\n"
        "os.replace = lambda a, b: os.kill(os.getpid(), signal.SIGKILL)\n"
        "atomic.write_text(Path(sys.argv[1]), 'x' * 1_000_000)\n"
    )
    p = subprocess.run([sys.executable, "-c", child, str(f)], check=False)
    assert p.returncode == -9
    assert f.read_text() == "old"
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left[0].startswith(".summary.json.") and left[1] == "summary.json"

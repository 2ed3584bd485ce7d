"""No Rust or Python source file over 600 lines (scripts/check_file_length.py, run by `make lint`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "check_file_length.py"


def check(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True)


def test_no_source_file_of_the_repository_is_over_600_lines() -> None:
    r = check(REPO)
    assert r.returncode == 0, r.stdout


def test_a_file_of_601_lines_is_named_with_its_length_and_601_in_another_language_is_not_counted(
    tmp_path: Path,
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "long.rs").write_text("fn a() {}\n" * 601)
    (tmp_path / "src" / "ok.py").write_text("x = 1\n" * 600)
    (tmp_path / "notes.md").write_text("line\n" * 601)
    (tmp_path / "target").mkdir()
    (tmp_path / "target" / "built.rs").write_text("x\n" * 900)
    r = check(tmp_path)
    assert r.returncode == 1
    assert r.stdout.splitlines() == ["src/long.rs: 601 lines (at most 600: split it by job)"]

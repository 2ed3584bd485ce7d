#!/usr/bin/env python3
"""No Rust or Python source file of the repository over MAX_LINES lines: a file that long has
more than one job (docs/ARCHITECTURE.md, decision 38). Prints each one with its length; exit 1 if
there is one.

    scripts/check_file_length.py [DIR]   (default: the repository; files as git lists them,
                                          or every *.rs and *.py under DIR outside git)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MAX_LINES = 600
SUFFIXES = (".rs", ".py")
SKIP_DIRS = {".git", ".venv", "target", "node_modules"}


def sources(root: Path) -> list[Path]:
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--", "*.rs", "*.py"],
                            capture_output=True, check=False)  # fmt: skip
    if listed.returncode == 0 and listed.stdout:
        return [root / name for name in listed.stdout.decode().split("\0") if name]
    return [p for p in sorted(root.rglob("*")) if p.suffix in SUFFIXES and p.is_file()
            and not SKIP_DIRS.intersection(p.relative_to(root).parts)]  # fmt: skip


def too_long(root: Path) -> list[tuple[Path, int]]:
    out = []
    for path in sources(root):
        if not path.is_file():  # listed by git but deleted in the work tree
            continue
        n = len(path.read_bytes().splitlines())
        if n > MAX_LINES:
            out.append((path.relative_to(root), n))
    return out


def main() -> None:
    root = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]
    bad = too_long(root)
    for path, n in bad:
        print(f"{path}: {n} lines (at most {MAX_LINES}: split it by job)")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

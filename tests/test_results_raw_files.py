"""Every table row of bench/RESULTS.md and bench/results/*.md that cites a raw file names one that is in
the repository. The convention: a raw file is cited in backticks by its path from the repository root,
`bench/results/...`, ending in .json, .jsonl or .csv (a directory ending in / must exist and hold at
least one such file). Backticked names of other repositories' files (p4c_programs.md) are not
citations: they do not start with bench/results/."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RAW = (".json", ".jsonl", ".csv")
CITE = re.compile(r"`(bench/results/[^`\s]*)`")


def citations(text: str) -> list[tuple[int, str]]:
    """(line number, cited path) of every raw-file citation in a Markdown table row."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.lstrip().startswith("|"):
            continue
        out += [(n, p) for p in CITE.findall(line) if p.endswith(RAW) or p.endswith("/")]
    return out


def missing(root: Path, path: str) -> bool:
    p = root / path
    if path.endswith("/"):
        return not (p.is_dir() and any(f.suffix in RAW for f in p.rglob("*")))
    return not p.is_file()


def test_citations_are_found_and_checked(tmp_path: Path) -> None:
    (tmp_path / "bench/results/x").mkdir(parents=True)
    (tmp_path / "bench/results/x/a.json").write_text("{}")
    md = (
        "| a | `bench/results/x/a.json` |\n| b | `bench/results/x/b.csv` |\n| c | `bench/results/x/` |\n"
        "| d | `build/calc.json` |\nprose `bench/results/y.json`\n| e | `bench/results/sweep.md` |\n"
    )
    found = citations(md)
    assert found == [(1, "bench/results/x/a.json"), (2, "bench/results/x/b.csv"), (3, "bench/results/x/")]
    assert [p for _, p in found if missing(tmp_path, p)] == ["bench/results/x/b.csv"]


def test_every_cited_raw_file_exists() -> None:
    docs = [REPO / "bench/RESULTS.md", *sorted((REPO / "bench/results").glob("*.md"))]
    bad = [
        f"{d.relative_to(REPO)}:{n}: {p}" for d in docs for n, p in citations(d.read_text()) if missing(REPO, p)
    ]
    assert bad == []

"""Every table of measured figures in bench/RESULTS.md and bench/results/*.md names its raw file, a file
that is in the repository, or says plainly that there is none; RESULTS.md states the counts.

The convention. A raw file is cited in backticks by its path from the repository root,
`bench/results/...`, ending in .csv, .json, .jsonl or .txt (a directory ending in / must exist and
hold at least one such file). A table row is sourced by, first match wins:
1. its own cells: a cited raw file, or the words "no raw file";
2. the table's header row: a cited raw file;
3. the last paragraph before the table that starts with `Raw:` and is still in scope: it cites raw files,
   or says "no raw file" (and why), or "not a measurement" (a list of targets or constructs, no
   measured figure in it). A `Raw:` paragraph holds for the rest of its section, subsections included,
   until the next `Raw:` paragraph or the next heading of its section's level or above; one under the
   document's title holds for the whole document.
A row sourced by none of these fails the test, and so does a cited file, in a table or in prose,
that is not in the repository. Backticked names of other repositories' files
(p4c_programs.md) are not citations: they do not start with bench/results/. conformance.md is left
out: bench/conformance.py writes it whole, and its per-program table is the run's own record."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RAW = (".json", ".jsonl", ".csv", ".txt")
CITE = re.compile(r"`(bench/results/[^`\s]*)`")
GENERATED = {"conformance.md"}
NO_RAW, NOT_MEASURED, SOURCED = "no raw file", "not a measurement", "raw file"
COUNT_LINE = re.compile(
    r"Raw files: of (\d+) table rows of measured figures in this file and bench/results/\*\.md, (\d+) name a raw "
    r"file and (\d+) say \"no raw file\"; (\d+) rows are not measurements\."
)


def cited(text: str) -> list[str]:
    return [p for p in CITE.findall(text) if p.endswith(RAW) or p.endswith("/")]


@dataclass
class Row:
    line: int
    status: str  # SOURCED, NO_RAW, NOT_MEASURED, or "" (unsourced)
    paths: list[str]


def rows(text: str) -> list[Row]:
    """Every body row of every table in a Markdown text, with how it is sourced."""
    lines = text.splitlines()
    out: list[Row] = []
    scope: list[tuple[int, str]] = []  # (level of the section a Raw: line is in, the line)
    level, fenced = 0, False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            fenced = not fenced
        elif fenced:
            pass
        elif line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            scope = [(lv, r) for lv, r in scope if lv < level]
        elif line.startswith("Raw:"):
            para = line  # the Raw: line with the rest of its paragraph
            while (
                i + 1 < len(lines)
                and lines[i + 1].strip()
                and not lines[i + 1].lstrip().startswith(("|", "#"))
            ):
                i += 1
                para += " " + lines[i]
            scope = [(lv, r) for lv, r in scope if lv < level] + [(level, para)]
        elif line.lstrip().startswith("|"):
            j = i
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                j += 1
            head = lines[i]
            body = (
                range(i + 2, j)
                if j > i + 1 and set(lines[i + 1].replace(" ", "")) <= set("|-:")
                else range(i, j)
            )
            out += [_row(n + 1, lines[n], head, scope[-1][1] if scope else None) for n in body]
            i = j
            continue
        i += 1
    return out


def _row(n: int, line: str, head: str, raw_line: str | None) -> Row:
    if cited(line):
        return Row(n, SOURCED, cited(line))
    if NO_RAW in line.lower():
        return Row(n, NO_RAW, [])
    if cited(head):
        return Row(n, SOURCED, cited(head))
    if raw_line is not None:
        if cited(raw_line):
            return Row(n, SOURCED, cited(raw_line))
        for status in (NO_RAW, NOT_MEASURED):
            if status in raw_line.lower():
                return Row(n, status, [])
    return Row(n, "", [])


def missing(root: Path, path: str) -> bool:
    p = root / path
    if path.endswith("/"):
        return not (p.is_dir() and any(f.suffix in RAW for f in p.rglob("*")))
    return not p.is_file()


def docs() -> list[Path]:
    return [REPO / "bench/RESULTS.md"] + [
        p for p in sorted((REPO / "bench/results").glob("*.md")) if p.name not in GENERATED
    ]


def test_rows_are_sourced_by_row_header_or_raw_line(tmp_path: Path) -> None:
    (tmp_path / "bench/results/x").mkdir(parents=True)
    (tmp_path / "bench/results/x/a.json").write_text("{}")
    md = "\n".join([
        "## one",
        "| a | b |",
        "|---|---|",
        "| 1 | `bench/results/x/a.json` |",  # its own citation
        "| 2 | no raw file (printed output) |",  # says so itself
        "| 3 | nothing |",  # unsourced: no Raw line in this section
        "",
        "Raw: none here; the runs' directories were not kept,",
        "so no raw file.",  # the paragraph's second line counts
        "",
        "| c | d |",
        "|---|---|",
        "| 4 | `bench/results/x/b.csv` |",  # a citation of a file that is not there
        "| 5 | 6 |",  # the Raw line's
        "## two",
        "| e (`bench/results/x/`) | f |",
        "|---|---|",
        "| 7 | 8 |",  # the header's
        "Raw: not a measurement (targets).",
        "",
        "| g |",
        "|---|",
        "| 9 |",
        "### three",
        "| h |",
        "|---|",
        "| 10 |",  # a subsection is still in the Raw line's reach
        "## four",
        "| i |",
        "|---|",
        "| 11 |",  # a heading of the same level ends it
        "prose `bench/results/y.json` | not a row",
    ])  # fmt: skip
    got = [(r.line, r.status, r.paths) for r in rows(md)]
    assert got == [
        (4, SOURCED, ["bench/results/x/a.json"]),
        (5, NO_RAW, []),
        (6, "", []),
        (13, SOURCED, ["bench/results/x/b.csv"]),
        (14, NO_RAW, []),
        (18, SOURCED, ["bench/results/x/"]),
        (23, NOT_MEASURED, []),
        (27, NOT_MEASURED, []),
        (31, "", []),
    ]
    assert [p for r in rows(md) for p in r.paths if missing(tmp_path, p)] == ["bench/results/x/b.csv"]


def test_a_raw_line_under_the_title_holds_for_the_whole_document() -> None:
    md = "# title\n\nRaw: no raw file (printed output).\n\n## a\n\n| x |\n|---|\n| 1 |\n\n### b\n\n| y |\n|---|\n| 2 |\n"
    assert [(r.line, r.status) for r in rows(md)] == [(9, NO_RAW), (15, NO_RAW)]


def test_every_table_row_names_an_existing_raw_file_or_says_there_is_none() -> None:
    unsourced, absent = [], []
    for d in docs():
        name = d.relative_to(REPO)
        for r in rows(d.read_text()):
            if not r.status:
                unsourced.append(f"{name}:{r.line}")
            absent += [f"{name}:{r.line}: {p}" for p in r.paths if missing(REPO, p)]
    assert unsourced == [], "rows with no raw file cited and no 'no raw file' (see this test's docstring)"
    assert absent == [], "cited raw files that are not in the repository"


def test_every_raw_file_cited_in_prose_exists() -> None:
    bad = [f"{d.relative_to(REPO)}: {p}" for d in docs() for p in cited(d.read_text()) if missing(REPO, p)]
    assert bad == []


def test_every_raw_line_cites_existing_files() -> None:
    bad = [
        f"{d.relative_to(REPO)}: {p}"
        for d in docs()
        for para in d.read_text().split("\n\n")
        if para.startswith("Raw:")
        for p in cited(para.replace("\n", " "))
        if missing(REPO, p)
    ]
    assert bad == []


def test_results_states_the_counts() -> None:
    all_rows = [r for d in docs() for r in rows(d.read_text())]
    measured = [r for r in all_rows if r.status != NOT_MEASURED]
    want = (
        len(measured),
        sum(r.status == SOURCED for r in measured),
        sum(r.status == NO_RAW for r in measured),
        len(all_rows) - len(measured),
    )
    m = COUNT_LINE.search((REPO / "bench/RESULTS.md").read_text().replace("\n", " "))
    assert m, "bench/RESULTS.md: no 'Raw files: of N table rows ...' line"
    got = tuple(int(x) for x in m.groups())
    assert got == want, f"bench/RESULTS.md's raw-file counts are {got}, the documents give {want}"

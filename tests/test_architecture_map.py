"""docs/ARCHITECTURE.md's Layout is a true map: every crate and Python subpackage is named there,
nothing named there is missing, its crate graph is the crates' own dependencies, and its package
graph is what python/lanes's parts import, drawn in layers (scripts/check_architecture_map.py, also
run by `make lint`)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "check_architecture_map.py"


def check(repo: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), str(repo)], capture_output=True, text=True)


def copy_package(root: Path) -> Path:
    pkg = root / "python" / "lanes"
    shutil.copytree(REPO / "python" / "lanes", pkg, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    return pkg


def copy_repo_map(root: Path) -> Path:
    """docs/, every crate's Cargo.toml and python/lanes: what the check reads."""
    shutil.copytree(REPO / "docs", root / "docs")
    for c in (REPO / "crates").iterdir():
        if (c / "Cargo.toml").exists():
            (root / "crates" / c.name).mkdir(parents=True)
            shutil.copy(c / "Cargo.toml", root / "crates" / c.name)
    return copy_package(root)


def test_the_repo_matches_its_map():
    r = check(REPO)
    assert r.returncode == 0, r.stderr


def test_a_new_crate_or_package_missing_from_the_map_and_a_named_one_gone_are_reported(tmp_path):
    (tmp_path / "docs").mkdir()
    shutil.copy(REPO / "docs" / "ARCHITECTURE.md", tmp_path / "docs")
    for c in (REPO / "crates").iterdir():
        if (c / "Cargo.toml").exists() and c.name != "sim":
            (tmp_path / "crates" / c.name).mkdir(parents=True)
            shutil.copy(c / "Cargo.toml", tmp_path / "crates" / c.name)
    (tmp_path / "crates" / "newcrate").mkdir()
    (tmp_path / "crates" / "newcrate" / "Cargo.toml").touch()
    copy_package(tmp_path)
    r = check(tmp_path)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        "crates/sim: named in ARCHITECTURE.md's Layout, not in the repo",
        "crates/newcrate: in the repo, not named in ARCHITECTURE.md's Layout",
        "crates/newcrate: not in ARCHITECTURE.md's crate graph",
    ]


def test_a_dependency_the_crate_graph_does_not_draw_is_reported(tmp_path):
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    copy_package(tmp_path)
    for c in (REPO / "crates").iterdir():
        if (c / "Cargo.toml").exists():
            (tmp_path / "crates" / c.name).mkdir(parents=True)
            shutil.copy(c / "Cargo.toml", tmp_path / "crates" / c.name)
    sim = tmp_path / "crates" / "sim" / "Cargo.toml"
    sim.write_text(sim.read_text().replace("[dependencies]\n", '[dependencies]\nlanes-p4 = { path = "../p4" }\n'))
    r = check(tmp_path)
    assert r.returncode == 1
    assert r.stderr.splitlines() == ["crates/sim: the crate graph says it uses ['tm'], its Cargo.toml ['p4', 'tm']"]


def test_an_import_the_package_graph_does_not_draw_is_reported_even_inside_a_function(tmp_path):
    pkg = copy_repo_map(tmp_path)
    runtime = pkg / "p4runtime" / "values.py"
    runtime.write_text(runtime.read_text() + "\n\ndef _late():\n    from lanes.lab import core  # noqa\n")
    r = check(tmp_path)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        "python/lanes: p4runtime: the package graph says it imports ['errors'], its code ['errors', 'lab']"
    ]


def test_a_part_drawn_above_what_it_imports_and_a_part_not_drawn_are_reported(tmp_path):
    pkg = copy_repo_map(tmp_path)
    (pkg / "newpart.py").write_text("from lanes.errors import LanesError  # noqa\n")
    doc = tmp_path / "docs" / "ARCHITECTURE.md"
    text = doc.read_text()
    text = text.replace("errors        (none)\natomic        (none)\n", "atomic        (none)\n")
    doc.write_text(text.replace("consolidate   errors\n", "consolidate   errors\nerrors        (none)\n"))
    r = check(tmp_path)
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert lines[0] == "python/lanes: newpart: not in ARCHITECTURE.md's package graph"
    assert "python/lanes: p4c: drawn above what it imports (errors)" in lines
    assert "python/lanes: cli: drawn above what it imports (errors)" not in lines

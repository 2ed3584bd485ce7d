"""docs/ARCHITECTURE.md's Layout is a true map: every crate and Python subpackage is named there,
nothing named there is missing, and its crate graph is the crates' own dependencies
(scripts/check_architecture_map.py, also run by `make lint`)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "check_architecture_map.py"


def check(repo: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), str(repo)], capture_output=True, text=True)


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
    for p in (REPO / "python" / "lanes").glob("*/__init__.py"):
        (tmp_path / "python" / "lanes" / p.parent.name).mkdir(parents=True)
        (tmp_path / "python" / "lanes" / p.parent.name / "__init__.py").touch()
    r = check(tmp_path)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        "crates/sim: named in ARCHITECTURE.md's Layout, not in the repo",
        "crates/newcrate: in the repo, not named in ARCHITECTURE.md's Layout",
        "crates/newcrate: not in ARCHITECTURE.md's crate graph",
    ]


def test_a_dependency_the_crate_graph_does_not_draw_is_reported(tmp_path):
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    shutil.copytree(REPO / "python" / "lanes", tmp_path / "python" / "lanes", ignore=shutil.ignore_patterns("*.so"))
    for c in (REPO / "crates").iterdir():
        if (c / "Cargo.toml").exists():
            (tmp_path / "crates" / c.name).mkdir(parents=True)
            shutil.copy(c / "Cargo.toml", tmp_path / "crates" / c.name)
    sim = tmp_path / "crates" / "sim" / "Cargo.toml"
    sim.write_text(sim.read_text().replace("[dependencies]\n", '[dependencies]\nlanes-p4 = { path = "../p4" }\n'))
    r = check(tmp_path)
    assert r.returncode == 1
    assert r.stderr.splitlines() == ["crates/sim: the crate graph says it uses ['tm'], its Cargo.toml ['p4', 'tm']"]

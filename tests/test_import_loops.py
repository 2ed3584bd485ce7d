"""python/lanes has no import loops, between its parts (lanes.emu, lanes.lab, lanes.nas, ...) or
between the modules of one part, counting imports inside functions (scripts/check_import_loops.py);
nor do the top-level modules of any crate in crates/
(scripts/check_rust_module_loops.py). `make lint` runs both."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "check_import_loops.py"
RUST_SCRIPT = REPO / "scripts" / "check_rust_module_loops.py"


def check(pkg: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), str(pkg)], capture_output=True, text=True)


def write(root: Path, files: dict[str, str]) -> Path:
    pkg = root / "python" / "lanes"
    for name, text in files.items():
        path = pkg / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return pkg


def test_the_package_has_no_import_loops():
    r = check(REPO / "python" / "lanes")
    assert r.returncode == 0, r.stderr


def test_a_loop_between_parts_hidden_in_a_function_is_named_with_where_each_step_is(tmp_path):
    pkg = write(tmp_path, {
        "__init__.py": "",
        "errors.py": "",
        "low/__init__.py": "",
        "low/topo.py": "from lanes import errors\n\n\ndef build():\n    from lanes.high.topo import MAKERS\n",
        "high/__init__.py": "",
        "high/topo.py": "from lanes.low.topo import build\n",
    })  # fmt: skip
    r = check(pkg)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        "import loop between parts: lanes.high -> lanes.low -> lanes.high  "
        "(lanes.high: python/lanes/high/topo.py:1; lanes.low: python/lanes/low/topo.py:5)"
    ]


def test_a_loop_inside_a_part_is_named_and_a_layered_part_passes(tmp_path):
    pkg = write(tmp_path, {
        "__init__.py": "",
        "fabric/__init__.py": "",
        "fabric/cli.py": "from . import cli_ops\nfrom lanes.fabric.args import spec\n",
        "fabric/cli_ops.py": "def run():\n    from .cli import spec\n",
        "fabric/args.py": "def spec():\n    pass\n",
    })  # fmt: skip
    r = check(pkg)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        "import loop inside lanes.fabric: lanes.fabric.cli -> lanes.fabric.cli_ops -> lanes.fabric.cli  "
        "(lanes.fabric.cli: python/lanes/fabric/cli.py:1; lanes.fabric.cli_ops: python/lanes/fabric/cli_ops.py:2)"
    ]
    (pkg / "fabric" / "cli_ops.py").write_text("def run():\n    from .args import spec\n")
    assert check(pkg).returncode == 0


def check_rust(*crates: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(RUST_SCRIPT), *map(str, crates)], capture_output=True, text=True)


def test_the_crates_have_no_module_loops():
    r = check_rust()
    assert r.returncode == 0, r.stdout


def test_a_crate_module_loop_is_named_and_test_code_and_folders_do_not_count(tmp_path):
    crate = tmp_path / "demo"
    files = {
        "lib.rs": "mod program;\nmod state;\nmod lower;\npub use program::Program;\n",
        "state.rs": "use crate::{Program, lower::Scope};\n",
        "program.rs": "use crate::state::State;\n\n#[cfg(test)]\nmod tests {\n    use crate::lower::x;\n}\n",
        "lower/mod.rs": "mod expr;\nuse crate::program::Program;\n",
        "lower/expr.rs": "use crate::lower::Scope;\n",
    }
    for name, text in files.items():
        (crate / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        (crate / "src" / name).write_text(text)
    r = check_rust(crate)
    assert r.returncode == 1
    assert r.stdout.splitlines() == [
        "demo: lower -> program -> state -> lower  "
        "(lower: src/lower/mod.rs:2; program: src/program.rs:1; state: src/state.rs:1)"
    ]
    (crate / "src" / "state.rs").write_text("pub struct State;\n")
    r = check_rust(crate)
    assert (r.returncode, r.stdout) == (0, "no module loops in demo\n")

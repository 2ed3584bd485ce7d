"""The bad-input table of bench/bad_inputs.py, run: every subcommand given a bad input exits
non-zero with exactly one line on stderr that names the problem, and no traceback."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LANES = str(REPO / ".venv" / "bin" / "lanes")

_spec = importlib.util.spec_from_file_location("bad_inputs", REPO / "bench" / "bad_inputs.py")
assert _spec and _spec.loader
bad_inputs = importlib.util.module_from_spec(_spec)
sys.modules["bad_inputs"] = bad_inputs  # its dataclasses look their module up
_spec.loader.exec_module(bad_inputs)


@pytest.mark.parametrize("case", bad_inputs.CASES, ids=lambda c: f"{c.command}: {c.what}")
def test_a_bad_input_fails_in_one_line(case) -> None:
    o = bad_inputs.run_case(LANES, case)
    assert o.exit_code not in (0, -9), o.stderr
    assert "Traceback" not in o.stderr, o.stderr
    assert len(o.lines) == 1, o.stderr
    assert case.expect in o.lines[0], o.stderr


def test_every_subcommand_has_a_bad_input() -> None:
    from lanes.cli import SUBCOMMANDS

    assert set(SUBCOMMANDS) <= {c.command for c in bad_inputs.CASES}

"""`lanes sim` end to end: the installed command, its outputs, and its errors on bad input."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LANES = REPO / ".venv" / "bin" / "lanes"


def lanes(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(LANES), *args], capture_output=True, text=True, timeout=120, check=False)


def test_validation_scenario_writes_result_and_plot(tmp_path: Path) -> None:
    out, png = tmp_path / "r.json", tmp_path / "r.png"
    p = lanes("sim", str(REPO / "scenarios/validation_100m.toml"), "--out", str(out), "--plot", str(png))
    assert p.returncode == 0, p.stderr
    r = json.loads(out.read_text())
    high = r["flows"]["high"]
    assert high["loss_pct"] == 0.0
    assert abs(high["throughput_bps"] - 50e6) < 0.01 * 50e6
    # equal quanta: the two low flows get the same over the run
    assert abs(r["flows"]["low"]["throughput_bps"] / r["flows"]["medium"]["throughput_bps"] - 1) < 0.01
    assert r["ports"]["p1"]["utilisation"] > 0.99
    assert {"t_s", "flows_bps", "ports_utilisation"} <= set(r["intervals"][0])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert "high" in p.stdout and "utilisation" in p.stdout


SCENARIO = """
duration_s = 0.1
[[port]]
name = "p1"
rate_bps = 1e9
scheduler = "drr"
[[flow]]
name = "f"
port = "p1"
queue = 0
rate_bps = 5e8
packet_bytes = 1500
"""


@pytest.mark.parametrize(
    "change, message",
    [
        (("rate_bps = 5e8", "rate_bps = -5"), "flow 'f': rate_bps must be a positive number"),
        (('scheduler = "drr"', 'scheduler = "wrr"'), "unknown scheduler 'wrr'"),
        (("queue = 0", "queue = 8"), "queue 8 out of range"),
        (("packet_bytes = 1500", "packet_size = 1500"), "unknown field `packet_size`"),
        (("duration_s = 0.1", "duration_s = [1"), "scenario line"),
    ],
)
def test_bad_scenarios_get_one_line_error(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(SCENARIO.replace(*change))
    p = lanes("sim", str(bad), "--out", str(tmp_path / "r.json"))
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lanes: error:") and message in lines[0], p.stderr
    assert not (tmp_path / "r.json").exists()


def test_missing_file_is_a_clean_error(tmp_path: Path) -> None:
    p = lanes("sim", str(tmp_path / "nope.toml"), "--out", str(tmp_path / "r.json"))
    assert p.returncode == 2 and p.stderr.startswith("lanes: error: cannot read scenario")

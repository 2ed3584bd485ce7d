"""The MPI case's reading of the ping-pong's output (lanes.lab.mpi): results, a run cut off
before its largest size, progress, and the payload it put on the wire."""

from __future__ import annotations

from pathlib import Path

from lanes.lab import mpi as mpi_case

OUT = "# size avg_us min_us max_us\n1 474878.30 45108.92 8102199.66\n2 2060199.66 45677.25 115363708.04\n"


def test_a_cut_off_ping_pong_keeps_its_sizes_and_says_it_is_incomplete(tmp_path: Path) -> None:
    (tmp_path / "mpi.txt").write_text(OUT)
    r = mpi_case.collect(tmp_path, 100)
    assert r["latency_us"] == {"1": 474878.30, "2": 2060199.66} and r["max_us"]["2"] == 115363708.04
    assert r["complete"] is False
    assert mpi_case.progress(tmp_path) == "ping-pong 2 of 15 sizes, 2 B at 2.06e+03 ms"
    (tmp_path / "mpi.txt").write_text(OUT + "16384 3642.67 3138.93 6764.52\n")
    assert mpi_case.collect(tmp_path, 100)["complete"] is True


def test_progress_before_the_first_result(tmp_path: Path) -> None:
    assert mpi_case.progress(tmp_path) == "ping-pong 0 of 15 sizes"
    (tmp_path / "mpi.txt").write_text("# size avg_us min_us max_us\n")
    assert mpi_case.progress(tmp_path) == "ping-pong 0 of 15 sizes"


def test_mpi_payload_rate_comes_from_the_sizes_laid_back_to_back() -> None:
    # 95 timed + 5 warm-up round trips of 1 ms: 0.1 s carrying 100 x 1000 B each way
    lat = {"1000": 1000.0, "10": 500.0}
    assert abs(mpi_case.payload_mbps(lat, 95, 10.0, 9.9, 10.0) - 8.0) < 1e-9
    # twice as long a window: half the rate, plus the 10-B size that ran from 9.85 to 9.9
    assert abs(mpi_case.payload_mbps(lat, 95, 10.0, 9.8, 10.0) - (4.0 + 100 * 10 * 8 / 0.2 / 1e6)) < 1e-9
    assert abs(mpi_case.payload_mbps(lat, 95, 10.0, 9.85, 9.9) - 100 * 10 * 8 / 0.05 / 1e6) < 1e-9
    assert mpi_case.payload_mbps(lat, 95, 10.0, 5.0, 9.0) == 0.0

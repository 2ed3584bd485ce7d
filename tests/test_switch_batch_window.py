"""The data plane's batch window when `lanes switch` is not given --batch-us: four full frames at
the fastest port's line rate, so a window costs a frame the same share of its port's line time,
between 250 and 500 us; an explicit --batch-us wins."""

from __future__ import annotations

import argparse

import pytest
from lanes.switch.args import (
    BATCH_US_MAX,
    BATCH_US_MIN,
    SwitchArgs,
    add_arguments,
    auto_batch_us,
    to_switch_args,
)


def _args(*argv: str) -> SwitchArgs:
    p = argparse.ArgumentParser()
    add_arguments(p)
    return to_switch_args(p.parse_args([*argv, "--no-p4"]), [])


@pytest.mark.parametrize(
    ("rates_mbps", "window_us"),
    [
        ([100, 100, 100, 100], 4 * 1514 * 8 / 100),  # 484.48 us: four 121-us frames
        ([200], BATCH_US_MIN),  # 242 us would be shorter than the floor
        ([10, 20], BATCH_US_MAX),  # 4.8 ms at 10 Mb/s and 2.4 ms at 20: capped
        ([10, 100], 4 * 1514 * 8 / 100),  # the fastest port sets it
        ([], BATCH_US_MIN),
    ],
)
def test_the_default_window_is_four_frames_at_the_fastest_port(rates_mbps: list[float], window_us: float) -> None:
    assert auto_batch_us([r * 1e6 for r in rates_mbps]) == pytest.approx(window_us)


def test_the_command_line_takes_the_ports_rates_and_an_explicit_window_wins() -> None:
    ports = ["-i", "1@a", "-i", "2@b", "--port-rate", "1@100Mbps", "--port-rate", "2@100Mbps"]
    assert _args(*ports).batch_us == pytest.approx(484.48)
    assert _args(*ports, "--batch-us", "250").batch_us == 250.0
    assert _args(*ports, "--batch-us", "0").batch_us == 0.0
    # a port without --port-rate runs at --default-rate (10 Gb/s unless given)
    assert _args("-i", "1@a", "-i", "2@b", "--port-rate", "1@100Mbps").batch_us == BATCH_US_MIN
    assert _args("-i", "1@a", "--default-rate", "50Mbps").batch_us == BATCH_US_MAX

"""The data plane's batch window from `lanes switch`'s command line: without --batch-us each port
gets its own (four full frames at its line rate, 250 to 500 us; crates/switch/src/batch_window.rs
and its virtual-time test in wake_latency.rs), so a slow port beside fast ones is no longer woken
for at the fast ports' pace; an explicit --batch-us sets one window for every port."""

from __future__ import annotations

import argparse

import pytest
from lanes.errors import LanesError
from lanes.switch.args import SwitchArgs, add_arguments, to_switch_args


def _args(*argv: str) -> SwitchArgs:
    p = argparse.ArgumentParser()
    add_arguments(p)
    return to_switch_args(p.parse_args([*argv, "--no-p4"]), [])


PORTS = ("-i", "1@a", "-i", "2@b", "--port-rate", "1@100Mbps")


def test_without_batch_us_each_port_keeps_its_own_window() -> None:
    # None reaches the switch as "per port" (cli.py passes batch_ns=None)
    assert _args(*PORTS).batch_us is None


@pytest.mark.parametrize("given", ["250", "0", "1000"])
def test_an_explicit_window_is_the_same_for_every_port(given: str) -> None:
    assert _args(*PORTS, "--batch-us", given).batch_us == float(given)


@pytest.mark.parametrize("given", ["-1", "10001"])
def test_a_window_out_of_range_is_refused_with_its_value(given: str) -> None:
    with pytest.raises(LanesError, match=f"--batch-us must be 0 to 10000, got {given}"):
        _args(*PORTS, "--batch-us", given)

"""The control-plane scaling measurement's change: strict rewrites N*M classes, RL-SP-DRR N, and
the rates it writes add up to the link; bad input is one line."""

from __future__ import annotations

import pytest
from lanes.lab.ctlscale import LINK_BPS, change, main


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []

    def modify_class(self, prefix: str, prio: int, rate: int, quantum: int, burst: int = 0) -> None:
        self.calls.append((prefix, prio, rate))


@pytest.mark.parametrize(("n", "m"), [(1, 3), (4, 10), (6, 30)])
def test_writes_per_change(n: int, m: int) -> None:
    strict = [Recorder() for _ in range(n)]
    first, then = change(strict, m, "strict", prioritise=True)  # type: ignore[arg-type]
    assert (len(first), len(then)) == (n, n * (m - 1))  # one first write per switch, then M-1 more
    rates = [r for _, _, r in strict[0].calls]
    assert rates[0] == round(0.6 * LINK_BPS) and abs(sum(rates) - LINK_BPS) <= m
    assert [p for _, p, _ in strict[0].calls] == [7] + [5] * (m - 1)
    drr = [Recorder() for _ in range(n)]
    first, then = change(drr, m, "rlsp-drr", prioritise=False)  # type: ignore[arg-type]
    assert (len(first), len(then)) == (n, 0)
    assert drr[0].calls == [("10.0.0.0/24", 5, round(LINK_BPS / m))]


def test_bad_input_is_one_line(capsys) -> None:
    assert main(["--classes", "3,x"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["ctlscale: error: --classes: expected comma-separated numbers, got '3,x'"]

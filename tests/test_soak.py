"""bench/soak.py for 40 s instead of 30 minutes: the switch's own counters balance exactly at the
end (frames received = sent + transmit errors + counted drops, nothing left queued), its open
descriptors are the same at the end as at the first sample, and the P4Runtime side did its
work (writes accepted, PacketOuts reaching h3, h3's frames reaching the controller). Timing
is not asserted: the figures of the long run are bench/results/soak.md's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from p4rt_util import REPO, bench_module

vethns = bench_module("vethns")

pytestmark = [
    pytest.mark.root,
    pytest.mark.slow,
    pytest.mark.skipif(not vethns.is_root(), reason="needs root for network namespaces"),
]


def test_a_short_soak_balances_its_accounts(tmp_path: Path) -> None:
    cmd = [sys.executable, str(REPO / "bench" / "soak.py"), "--seconds", "40", "--lock", "", "--out", str(tmp_path)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stderr.count("soak: ") >= 4  # progress lines, one per sample
    r = json.loads((tmp_path / "soak.json").read_text())
    assert (tmp_path / "soak.md").read_text().startswith("# Soak")
    a = r["accounting"]
    assert r["switch_alive_at_end"] and r["queued_at_end"] == 0
    assert a["rx"] == a["tx"] + a["tx_errors"] + sum(a["drops"].values()), a
    assert a["balanced"]
    # port 2 was offered more than its 200 Mb/s: the queue dropped, and nothing else did
    assert set(a["drops"]) == {"queue_full"} and a["drops"]["queue_full"] > 0, a
    assert r["fds_first_last"][0] == r["fds_first_last"][1], r["fds_first_last"]
    p = r["p4runtime"]
    assert p["writes"] >= 35 and p["write_errors"] == 0, p
    assert p["packet_outs"] > 1000 and p["h3_received"] == p["packet_outs"], p
    assert p["h3_sent"] > 1000 and p["packet_ins"] == p["h3_sent"], p
    assert len(r["samples"]) >= 4

"""The token bucket of a rate-limited queue set through P4Runtime: the lab's controller writes
tm_basic's set_priority_burst entry, real packets carry queue_burst to the TM, and the switch's
queue shows the bucket; set_priority leaves the default (1 ms of the rate + 1514 B)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from netns import LANES, REPO, Star, is_root, ping_rtts

pytestmark = [pytest.mark.root, pytest.mark.skipif(not is_root(), reason="needs root for network namespaces")]

ADDR_PORT = 9561
CONTROLLER = """
import sys
from pathlib import Path
from lanes.lab.p4rt import P4RuntimeTables
from lanes.emu.topo import Route
repo = Path(sys.argv[1])
t = P4RuntimeTables("s1", int(sys.argv[2]), 0, repo / "p4/tm_basic.p4info.txtpb", repo / "p4/tm_basic.json")
for h in (1, 2, 3):
    t.add_route(Route(f"10.0.1.{h}/32", h, f"00:00:00:00:01:0{h}"))
t.add_class("10.0.1.1/32", 7, 7500000, 7000, 20000)
t.add_class("10.0.1.3/32", 6, 2500000, 1500)
t.add_class("10.0.1.2/32", 3, 12500000, 1500)
t.close()
"""


def queue_burst(star: Star, port: int, qid: int) -> str:
    line = next(x for x in star.ctl(f"show_queues {port}").splitlines() if x.startswith(f"{port} {qid} "))
    return line.split()[-1]


def test_burst_set_over_p4runtime_reaches_the_queue(tmp_path: Path) -> None:
    with Star(3) as star:
        ports = [a for i in (1, 2, 3) for a in ("-i", f"{i}@s1-eth{i}")]
        star.start(star.sw, LANES, "switch", *ports, "--no-p4", "--scheduler", "strict", "--thrift-port", "9090",
                   "--", "--grpc-server-addr", f"127.0.0.1:{ADDR_PORT}", log=tmp_path / "switch.log")  # fmt: skip
        deadline = time.monotonic() + 30
        while star.ns(star.sw, LANES, "ctl", "-c", "p4runtime_stats", check=False).returncode != 0:
            assert time.monotonic() < deadline, (tmp_path / "switch.log").read_text()
            time.sleep(0.2)
        r = star.ns(star.sw, sys.executable, "-c", CONTROLLER, str(REPO), str(ADDR_PORT), check=False)
        assert r.returncode == 0, r.stdout + r.stderr
        assert ping_rtts(star, 1, 2, count=3), "h1 cannot reach h2"
        assert ping_rtts(star, 3, 2, count=3), "h3 cannot reach h2"
        # h1's packets (queue 7 of port 2) carried the bucket size; h3's (queue 6) the default
        assert queue_burst(star, 2, 7) == "20000"
        assert queue_burst(star, 2, 6) == str(2500000 // 1000 + 1514)

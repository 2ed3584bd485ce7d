"""The path-record cache of bench/sa (pathcache.c, sa_cache.c). Its rules (hit, miss, a GID
notice dropping exactly that GID's entries, failed lookups never stored) run without a subnet;
then, on ibsim with OpenSM, clients with the cache send OpenSM fewer SA MADs than clients without
it through a node leaving and coming back, and every record the cache holds equals the SA's
answer at that moment. The live test is skipped without OpenSM/ibsim or the built client
(make setup)."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
from lanes.fabric import native, opensm
from lanes.fabric.live import LiveSubnet
from lanes.fabric.saclient import SA_CACHE, SaClients, totals

SA = Path(__file__).resolve().parents[1] / "bench" / "sa"


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_the_cache_rules(tmp_path: Path) -> None:
    exe = tmp_path / "test_pathcache"
    subprocess.run(
        [
            "cc",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-o",
            str(exe),
            str(SA / "test_pathcache.c"),
            str(SA / "pathcache.c"),
        ],
        check=True,
    )
    r = subprocess.run([str(exe)], capture_output=True, text=True)
    assert (r.returncode, r.stdout) == (0, "ok\n"), r.stdout


def _lookups(sub: LiveSubnet, clients: SaClients, label: str) -> dict:
    time.sleep(1)  # the Reports of the last change reach the clients
    before = sub.sa_mads()
    r = totals(clients.round(label))
    r["at_opensm"] = sub.sa_mads()["received"] - before["received"]
    return r


@pytest.mark.skipif(
    bool(opensm.missing_tools()) or not SA_CACHE.exists(),
    reason="OpenSM/ibsim or build/bench/sa_cache missing (run make setup)",
)
@pytest.mark.parametrize("cache", [False, True])
def test_the_cache_asks_opensm_less_and_answers_as_the_sa(tmp_path: Path, cache: bool) -> None:
    net = str(tmp_path / "f.net")
    native.gen({"kind": "kary", "k": 4, "n": 2}, net)  # 16 hosts h-0 .. h-15
    with LiveSubnet(net, "ftree", str(tmp_path / "live"), sweep=2, dumps=True, extra_args=["-d", "0"]) as sub:
        by_name = opensm.parse_dump_lids(sub.outdir / "opensm-lfts.dump")
        lids = sorted(by_name.values())
        with SaClients(sub, ["h-0", "h-15"], lids, cache) as clients:
            rounds = [_lookups(sub, clients, "first")]
            rounds.append(_lookups(sub, clients, "again"))
            sub.apply("unlink h-6")
            rounds.append(_lookups(sub, clients, "gone"))
            sub.apply("relink h-6")
            rounds.append(_lookups(sub, clients, "back"))
            checks = clients.verify() if cache else []
    got = [(r["queries"], r["at_opensm"], r["failed"]) for r in rounds]
    if not cache:
        # Every lookup is a query OpenSM receives; the node that left fails once per client.
        assert got == [(32, 32, 0), (32, 32, 0), (32, 32, 2), (32, 32, 0)]
        return
    # The cache: all 16 peers once; nothing again; after each notice only h-6, once per client.
    assert got == [(32, 32, 0), (0, 0, 0), (2, 2, 2), (2, 2, 0)]
    assert [r["notices"] for r in rounds] == [0, 0, 2, 2]
    assert [(c["compared"], c["mismatched"]) for c in checks] == [(16, 0), (16, 0)]

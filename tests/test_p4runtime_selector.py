"""An action selector written over P4Runtime by p4runtime-shell (unmodified): members, a
weighted group and an entry naming it, read back, the spec's status codes for what it refuses,
and real frames between network namespaces spread over the members exactly as the selector's
hash says (crc16 of the source MAC, members in id order, a member of weight w in w slots)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from netns import LANES, REPO, Star, is_root
from test_switch_selector import ETHERTYPE, FRAMES, crc16, selector_program
from test_switch_thrift import tx_pkts

pytestmark = [pytest.mark.root, pytest.mark.skipif(not is_root(), reason="needs root for network namespaces")]

SHELL_PY = REPO / ".venv-p4rt-shell" / "bin" / "python"
CLIENT = REPO / "tests" / "p4rt_clients" / "shell_selector.py"
ADDR = "127.0.0.1:9559"

P4INFO = """pkg_info { arch: "v1model" }
tables {
  preamble { id: 33554433 name: "ingress.ecmp" alias: "ecmp" }
  match_fields { id: 1 name: "hdr.ethernet.etherType" bitwidth: 16 match_type: EXACT }
  action_refs { id: 16777217 }
  action_refs { id: 16777218 }
  implementation_id: 285212673
  size: 16
}
actions { preamble { id: 16777217 name: "ingress.set_port" alias: "set_port" }
          params { id: 1 name: "port" bitwidth: 9 } }
actions { preamble { id: 16777218 name: "ingress.drop" alias: "drop" } }
action_profiles { preamble { id: 285212673 name: "ingress.ecmp_selector" alias: "ecmp_selector" }
                  table_ids: 33554433 with_selector: true size: 64 }
"""


@pytest.fixture
def star(tmp_path: Path) -> Iterator[Star]:
    with Star(4) as s:
        ports = [a for i in range(1, 5) for a in ("-i", f"{i}@s1-eth{i}")]
        s.start(s.sw, LANES, "switch", *ports, "--no-p4", "--thrift-port", "9090",
                "--", "--grpc-server-addr", ADDR, log=tmp_path / "switch.log")  # fmt: skip
        deadline = time.monotonic() + 30
        while s.ns(s.sw, LANES, "ctl", "-c", "p4runtime_stats", check=False).returncode != 0:
            assert time.monotonic() < deadline, (tmp_path / "switch.log").read_text()
            time.sleep(0.2)
        yield s


def shell(star: Star, tmp_path: Path, step: str) -> dict:
    p4info = tmp_path / "selector.p4info.txtpb"
    p4info.write_text(P4INFO)
    prog = selector_program(tmp_path / "selector.json")
    r = star.ns(star.sw, str(SHELL_PY), str(CLIENT), ADDR, str(p4info), str(prog), step, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def spread(star: Star, slots: list[int], ethertype: int = ETHERTYPE) -> dict[int, int]:
    """Send two frames of each of 24 flows from h1; the tx counts of ports 2-4 the slots predict
    (slot i holds a port minus one: member m forwards to port m + 1), and those measured."""
    before = {p: tx_pkts(star.ctl("show_ports"), p) for p in (2, 3, 4)}
    want = dict.fromkeys((2, 3, 4), 0)
    for i in range(24):
        src = f"02:00:00:00:00:{i:02x}"
        want[slots[crc16(bytes.fromhex(src.replace(":", ""))) % len(slots)] + 1] += 2
        star.host(1, *FRAMES, "send", "eth0", "ff:ff:ff:ff:ff:ff", src, hex(ethertype), "2")
    got: dict[int, int] = {}
    for _ in range(50):
        shown = star.ctl("show_ports")
        got = {p: tx_pkts(shown, p) - before[p] for p in (2, 3, 4)}
        if sum(got.values()) >= 48:
            break
        time.sleep(0.1)
    assert got == want, (got, want)
    return got


def test_p4runtime_shell_selector_spreads_frames_and_refuses_as_the_spec_says(
    star: Star, tmp_path: Path
) -> None:
    if not SHELL_PY.exists():
        pytest.fail("p4runtime-shell venv missing: run `make setup`")
    out = shell(star, tmp_path, "setup")
    assert out["members"] == [[1, 2], [2, 3], [3, 4]]
    assert out["groups"] == [[7, [1, 2, 3]]]
    assert out["entry_group"] == [7]
    got = spread(star, [1, 2, 3])
    assert min(got.values()) > 0  # every member carries some flows
    out = shell(star, tmp_path, "reweigh")
    assert out["groups"] == [[[1, 2], [3, 1]]]
    got = spread(star, [1, 1, 3])
    assert got[3] == 0
    out = shell(star, tmp_path, "errors")
    not_found, already_exists, failed_precondition = 5, 6, 9  # gRPC canonical codes
    assert out == {
        "member_in_use": [failed_precondition],
        "duplicate_member": [already_exists],
        "unknown_member": [not_found],
        "unknown_group": [not_found],
        "group_in_use": [failed_precondition],
    }
    # a one-shot action set: hidden members and group, read back as the set it was written as
    out = shell(star, tmp_path, "oneshot")
    assert out["entries"] == [["88b5", []], ["88b6", [[2, 1], [4, 2]]]]
    assert (out["members"], out["groups"]) == ([1, 2, 3], [7])
    got = spread(star, [1, 3, 3], ethertype=0x88B6)  # port 2 once, port 4 twice
    assert got[3] == 0 and got[2] > 0 and got[4] > 0
    assert shell(star, tmp_path, "unshot") == {"entries": 1}

"""finsy (unmodified, from PyPI) against a switch without ports: action profile members and a
weighted group, an entry naming the group and a one-shot action set, read back; a value set
written and read; an idle timeout that reaches finsy as an IdleTimeoutNotification."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from google.protobuf import text_format
from p4rt_util import loopback_switch
from test_p4runtime_idle import idle_program
from test_p4runtime_idle import p4info as idle_p4info
from test_p4runtime_selector import P4INFO as SELECTOR_P4INFO
from test_switch_selector import selector_program
from test_switch_value_set import p4info as vset_p4info
from test_switch_value_set import vset_program

CLIENT = Path(__file__).parent / "p4rt_clients" / "finsy_features.py"


def finsy(tmp_path: Path, mode: str, p4info_text: str, program: bytes) -> dict:
    p4info, prog = tmp_path / f"{mode}.p4info.txtpb", tmp_path / f"{mode}.json"
    p4info.write_text(p4info_text)
    prog.write_bytes(program)
    with loopback_switch(target=("--cpu-port", "255")) as (addr, _):
        r = subprocess.run([sys.executable, str(CLIENT), addr, str(p4info), str(prog), mode],
                           capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_finsy_action_profiles_and_one_shot(tmp_path: Path) -> None:
    out = finsy(tmp_path, "selector", SELECTOR_P4INFO, selector_program(tmp_path / "p.json").read_bytes())
    assert out["members"] == [1, 2, 3]  # the one-shot set's members are not listed
    assert out["groups"] == [[7, [[1, 2], [2, 1], [3, 1]]]]
    assert out["entries"] == [[7, 0], [None, 2]]  # the one-shot entry reads back as its 2 actions


def test_finsy_value_set(tmp_path: Path) -> None:
    info = text_format.MessageToString(vset_p4info())
    out = finsy(tmp_path, "valueset", info, vset_program(tmp_path / "p.json"))
    assert out == {"values": ["0800", "88b5"]}


def test_finsy_idle_timeout_notification(tmp_path: Path) -> None:
    info = text_format.MessageToString(idle_p4info())
    out = finsy(tmp_path, "idle", info, idle_program(tmp_path / "p.json"))
    assert out["ttl"] == [300_000_000]
    assert out["after_s"] >= 0.25

"""p4runtime-shell (unmodified, from PyPI) writing an action selector on a lanes switch; run
with .venv-p4rt-shell's python. One step per call; prints one JSON object.

    shell_selector.py ADDR P4INFO JSON setup     push the pipeline; members 1-3 (ports 2-4),
                                                 group 7 of all three, the entry naming group 7
    shell_selector.py ADDR P4INFO JSON reweigh   group 7 becomes member 1 (weight 2) and 3
    shell_selector.py ADDR P4INFO JSON errors    writes the spec refuses, with their codes
    shell_selector.py ADDR P4INFO JSON oneshot   an entry for 0x88b6 with a one-shot set: port 2
                                                 (weight 1) and port 4 (weight 2)
    shell_selector.py ADDR P4INFO JSON unshot    delete that entry
"""

from __future__ import annotations

import json
import sys

import p4runtime_sh.shell as sh
from p4runtime_sh.p4runtime import P4RuntimeWriteException

PROFILE = "ingress.ecmp_selector"
ETHERTYPE = "0x88b5"


def member(mid: int, port: int):
    m = sh.ActionProfileMember(PROFILE)(member_id=mid, action="ingress.set_port")
    m.action["port"] = str(port)
    return m


def codes(write) -> list[str]:
    try:
        write()
    except P4RuntimeWriteException as e:
        return [err.canonical_code for _, err in e.errors]
    return []


def main() -> int:
    addr, p4info, bmv2, step = sys.argv[1:5]
    config = sh.FwdPipeConfig(p4info, bmv2) if step == "setup" else None
    sh.setup(device_id=0, grpc_addr=addr, election_id=(0, 1), config=config)
    out: dict = {}
    try:
        if step == "setup":
            for mid in (1, 2, 3):
                member(mid, mid + 1).insert()
            g = sh.ActionProfileGroup(PROFILE)(group_id=7)
            for mid in (1, 2, 3):
                g.add(mid)
            g.insert()
            te = sh.TableEntry("ingress.ecmp")(group_id=7)
            te.match["hdr.ethernet.etherType"] = ETHERTYPE
            te.insert()
            out["members"] = sorted(
                (m.member_id, int.from_bytes(m.action["port"].value, "big"))
                for m in sh.ActionProfileMember(PROFILE).read()
            )
            out["groups"] = [
                (g.group_id, sorted(x.member_id for x in g.members))
                for g in sh.ActionProfileGroup(PROFILE).read()
            ]
            out["entry_group"] = [
                e.msg().action.action_profile_group_id for e in sh.TableEntry("ingress.ecmp").read()
            ]
        elif step == "reweigh":
            g = sh.ActionProfileGroup(PROFILE)(group_id=7)
            g.add(1, weight=2)
            g.add(3)
            g.modify()
            out["groups"] = [
                sorted((x.member_id, x.weight) for x in g.members)
                for g in sh.ActionProfileGroup(PROFILE).read()
            ]
        elif step == "errors":
            out["member_in_use"] = codes(lambda: sh.ActionProfileMember(PROFILE)(member_id=1).delete())
            out["duplicate_member"] = codes(lambda: member(2, 9).insert())
            bad = sh.ActionProfileGroup(PROFILE)(group_id=8)
            bad.add(42)
            out["unknown_member"] = codes(bad.insert)
            te = sh.TableEntry("ingress.ecmp")(group_id=99)
            te.match["hdr.ethernet.etherType"] = "0x0800"
            out["unknown_group"] = codes(te.insert)
            out["group_in_use"] = codes(lambda: sh.ActionProfileGroup(PROFILE)(group_id=7).delete())
        elif step == "oneshot":
            o = sh.Oneshot("ingress.ecmp")
            for port, weight in ((2, 1), (4, 2)):
                a = sh.Action("ingress.set_port")
                a["port"] = str(port)
                o.add(a, weight=weight)
            te = sh.TableEntry("ingress.ecmp")
            te.match["hdr.ethernet.etherType"] = "0x88b6"
            te.oneshot = o
            te.insert()
            out["entries"] = sorted(
                [
                    e.msg().match[0].exact.value.hex(),
                    [(int.from_bytes(x.action.params[0].value, "big"), x.weight)
                     for x in e.msg().action.action_profile_action_set.action_profile_actions],
                ]
                for e in sh.TableEntry("ingress.ecmp").read()
            )  # fmt: skip
            out["members"] = sorted(m.member_id for m in sh.ActionProfileMember(PROFILE).read())
            out["groups"] = sorted(g.group_id for g in sh.ActionProfileGroup(PROFILE).read())
        elif step == "unshot":
            te = sh.TableEntry("ingress.ecmp")
            te.match["hdr.ethernet.etherType"] = "0x88b6"
            te.delete()
            out["entries"] = len(list(sh.TableEntry("ingress.ecmp").read()))
        print(json.dumps(out, default=str), flush=True)
    finally:
        sh.teardown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""finsy (unmodified, from PyPI) writing action profiles, one-shot action sets, value sets and
idle timeouts on a lanes switch. One mode per run; prints one JSON line with what it read back.

    finsy_features.py ADDR P4INFO JSON selector   members 1-3, group 7 (weights 2, 1, 1), an entry
                                                  naming it and a one-shot entry; reads
    finsy_features.py ADDR P4INFO JSON valueset   MODIFY the value set to 0x88b5 and 0x0800; read
    finsy_features.py ADDR P4INFO JSON idle       an entry with a 300 ms idle timeout; wait for
                                                  its IdleTimeoutNotification
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import finsy as fy
from finsy.p4entity import P4ValueSetMember


async def selector(sw: fy.Switch) -> dict:
    members = [
        fy.P4ActionProfileMember(
            "ecmp_selector", member_id=m, action=fy.P4TableAction("set_port", port=m + 1)
        )
        for m in (1, 2, 3)
    ]
    group = fy.P4ActionProfileGroup(
        "ecmp_selector",
        group_id=7,
        members=[fy.P4Member(1, weight=2), fy.P4Member(2, weight=1), fy.P4Member(3, weight=1)],
    )
    by_group = fy.P4TableEntry(
        "ecmp", match=fy.P4TableMatch(etherType=0x88B5), action=fy.P4IndirectAction(group_id=7)
    )
    oneshot = fy.P4TableEntry(
        "ecmp",
        match=fy.P4TableMatch(etherType=0x88B6),
        action=fy.P4IndirectAction(
            [(1, fy.P4TableAction("set_port", port=2)), (3, fy.P4TableAction("set_port", port=4))]
        ),
    )
    await sw.write([+m for m in members] + [+group])
    await sw.write([+by_group, +oneshot])
    got_members = sorted([m.member_id async for m in sw.read(fy.P4ActionProfileMember("ecmp_selector"))])
    groups = [
        [g.group_id, sorted((m.member_id, m.weight) for m in (g.members or []))]
        async for g in sw.read(fy.P4ActionProfileGroup("ecmp_selector"))
    ]
    entries = []
    async for e in sw.read(fy.P4TableEntry("ecmp")):
        a = e.action
        entries.append([a.group_id, len(a.action_set or [])])
    return {"members": got_members, "groups": groups, "entries": sorted(entries, key=str)}


async def valueset(sw: fy.Switch) -> dict:
    members = [P4ValueSetMember({"etherType": 0x88B5}), P4ValueSetMember({"etherType": 0x0800})]
    await sw.write([fy.P4ValueSetEntry("pvs", members=members)], warn_only=False)
    got = [e async for e in sw.read(fy.P4ValueSetEntry("pvs", members=[]))]
    values = []
    for e in got:
        for m in e.encode(sw.p4info).value_set_entry.members:
            values.append(m.match[0].exact.value.hex())
    return {"values": sorted(values)}


async def idle(sw: fy.Switch) -> dict:
    entry = fy.P4TableEntry(
        "ecmp", match=fy.P4TableMatch(etherType=0x88B5), action=fy.P4TableAction("set_port", port=1),
        idle_timeout_ns=300_000_000,
    )  # fmt: skip
    start = time.monotonic()
    await sw.write([+entry])
    async for n in sw.read_idle_timeouts():
        ttl = [e.idle_timeout_ns for e in n.table_entry]
        return {"after_s": round(time.monotonic() - start, 3), "ttl": ttl}
    return {}


async def main() -> None:
    addr, p4info, bmv2, mode = sys.argv[1:5]
    opts = fy.SwitchOptions(device_id=0, p4info=Path(p4info), p4blob=Path(bmv2))
    async with fy.Switch("lanes", addr, opts) as sw:
        out = await asyncio.wait_for({"selector": selector, "valueset": valueset, "idle": idle}[mode](sw), 20)
        print(json.dumps(out), flush=True)


asyncio.run(main())

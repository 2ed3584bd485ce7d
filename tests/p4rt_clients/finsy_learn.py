"""finsy (unmodified, from PyPI) as the controller of a learning switch: win arbitration, push
the pipeline, make multicast group 1 (ports 1-3) and configure the learn_t digest; then, for
every DigestList, ack it and install smac (known source) and dmac (forward to its port)
entries. Prints JSON lines: {"ready": ...}, then {"learned": MAC, "port": N} per digest.

    finsy_learn.py ADDR P4INFO JSON
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import finsy as fy


async def main() -> None:
    addr, p4info, bmv2 = sys.argv[1:4]
    opts = fy.SwitchOptions(device_id=0, p4info=Path(p4info), p4blob=Path(bmv2))
    async with fy.Switch("lanes", addr, opts) as sw:
        await sw.write(
            [
                +fy.P4MulticastGroupEntry(1, replicas=[1, 2, 3]),
                +fy.P4DigestEntry("learn_t", max_list_size=1, max_timeout_ns=1_000_000, ack_timeout_ns=10**9),
            ]
        )
        groups = [g.replicas async for g in sw.read(fy.P4MulticastGroupEntry())]
        digests = [d.max_list_size async for d in sw.read(fy.P4DigestEntry())]
        print(json.dumps({"ready": sw.is_primary, "groups": groups, "digests": digests}), flush=True)
        async for dl in sw.read_digests("learn_t"):
            await sw.write([dl.ack()])
            for item in dl:
                mac, port = item["src_mac"], item["ingress_port"]
                await sw.write(
                    [
                        +fy.P4TableEntry(
                            "smac",
                            match=fy.P4TableMatch({"hdr.ethernet.srcAddr": mac}),
                            action=fy.P4TableAction("NoAction"),
                        ),
                        +fy.P4TableEntry(
                            "dmac",
                            match=fy.P4TableMatch({"hdr.ethernet.dstAddr": mac}),
                            action=fy.P4TableAction("forward", port=port),
                        ),
                    ]
                )
                print(json.dumps({"learned": f"{mac:012x}", "port": port}), flush=True)


asyncio.run(main())

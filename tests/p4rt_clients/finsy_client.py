"""finsy (unmodified, from PyPI) against a lanes switch: win arbitration, push the pipeline,
write an acl entry that sends 0x88b5 frames to the CPU, then wait for one PacketIn and answer
it with a PacketOut to port 2, then read counters. Prints JSON lines: {"ready": ...},
{"packet_in": ...}, {"done": ...}.

    finsy_client.py ADDR P4INFO JSON
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
        entry = fy.P4TableEntry(
            "acl",
            match=fy.P4TableMatch(etherType="0x88b5/&0xffff", ingress_port="1...2"),
            action=fy.P4TableAction("send_to_cpu"),
            priority=100,
        )
        await sw.write([+entry])
        got = [e async for e in sw.read(fy.P4TableEntry("acl"))]
        print(json.dumps({"ready": sw.is_primary, "acl": len(got)}), flush=True)
        async for pkt in sw.read_packets():
            print(
                json.dumps({"packet_in": pkt.payload.hex(), "ingress_port": pkt["ingress_port"]}), flush=True
            )
            await sw.write(
                [fy.P4PacketOut(pkt.payload[:12] + b"\x88\xb6" + pkt.payload[14:], egress_port=2, _pad=0)]
            )
            break
        await asyncio.sleep(0.5)
        ports = {}
        for port in (1, 255):
            async for c in sw.read(fy.P4CounterEntry("port_counter", index=port)):
                ports[port] = c.data.packet_count if c.data else 0
        direct = [d.packet_count async for d in sw.read(fy.P4DirectCounterEntry("acl_counter"))]
        print(json.dumps({"done": True, "port_counter": ports, "acl_counter": direct}), flush=True)


asyncio.run(main())

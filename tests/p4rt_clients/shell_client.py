"""p4runtime-shell (unmodified, from PyPI) against a lanes switch; run with .venv-p4rt-shell's
python. One step per call; prints one JSON object.

    shell_client.py ADDR P4INFO JSON setup H1MAC H2MAC   push the pipeline, l2_fwd + acl entries
    shell_client.py ADDR P4INFO JSON stats              port counter of port 1, acl direct counters
    shell_client.py ADDR P4INFO JSON delete-drop        delete the priority-20 drop entry
    shell_client.py ADDR P4INFO JSON errors             malformed and duplicate writes
"""

from __future__ import annotations

import json
import sys

import p4runtime_sh.shell as sh
from p4runtime_sh.p4runtime import P4RuntimeWriteException


def acl(etype: str, prio: int, action: str, port: str | None = None):
    te = sh.TableEntry("MyIngress.acl")(action=action)
    te.match["hdr.ethernet.etherType"] = etype
    te.match["standard_metadata.ingress_port"] = "1..2"
    te.priority = prio
    if port is not None:
        te.action["port"] = port
    return te


def main() -> int:
    addr, p4info, bmv2, step = sys.argv[1:5]
    out: dict = {}
    config = sh.FwdPipeConfig(p4info, bmv2) if step == "setup" else None
    sh.setup(device_id=0, grpc_addr=addr, election_id=(0, 1), config=config)
    try:
        if step == "setup":
            h1, h2 = sys.argv[5], sys.argv[6]
            for m, port in ((h1, "1"), (h2, "2")):
                te = sh.TableEntry("MyIngress.l2_fwd")(action="MyIngress.set_port")
                te.match["hdr.ethernet.dstAddr"] = m
                te.action["port"] = port
                te.insert()
            # 0x88b7 frames: allowed by the priority-10 entry, dropped by the priority-20 one
            acl("0x88b7&&&0xffff", 10, "MyIngress.set_port", "2").insert()
            acl("0x8800&&&0xff00", 20, "MyIngress.drop").insert()
            out["l2_fwd"] = sorted(
                str(e.match["hdr.ethernet.dstAddr"].exact.value.hex())
                for e in sh.TableEntry("MyIngress.l2_fwd").read()
            )
            out["acl_priorities"] = sorted(e.priority for e in sh.TableEntry("MyIngress.acl").read())
        elif step == "stats":
            c = sh.CounterEntry("MyIngress.port_counter")
            c.index = 1
            d = next(iter(c.read())).data
            out["port1"] = [d.packet_count, d.byte_count]
            out["acl"] = {}
            for e in sh.DirectCounterEntry("MyIngress.acl_counter").read():
                out["acl"][e.table_entry.priority] = [e.data.packet_count, e.data.byte_count]
        elif step == "delete-drop":
            te = acl("0x8800&&&0xff00", 20, "MyIngress.drop")
            te.delete()
            out["acl_priorities"] = sorted(e.priority for e in sh.TableEntry("MyIngress.acl").read())
        elif step == "errors":
            te = sh.TableEntry("MyIngress.l2_fwd")(action="MyIngress.set_port")
            te.match["hdr.ethernet.dstAddr"] = sys.argv[5]
            te.action["port"] = "1"
            try:
                te.insert()
            except P4RuntimeWriteException as e:
                out["duplicate"] = [err.canonical_code for _, err in e.errors]
            te = sh.TableEntry("MyIngress.l2_fwd")(action="MyIngress.set_port")
            te.match["hdr.ethernet.dstAddr"] = "00:00:00:00:0f:0f"
            te.action["port"] = "1"
            try:
                te.delete()
            except P4RuntimeWriteException as e:
                out["missing"] = [err.canonical_code for _, err in e.errors]
        print(json.dumps(out), flush=True)
    finally:
        sh.teardown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

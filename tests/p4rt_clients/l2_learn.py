"""A learning switch for tests, written here as bmv2 JSON and P4Info (what p4c would emit for
it): ingress digests (source MAC, ingress port) of sources `smac` does not know, forwards to
the port `dmac` knows for the destination or floods to multicast group 1; egress drops the
copy that would go back out of the ingress port.

    l2_learn.py OUT_DIR   -> OUT_DIR/l2_learn.json, OUT_DIR/l2_learn.p4info.txtpb
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from google.protobuf import text_format
from lanes.p4runtime.proto import p4i

NO_ACTION, LEARN, FORWARD, FLOOD, DROP = 0x01000001, 0x01000002, 0x01000003, 0x01000004, 0x01000005
SMAC, DMAC = 0x02000001, 0x02000002
DIGEST = 0x17000001


def _f(h: str, f: str) -> dict:
    return {"type": "field", "value": [h, f]}


def _hex(v: int) -> dict:
    return {"type": "hexstr", "value": hex(v)}


def _assign(dst: dict, src: dict) -> dict:
    return {"op": "assign", "parameters": [dst, src]}


def _table(
    name: str, tid: int, key: str, actions: list[tuple[int, str]], default: int, nxt: str | None
) -> dict:
    return {
        "name": name,
        "id": tid,
        "key": [
            {"match_type": "exact", "name": f"hdr.ethernet.{key}", "target": ["ethernet", key], "mask": None}
        ],
        "match_type": "exact",
        "type": "simple",
        "max_size": 1024,
        "with_counters": False,
        "support_timeout": False,
        "direct_meters": None,
        "action_ids": [a[0] for a in actions],
        "actions": [a[1] for a in actions],
        "base_default_next": nxt,
        "next_tables": {a[1]: nxt for a in actions},
        "default_entry": {
            "action_id": default,
            "action_const": False,
            "action_data": [],
            "action_entry_const": False,
        },
    }


def bmv2_json() -> dict:
    std = [
        ["ingress_port", 9, False], ["egress_spec", 9, False], ["egress_port", 9, False],
        ["instance_type", 32, False], ["packet_length", 32, False], ["egress_rid", 16, False],
        ["mcast_grp", 16, False], ["checksum_error", 1, False], ["parser_error", 32, False],
        ["priority", 3, False], ["_padding", 3, False],
    ]  # fmt: skip
    return {
        "header_types": [
            {"name": "scalars_0", "id": 0, "fields": []},
            {"name": "standard_metadata", "id": 1, "fields": std},
            {
                "name": "ethernet_t",
                "id": 2,
                "fields": [["dstAddr", 48, False], ["srcAddr", 48, False], ["etherType", 16, False]],
            },
        ],
        "headers": [
            {"name": "scalars", "id": 0, "header_type": "scalars_0", "metadata": True},
            {"name": "standard_metadata", "id": 1, "header_type": "standard_metadata", "metadata": True},
            {"name": "ethernet", "id": 2, "header_type": "ethernet_t", "metadata": False},
        ],
        "errors": [["NoError", 0], ["PacketTooShort", 1]],
        "learn_lists": [
            {
                "id": 1,
                "name": "learn_t",
                "elements": [_f("ethernet", "srcAddr"), _f("standard_metadata", "ingress_port")],
            }
        ],
        "parsers": [
            {
                "name": "parser",
                "id": 0,
                "init_state": "start",
                "parse_states": [
                    {
                        "name": "start",
                        "id": 0,
                        "parser_ops": [
                            {"op": "extract", "parameters": [{"type": "regular", "value": "ethernet"}]}
                        ],
                        "transition_key": [],
                        "transitions": [{"type": "default", "value": None, "mask": None, "next_state": None}],
                    }
                ],
            }
        ],
        "deparsers": [{"name": "deparser", "id": 0, "order": ["ethernet"]}],
        "actions": [
            {"name": "NoAction", "id": 0, "runtime_data": [], "primitives": []},
            {
                "name": "MyIngress.learn",
                "id": 1,
                "runtime_data": [],
                "primitives": [{"op": "generate_digest", "parameters": [_hex(1), _hex(1)]}],
            },
            {
                "name": "MyIngress.forward",
                "id": 2,
                "runtime_data": [{"name": "port", "bitwidth": 9}],
                "primitives": [
                    _assign(_f("standard_metadata", "egress_spec"), {"type": "runtime_data", "value": 0})
                ],
            },
            {
                "name": "MyIngress.flood",
                "id": 3,
                "runtime_data": [],
                "primitives": [_assign(_f("standard_metadata", "mcast_grp"), _hex(1))],
            },
            {
                "name": "MyEgress.drop",
                "id": 4,
                "runtime_data": [],
                "primitives": [
                    {"op": "mark_to_drop", "parameters": [{"type": "header", "value": "standard_metadata"}]}
                ],
            },
        ],
        "pipelines": [
            {
                "name": "ingress",
                "id": 0,
                "init_table": "MyIngress.smac",
                "conditionals": [],
                "tables": [
                    _table(
                        "MyIngress.smac",
                        0,
                        "srcAddr",
                        [(1, "MyIngress.learn"), (0, "NoAction")],
                        1,
                        "MyIngress.dmac",
                    ),
                    _table(
                        "MyIngress.dmac",
                        1,
                        "dstAddr",
                        [(2, "MyIngress.forward"), (3, "MyIngress.flood")],
                        3,
                        None,
                    ),
                ],
            },
            {
                "name": "egress",
                "id": 1,
                "init_table": "prune",
                "conditionals": [
                    {
                        "name": "prune",
                        "id": 0,
                        "expression": {
                            "type": "expression",
                            "value": {
                                "op": "==",
                                "left": _f("standard_metadata", "egress_port"),
                                "right": _f("standard_metadata", "ingress_port"),
                            },
                        },
                        "true_next": "tbl_drop",
                        "false_next": None,
                    }
                ],
                "tables": [
                    {
                        "name": "tbl_drop",
                        "id": 2,
                        "key": [],
                        "match_type": "exact",
                        "type": "simple",
                        "max_size": 1,
                        "action_ids": [4],
                        "actions": ["MyEgress.drop"],
                        "base_default_next": None,
                        "next_tables": {"MyEgress.drop": None},
                        "default_entry": {
                            "action_id": 4,
                            "action_const": True,
                            "action_data": [],
                            "action_entry_const": True,
                        },
                    }
                ],
            },
        ],
    }


def p4info() -> p4i.P4Info:
    info = p4i.P4Info()
    info.pkg_info.arch = "v1model"
    for aid, name, params in [
        (NO_ACTION, "NoAction", []),
        (LEARN, "MyIngress.learn", []),
        (FORWARD, "MyIngress.forward", [("port", 9)]),
        (FLOOD, "MyIngress.flood", []),
        (DROP, "MyEgress.drop", []),
    ]:
        a = info.actions.add()
        a.preamble.id, a.preamble.name, a.preamble.alias = aid, name, name.split(".")[-1]
        for i, (pn, w) in enumerate(params, 1):
            a.params.add(id=i, name=pn, bitwidth=w)
    for tid, name, key, acts in [
        (SMAC, "MyIngress.smac", "srcAddr", [LEARN, NO_ACTION]),
        (DMAC, "MyIngress.dmac", "dstAddr", [FORWARD, FLOOD]),
    ]:
        t = info.tables.add()
        t.preamble.id, t.preamble.name, t.preamble.alias = tid, name, name.split(".")[-1]
        t.match_fields.add(id=1, name=f"hdr.ethernet.{key}", bitwidth=48, match_type=p4i.MatchField.EXACT)
        for a in acts:
            t.action_refs.add(id=a)
        t.size = 1024
    d = info.digests.add()
    d.preamble.id, d.preamble.name, d.preamble.alias = DIGEST, "learn_t", "learn_t"
    d.type_spec.struct.name = "learn_t"
    st = info.type_info.structs["learn_t"]
    for name, w in [("src_mac", 48), ("ingress_port", 9)]:
        m = st.members.add(name=name)
        m.type_spec.bitstring.bit.bitwidth = w
    return info


def write(out: Path) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    j, info = out / "l2_learn.json", out / "l2_learn.p4info.txtpb"
    j.write_text(json.dumps(bmv2_json(), indent=1))
    info.write_text(text_format.MessageToString(p4info()))
    return j, info


if __name__ == "__main__":
    write(Path(sys.argv[1]))

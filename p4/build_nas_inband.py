#!/usr/bin/env python3
"""Writes nas_inband.json and nas_inband.p4info.txtpb, the bmv2 JSON and P4Info of nas_inband.p4.

No P4 compiler runs on the machines lanes is built on, so this script spells out, statement by
statement, what p4c-bm2-ss emits for nas_inband.p4 (keyless tbl_* tables for actions called in
apply blocks, conditionals as expression trees, arithmetic masked to its width). Edit the .p4
and this script together, then run it from the repository root:

    python3 p4/build_nas_inband.py
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = "nas_inband.p4"
WINDOW_US = 250000
MIN_PKTS = 20
STREAK = 3
NAS_MARK = 0x04
TYPE_IPV4 = 0x0800
TYPE_FB = 0x88B5


# --- operands -------------------------------------------------------------------------------
def f(h: str, name: str) -> dict:
    return {"type": "field", "value": [h, name]}


def m(name: str) -> dict:
    return f("scalars", f"userMetadata.{name}")


def sm(name: str) -> dict:
    return f("standard_metadata", name)


def hexv(v: int) -> dict:
    return {"type": "hexstr", "value": hex(v)}


def rt(i: int) -> dict:
    return {"type": "runtime_data", "value": i}


def ex(op: str, left: dict | None, right: dict) -> dict:
    return {"type": "expression", "value": {"op": op, "left": left, "right": right}}


def masked(op: str, left: dict, right: dict, bits: int) -> dict:
    """Arithmetic as p4c emits it: wrapped around at the destination's width."""
    return ex("&", ex(op, left, right), hexv((1 << bits) - 1))


def valid(h: str) -> dict:
    return ex("d2b", None, f(h, "$valid$"))


def reg(name: str) -> dict:
    return {"type": "register_array", "value": name}


# --- primitives -------------------------------------------------------------------------------
def assign(dst: dict, src: dict) -> dict:
    return {"op": "assign", "parameters": [dst, src]}


def rread(dst: dict, r: str, index: dict) -> dict:
    return {"op": "register_read", "parameters": [dst, reg(r), index]}


def rwrite(r: str, index: dict, value: dict) -> dict:
    return {"op": "register_write", "parameters": [reg(r), index, value]}


def count(c: str, index: int) -> dict:
    return {"op": "count", "parameters": [{"type": "counter_array", "value": c}, hexv(index)]}


def prim(op: str, *params: dict) -> dict:
    return {"op": op, "parameters": list(params)}


EPORT = sm("egress_port")
NOW_E = sm("egress_global_timestamp")
NOW_I = sm("ingress_global_timestamp")

# name -> (runtime_data [(name, bits)], primitives); ids follow this order
ACTIONS: dict[str, tuple[list[tuple[str, int]], list[dict]]] = {
    "NoAction": ([], []),
    "MyIngress.drop": ([], [prim("mark_to_drop", {"type": "header", "value": "standard_metadata"})]),
    "MyIngress.ipv4_forward": ([("dstAddr", 48), ("port", 9)], [
        assign(sm("egress_spec"), rt(1)),
        assign(f("ethernet", "dstAddr"), rt(0)),
    ]),
    "MyIngress.set_priority": ([("prio", 3), ("queue_rate", 64), ("queue_quantum", 64)], [
        assign(sm("priority"), rt(0)),
        assign(sm("queue_rate"), rt(1)),
        assign(sm("queue_quantum"), rt(2)),
    ]),
    "MyIngress.nas_watch": ([("flow", 32)], [assign(m("flow"), rt(0))]),
    "MyIngress.nas_demote": ([("prio", 3), ("queue_quantum", 64)], [
        assign(sm("priority"), rt(0)),
        assign(sm("queue_rate"), hexv(0)),
        assign(sm("queue_quantum"), rt(1)),
    ]),
    "MyIngress.nas_count_in": ([], [
        rread(m("a"), "nas_in", m("flow")),
        rwrite("nas_in", m("flow"), masked("+", m("a"), hexv(1), 32)),
        rwrite("nas_in_port", m("flow"), sm("ingress_port")),
        rwrite("nas_src", m("flow"), f("ipv4", "srcAddr")),
        rwrite("nas_dst", m("flow"), f("ipv4", "dstAddr")),
        rread(m("t"), "nas_demoted_until", m("flow")),
    ]),
    "MyIngress.nas_feedback_in": ([], [
        prim("mark_to_drop", {"type": "header", "value": "standard_metadata"}),
        count("nas_events", 0),
        rread(m("t"), "nas_lossy_until", m("flow")),
        rread(m("t2"), "nas_demoted_until", m("flow")),
    ]),
    "MyIngress.nas_hold_flow": ([], [
        rread(m("t"), "nas_hold", hexv(0)),
        rwrite("nas_demoted_until", m("flow"), masked("+", NOW_I, m("t"), 48)),
        count("nas_events", 1),
    ]),
    "MyIngress.nas_pass_on": ([], [
        rread(m("port"), "nas_in_port", m("flow")),
        prim("clone_ingress_pkt_to_egress", m("port"), hexv(0)),
        count("nas_events", 2),
    ]),
    "MyEgress.nas_port_cfg": ([("busy_bytes", 32), ("edge", 1)], [
        assign(m("busy_bytes"), rt(0)),
        assign(m("edge"), rt(1)),
    ]),
    "MyEgress.nas_make_feedback": ([], [
        rread(m("doomed"), "MyEgress.nas_fb_flow", EPORT),
        rread(f("ipv4", "srcAddr"), "nas_src", m("doomed")),
        rread(f("ipv4", "dstAddr"), "nas_dst", m("doomed")),
        assign(f("ethernet", "etherType"), hexv(TYPE_FB)),
        assign(f("ipv4", "diffserv"), hexv(0)),
        prim("truncate", hexv(34)),
        count("nas_events", 3),
    ]),
    "MyEgress.nas_port_window": ([], [
        rread(m("a"), "MyEgress.nas_port_bytes", EPORT),
        assign(m("a"), masked("+", m("a"), sm("packet_length"), 32)),
        rwrite("MyEgress.nas_port_bytes", EPORT, m("a")),
        rread(m("t"), "MyEgress.nas_port_win_start", EPORT),
    ]),
    "MyEgress.nas_port_window_end": ([], [
        rwrite("MyEgress.nas_port_win_start", EPORT, NOW_E),
        rwrite("MyEgress.nas_port_bytes", EPORT, hexv(0)),
    ]),
    "MyEgress.nas_port_forget": ([], [rwrite("MyEgress.nas_port_doomed", EPORT, hexv(0))]),
    "MyEgress.nas_flow_window": ([], [
        rread(m("b"), "MyEgress.nas_out", m("flow")),
        assign(m("b"), masked("+", m("b"), hexv(1), 32)),
        rwrite("MyEgress.nas_out", m("flow"), m("b")),
        rread(m("t"), "MyEgress.nas_win_start", m("flow")),
    ]),
    "MyEgress.nas_flow_window_end": ([], [
        rread(m("a"), "nas_in", m("flow")),
        rread(m("c"), "MyEgress.nas_win_in", m("flow")),
        rread(m("d"), "MyEgress.nas_win_out", m("flow")),
        assign(m("c"), masked("-", m("a"), m("c"), 32)),
        assign(m("d"), masked("-", m("b"), m("d"), 32)),
        rwrite("MyEgress.nas_win_start", m("flow"), NOW_E),
        rwrite("MyEgress.nas_win_in", m("flow"), m("a")),
        rwrite("MyEgress.nas_win_out", m("flow"), m("b")),
        rread(m("streak"), "MyEgress.nas_streak", m("flow")),
    ]),
    "MyEgress.nas_lossy": ([], [
        rwrite("nas_lossy_until", m("flow"), masked("+", NOW_E, hexv(2 * WINDOW_US), 48)),
        assign(m("streak"), masked("+", m("streak"), hexv(1), 8)),
        rwrite("MyEgress.nas_streak", m("flow"), m("streak")),
    ]),
    "MyEgress.nas_not_lossy": ([], [
        rwrite("MyEgress.nas_streak", m("flow"), hexv(0)),
        assign(m("streak"), hexv(0)),
    ]),
    "MyEgress.nas_doom": ([], [rwrite("MyEgress.nas_port_doomed", EPORT, m("flow"))]),
    "MyEgress.nas_read_lossy": ([], [rread(m("t"), "nas_lossy_until", m("flow"))]),
    "MyEgress.nas_mark": ([], [assign(f("ipv4", "diffserv"), ex("|", f("ipv4", "diffserv"), hexv(NAS_MARK)))]),
    "MyEgress.nas_unmark": ([], [assign(f("ipv4", "diffserv"), ex("&", f("ipv4", "diffserv"), hexv(0xFF ^ NAS_MARK)))]),
    "MyEgress.nas_feedback_due": ([], [
        rread(m("doomed"), "MyEgress.nas_port_doomed", EPORT),
        rread(m("t"), "MyEgress.nas_port_fb_at", EPORT),
    ]),
    "MyEgress.nas_send_feedback": ([], [
        rwrite("MyEgress.nas_port_fb_at", EPORT, NOW_E),
        rread(m("port"), "nas_in_port", m("doomed")),
        rwrite("MyEgress.nas_fb_flow", m("port"), m("doomed")),
        prim("clone_egress_pkt_to_egress", m("port"), hexv(0)),
    ]),
}
AID = {name: i for i, name in enumerate(ACTIONS)}

METADATA = [("flow", 32), ("busy_bytes", 32), ("edge", 1), ("t", 48), ("t2", 48), ("a", 32), ("b", 32),
            ("c", 32), ("d", 32), ("streak", 8), ("doomed", 32), ("port", 9)]  # fmt: skip
REGISTERS = [  # (name, size, bits)
    ("nas_in", 1024, 32), ("nas_in_port", 1024, 9), ("nas_src", 1024, 32), ("nas_dst", 1024, 32),
    ("nas_lossy_until", 1024, 48), ("nas_demoted_until", 1024, 48), ("nas_hold", 1, 48),
    ("MyEgress.nas_out", 1024, 32), ("MyEgress.nas_win_start", 1024, 48), ("MyEgress.nas_win_in", 1024, 32),
    ("MyEgress.nas_win_out", 1024, 32), ("MyEgress.nas_streak", 1024, 8),
    ("MyEgress.nas_port_win_start", 512, 48), ("MyEgress.nas_port_bytes", 512, 32),
    ("MyEgress.nas_port_doomed", 512, 32), ("MyEgress.nas_port_fb_at", 512, 48),
    ("MyEgress.nas_fb_flow", 512, 32),
]  # fmt: skip


def table(name: str, tid: int, key: list[dict], actions: list[str], next_: str | None, size: int = 1024,
          default: tuple[str, list[int], bool] = ("NoAction", [], False)) -> dict:  # fmt: skip
    """A match table; every action goes on to `next_`."""
    act, data, const = default
    return {
        "name": name, "id": tid, "source_info": {"filename": SRC, "line": 0, "column": 0, "source_fragment": name},
        "key": key, "match_type": key[0]["match_type"] if key else "exact", "type": "simple", "max_size": size,
        "with_counters": False, "support_timeout": False, "direct_meters": None,
        "action_ids": [AID[a] for a in actions], "actions": actions, "base_default_next": next_,
        "next_tables": {a: next_ for a in actions},
        "default_entry": {"action_id": AID[act], "action_const": const, "action_data": [hex(d) for d in data],
                          "action_entry_const": const},
    }  # fmt: skip


def tbl(action: str, tid: int, next_: str | None) -> dict:
    """The keyless table p4c makes for an action called directly in an apply block."""
    short = action.split(".")[-1]
    return table(f"tbl_{short}", tid, [], [action], next_, size=1024, default=(action, [], True))


def key(target: dict, match_type: str, name: str) -> dict:
    return {"match_type": match_type, "name": name, "target": target["value"], "mask": None}


def cond(name: str, cid: int, expr: dict, t: str | None, fl: str | None) -> dict:
    return {"name": name, "id": cid, "source_info": {"filename": SRC, "line": 0, "column": 0, "source_fragment": name},
            "expression": expr, "true_next": t, "false_next": fl}  # fmt: skip


def ingress() -> dict:
    tabs = [
        table("MyIngress.nas_flow", 0, [key(f("ipv4", "srcAddr"), "exact", "hdr.ipv4.srcAddr"),
                                        key(f("ipv4", "dstAddr"), "exact", "hdr.ipv4.dstAddr")],
              ["MyIngress.nas_watch", "NoAction"], "node_fb"),
        tbl("MyIngress.nas_feedback_in", 1, "node_fb_flow"),
        tbl("MyIngress.nas_hold_flow", 2, None),
        tbl("MyIngress.nas_pass_on", 3, None),
        table("MyIngress.src_ip_prio", 4, [key(f("ipv4", "srcAddr"), "lpm", "hdr.ipv4.srcAddr")],
              ["MyIngress.set_priority", "MyIngress.drop", "NoAction"], "MyIngress.ipv4_lpm",
              default=("MyIngress.drop", [], False)),
        table("MyIngress.ipv4_lpm", 5, [key(f("ipv4", "dstAddr"), "lpm", "hdr.ipv4.dstAddr")],
              ["MyIngress.ipv4_forward", "MyIngress.drop", "NoAction"], "node_watched",
              default=("MyIngress.drop", [], False)),
        tbl("MyIngress.nas_count_in", 6, "node_demoted"),
        table("MyIngress.nas_demotion", 7, [], ["MyIngress.nas_demote"], None, size=1024,
              default=("MyIngress.nas_demote", [1, 450], False)),
    ]  # fmt: skip
    conds = [
        cond("node_ip", 0, valid("ipv4"), "MyIngress.nas_flow", None),
        cond("node_fb", 1, ex("==", f("ethernet", "etherType"), hexv(TYPE_FB)), "tbl_nas_feedback_in",
             "MyIngress.src_ip_prio"),
        cond("node_fb_flow", 2, ex("!=", m("flow"), hexv(0)), "node_fb_here", None),
        cond("node_fb_here", 3, ex("or", ex("<", NOW_I, m("t")), ex("<", NOW_I, m("t2"))), "tbl_nas_hold_flow",
             "tbl_nas_pass_on"),
        cond("node_watched", 4, ex("!=", m("flow"), hexv(0)), "tbl_nas_count_in", None),
        cond("node_demoted", 5, ex("<", NOW_I, m("t")), "MyIngress.nas_demotion", None),
    ]  # fmt: skip
    return {"name": "ingress", "id": 0, "init_table": "node_ip", "tables": tabs, "action_profiles": [],
            "conditionals": conds}  # fmt: skip


def egress() -> dict:
    window_over = ex(">=", masked("-", NOW_E, m("t"), 48), hexv(WINDOW_US))
    tabs = [
        tbl("MyEgress.nas_make_feedback", 8, None),
        table("MyEgress.nas_port", 9, [key(sm("egress_port"), "exact", "standard_metadata.egress_port")],
              ["MyEgress.nas_port_cfg", "NoAction"], "tbl_nas_port_window", size=512),
        tbl("MyEgress.nas_port_window", 10, "node_port_window_over"),
        tbl("MyEgress.nas_port_forget", 11, "tbl_nas_port_window_end"),
        tbl("MyEgress.nas_port_window_end", 12, "node_flow"),
        tbl("MyEgress.nas_flow_window", 13, "node_flow_window_over"),
        tbl("MyEgress.nas_flow_window_end", 14, "node_lossy"),
        tbl("MyEgress.nas_lossy", 15, "node_doom"),
        tbl("MyEgress.nas_doom", 16, "tbl_nas_read_lossy"),
        tbl("MyEgress.nas_not_lossy", 17, "tbl_nas_read_lossy"),
        tbl("MyEgress.nas_read_lossy", 18, "node_mark"),
        tbl("MyEgress.nas_mark", 19, "node_edge"),
        tbl("MyEgress.nas_unmark", 20, "tbl_nas_feedback_due"),
        tbl("MyEgress.nas_feedback_due", 21, "node_feedback"),
        tbl("MyEgress.nas_send_feedback", 22, None),
    ]  # fmt: skip
    conds = [
        cond("node_clone", 6, ex("==", sm("instance_type"), hexv(2)), "tbl_nas_make_feedback", "node_original"),
        cond("node_original", 7, ex("and", ex("and", ex("==", sm("instance_type"), hexv(0)), valid("ipv4")),
                                    ex("==", f("ethernet", "etherType"), hexv(TYPE_IPV4))),
             "MyEgress.nas_port", None),
        cond("node_port_window_over", 8, window_over, "node_port_idle", "node_flow"),
        # a window that ran over two lengths saw the port fall silent: not busy, whatever it carried
        cond("node_port_idle", 9, ex("or", ex("<", m("a"), m("busy_bytes")),
                                     ex(">=", masked("-", NOW_E, m("t"), 48), hexv(2 * WINDOW_US))),
             "tbl_nas_port_forget", "tbl_nas_port_window_end"),
        cond("node_flow", 10, ex("!=", m("flow"), hexv(0)), "tbl_nas_flow_window", "node_edge"),
        cond("node_flow_window_over", 11, window_over, "tbl_nas_flow_window_end", "tbl_nas_read_lossy"),
        cond("node_lossy", 12, ex("and", ex("and", ex(">=", m("c"), hexv(MIN_PKTS)), ex(">=", m("c"), m("d"))),
                                  ex(">=", masked("*", masked("-", m("c"), m("d"), 32), hexv(20), 32), m("c"))),
             "tbl_nas_lossy", "tbl_nas_not_lossy"),
        cond("node_doom", 13, ex("and", ex("and", ex(">=", m("streak"), hexv(STREAK)),
                                           ex("!=", ex("&", f("ipv4", "diffserv"), hexv(NAS_MARK)), hexv(0))),
                                 ex("!=", m("busy_bytes"), hexv(0))),
             "tbl_nas_doom", "tbl_nas_read_lossy"),
        cond("node_mark", 14, ex("<", NOW_E, m("t")), "tbl_nas_mark", "node_edge"),
        cond("node_edge", 15, ex("==", m("edge"), hexv(1)), "tbl_nas_unmark", "tbl_nas_feedback_due"),
        cond("node_feedback", 16, ex("and", ex("!=", m("doomed"), hexv(0)), window_over),
             "tbl_nas_send_feedback", None),
    ]  # fmt: skip
    return {"name": "egress", "id": 1, "init_table": "node_clone", "tables": tabs, "action_profiles": [],
            "conditionals": conds}  # fmt: skip


def program() -> dict:
    base = json.loads((HERE / "nas.json").read_text())
    std = next(h for h in base["header_types"] if h["name"] == "standard_metadata")
    eth = next(h for h in base["header_types"] if h["name"] == "ethernet_t")
    ip = next(h for h in base["header_types"] if h["name"] == "ipv4_t")
    pad = (-sum(b for _, b in METADATA)) % 8
    scalars = {"name": "scalars_0", "id": 0,
               "fields": [[f"userMetadata.{n}", b, False] for n, b in METADATA] + ([["_padding_0", pad, False]] if pad else [])}  # fmt: skip
    std, eth, ip = dict(std, id=1), dict(eth, id=2), dict(ip, id=3)
    csum_inputs = [f("ipv4", n) for n in ("version", "ihl", "diffserv", "totalLen", "identification", "flags",
                                          "fragOffset", "ttl", "protocol", "srcAddr", "dstAddr")]  # fmt: skip
    parser = json.loads(json.dumps(base["parsers"]))
    eth_state = next(s for s in parser[0]["parse_states"] if s["name"] == "parse_ethernet")
    eth_state["transitions"].insert(1, {"type": "hexstr", "value": hex(TYPE_FB), "mask": None, "next_state": "parse_ipv4"})
    actions = [{"name": n, "id": AID[n], "runtime_data": [{"name": p, "bitwidth": b} for p, b in rd],
                "primitives": prims} for n, (rd, prims) in ACTIONS.items()]  # fmt: skip
    return {
        "header_types": [scalars, std, eth, ip],
        "headers": [
            {"name": "scalars", "id": 0, "header_type": "scalars_0", "metadata": True, "pi_omit": True},
            {"name": "standard_metadata", "id": 1, "header_type": "standard_metadata", "metadata": True, "pi_omit": True},
            {"name": "ethernet", "id": 2, "header_type": "ethernet_t", "metadata": False, "pi_omit": True},
            {"name": "ipv4", "id": 3, "header_type": "ipv4_t", "metadata": False, "pi_omit": True},
        ],
        "header_stacks": [], "header_union_types": [], "header_unions": [], "header_union_stacks": [],
        "field_lists": [], "errors": base["errors"], "enums": [],
        "parsers": parser, "parse_vsets": [], "deparsers": base["deparsers"],
        "meter_arrays": [],
        "counter_arrays": [{"name": "nas_events", "id": 0, "is_direct": False, "size": 4,
                            "source_info": {"filename": SRC, "line": 0, "column": 0, "source_fragment": "nas_events"}}],
        "register_arrays": [{"name": n, "id": i, "size": s, "bitwidth": b,
                             "source_info": {"filename": SRC, "line": 0, "column": 0, "source_fragment": n}}
                            for i, (n, s, b) in enumerate(REGISTERS)],
        "calculations": [{"name": "calc", "id": 0, "algo": "csum16", "input": csum_inputs}],
        "learn_lists": [],
        "actions": actions,
        "pipelines": [ingress(), egress()],
        "checksums": [{"name": "cksum", "id": 0, "target": ["ipv4", "hdrChecksum"], "type": "generic",
                       "calculation": "calc", "verify": False, "update": True, "if_cond": valid("ipv4")}],
        "force_arith": [], "extern_instances": [], "field_aliases": base["field_aliases"],
        "program": f"./{SRC}",
        "__meta__": base["__meta__"],
    }  # fmt: skip


def p4info(prog: dict) -> str:
    """P4Info text: tables, actions, the counter and the registers, with p4c's id prefixes."""
    out = ['pkg_info {\n  arch: "v1model"\n}\n']
    act_id = {a["name"]: 0x01000000 + a["id"] + 1 for a in prog["actions"]}
    # ids by position among all tables, p4c's tbl_* included (which P4Info leaves out)
    every = [t for p in prog["pipelines"] for t in p["tables"]]
    tables = [(i, t) for i, t in enumerate(every, 1) if not t["name"].startswith("tbl_")]
    for i, t in tables:
        alias = t["name"].split(".")[-1]
        s = f'tables {{\n  preamble {{\n    id: {0x02000000 + i}\n    name: "{t["name"]}"\n    alias: "{alias}"\n  }}\n'
        for j, k in enumerate(t["key"], 1):
            width = _width(prog, k["target"])
            s += (f'  match_fields {{\n    id: {j}\n    name: "{k["name"]}"\n    bitwidth: {width}\n'
                  f'    match_type: {k["match_type"].upper()}\n  }}\n')  # fmt: skip
        for a in t["actions"]:
            s += f"  action_refs {{\n    id: {act_id[a]}\n  }}\n"
        s += f"  size: {t['max_size']}\n}}\n"
        out.append(s)
    used = {a for _, t in tables for a in t["actions"]}
    for a in prog["actions"]:
        if a["name"] not in used:
            continue
        alias = a["name"].split(".")[-1]
        s = f'actions {{\n  preamble {{\n    id: {act_id[a["name"]]}\n    name: "{a["name"]}"\n    alias: "{alias}"\n  }}\n'
        for j, p in enumerate(a["runtime_data"], 1):
            s += f'  params {{\n    id: {j}\n    name: "{p["name"]}"\n    bitwidth: {p["bitwidth"]}\n  }}\n'
        out.append(s + "}\n")
    for c in prog["counter_arrays"]:
        out.append(f'counters {{\n  preamble {{\n    id: {0x12000000 + c["id"] + 1}\n    name: "{c["name"]}"\n'
                   f'    alias: "{c["name"]}"\n  }}\n  spec {{\n    unit: PACKETS\n  }}\n  size: {c["size"]}\n}}\n')  # fmt: skip
    for r in prog["register_arrays"]:
        alias = r["name"].split(".")[-1]
        out.append(f'registers {{\n  preamble {{\n    id: {0x16000000 + r["id"] + 1}\n    name: "{r["name"]}"\n'
                   f'    alias: "{alias}"\n  }}\n  type_spec {{\n    bitstring {{\n      bit {{\n        bitwidth: '
                   f'{r["bitwidth"]}\n      }}\n    }}\n  }}\n  size: {r["size"]}\n}}\n')  # fmt: skip
    return "".join(out)


def _width(prog: dict, target: list[str]) -> int:
    h = next(x for x in prog["headers"] if x["name"] == target[0])
    ht = next(x for x in prog["header_types"] if x["name"] == h["header_type"])
    return next(b for n, b, _ in ht["fields"] if n == target[1])


def main() -> None:
    prog = program()
    (HERE / "nas_inband.json").write_text(json.dumps(prog, indent=1) + "\n")
    (HERE / "nas_inband.p4info.txtpb").write_text(p4info(prog))
    print(f"wrote {HERE / 'nas_inband.json'} and {HERE / 'nas_inband.p4info.txtpb'}")


if __name__ == "__main__":
    main()

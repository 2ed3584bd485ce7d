//! A synthetic program exercising what tm_basic/l3_basic do not: 128-bit fields (exact, lpm,
//! wide copy), header stacks, lookahead, verify, ternary/range const entries with priorities,
//! __HIT__/__MISS__, registers, counters, meters, hash, _jump_if_zero, exit, remove_header.
#![recursion_limit = "512"]

mod common;
use lanes_p4::{crc16_arc, DropReason, EgressMeta, MatchKey, MeterRates, Program};
use serde_json::{json, Value};

fn f(h: &str, x: &str) -> Value {
    json!({"type": "field", "value": [h, x]})
}
fn hx(v: &str) -> Value {
    json!({"type": "hexstr", "value": v})
}
fn rd(i: u32) -> Value {
    json!({"type": "runtime_data", "value": i})
}
fn op(o: &str, l: Value, r: Value) -> Value {
    json!({"type": "expression", "value": {"op": o, "left": l, "right": r}})
}
fn prim(o: &str, params: Value) -> Value {
    json!({"op": o, "parameters": params})
}
fn dflt(next: Value) -> Value {
    json!({"type": "default", "value": null, "mask": null, "next_state": next})
}

const STD: &str = r#"[["ingress_port",9,false],["egress_spec",9,false],["egress_port",9,false],
 ["instance_type",32,false],["packet_length",32,false],["enq_timestamp",32,false],
 ["enq_qdepth",19,false],["deq_timedelta",32,false],["deq_qdepth",19,false],
 ["ingress_global_timestamp",48,false],["egress_global_timestamp",48,false],["mcast_grp",16,false],
 ["egress_rid",16,false],["checksum_error",1,false],["parser_error",32,false],["priority",3,false],
 ["_padding_0",3,false]]"#;

pub fn program_json() -> Value {
    let std: Value = serde_json::from_str(STD).unwrap();
    json!({
      "header_types": [
        {"name": "scalars_0", "id": 0, "fields": [["m8", 8, false], ["m16", 16, false], ["m32", 32, false], ["color", 8, false]]},
        {"name": "standard_metadata", "id": 1, "fields": std},
        {"name": "ethernet_t", "id": 2, "fields": [["dstAddr", 48, false], ["srcAddr", 48, false], ["etherType", 16, false]]},
        {"name": "vlan_t", "id": 3, "fields": [["pcp", 3, false], ["dei", 1, false], ["vid", 12, false], ["etherType", 16, false]]},
        {"name": "ipv6_t", "id": 4, "fields": [["version", 4, false], ["tc", 8, false], ["flow", 20, false], ["plen", 16, false],
                                                 ["nh", 8, false], ["hlim", 8, false], ["srcAddr", 128, false], ["dstAddr", 128, false]]}
      ],
      "headers": [
        {"name": "scalars", "id": 0, "header_type": "scalars_0", "metadata": true, "pi_omit": true},
        {"name": "standard_metadata", "id": 1, "header_type": "standard_metadata", "metadata": true, "pi_omit": true},
        {"name": "ethernet", "id": 2, "header_type": "ethernet_t", "metadata": false, "pi_omit": true},
        {"name": "vlan[0]", "id": 3, "header_type": "vlan_t", "metadata": false, "pi_omit": true},
        {"name": "vlan[1]", "id": 4, "header_type": "vlan_t", "metadata": false, "pi_omit": true},
        {"name": "ipv6", "id": 5, "header_type": "ipv6_t", "metadata": false, "pi_omit": true}
      ],
      "header_stacks": [{"name": "vlan", "id": 0, "header_type": "vlan_t", "size": 2, "header_ids": [3, 4]}],
      "header_union_types": [], "header_unions": [], "header_union_stacks": [], "field_lists": [],
      "errors": [["NoError", 0], ["PacketTooShort", 1], ["NoMatch", 2], ["StackOutOfBounds", 3],
                 ["HeaderTooShort", 4], ["ParserTimeout", 5], ["ParserInvalidArgument", 6], ["BadVersion", 7]],
      "enums": [],
      "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
        {"name": "start", "id": 0,
         "parser_ops": [{"op": "extract", "parameters": [{"type": "regular", "value": "ethernet"}]}],
         "transition_key": [f("ethernet", "etherType")],
         "transitions": [
            {"type": "hexstr", "value": "0x8100", "mask": null, "next_state": "parse_vlan"},
            {"type": "hexstr", "value": "0x86dd", "mask": "0xffff", "next_state": "parse_ipv6"},
            dflt(Value::Null)]},
        {"name": "parse_vlan", "id": 1,
         "parser_ops": [{"op": "extract", "parameters": [{"type": "stack", "value": "vlan"}]},
                        {"op": "set", "parameters": [f("scalars", "m8"), {"type": "lookahead", "value": [0, 8]}]}],
         "transition_key": [{"type": "lookahead", "value": [0, 4]}],
         "transitions": [
            {"type": "hexstr", "value": "0x06", "mask": null, "next_state": "parse_ipv6"},
            {"type": "hexstr", "value": "0x08", "mask": "0x08", "next_state": "parse_vlan"},
            dflt(Value::Null)]},
        {"name": "parse_ipv6", "id": 2,
         "parser_ops": [{"op": "extract", "parameters": [{"type": "regular", "value": "ipv6"}]},
                        {"op": "verify", "parameters": [op("==", f("ipv6", "version"), hx("0x06")), hx("0x7")]}],
         "transition_key": [], "transitions": [dflt(Value::Null)]}
      ]}],
      "parse_vsets": [],
      "deparsers": [{"name": "deparser", "id": 0, "order": ["ethernet", "vlan[0]", "vlan[1]", "ipv6"], "primitives": []}],
      "meter_arrays": [{"name": "MyIngress.mtr", "id": 0, "is_direct": false, "size": 1, "rate_count": 2, "type": "packets"}],
      "counter_arrays": [{"name": "MyIngress.cnt", "id": 0, "is_direct": false, "size": 4},
                         {"name": "MyIngress.t_lpm", "id": 1, "is_direct": true, "binding": "MyIngress.t_lpm"}],
      "register_arrays": [{"name": "MyIngress.reg", "id": 0, "size": 1, "bitwidth": 32}],
      "calculations": [{"name": "hcalc", "id": 0, "algo": "crc16", "input": [f("ipv6", "srcAddr")]}],
      "learn_lists": [],
      "actions": [
        {"name": "NoAction", "id": 0, "runtime_data": [], "primitives": []},
        {"name": "MyIngress.set_port", "id": 1, "runtime_data": [{"name": "port", "bitwidth": 9}],
         "primitives": [prim("assign", json!([f("standard_metadata", "egress_spec"), rd(0)])),
                        prim("count", json!([{"type": "counter_array", "value": "MyIngress.cnt"}, hx("0x0")]))]},
        {"name": "MyIngress.set_tc", "id": 2, "runtime_data": [{"name": "tc", "bitwidth": 8}],
         "primitives": [prim("assign", json!([f("ipv6", "tc"), rd(0)]))]},
        {"name": "MyIngress.do_stuff", "id": 3, "runtime_data": [], "primitives": [
            prim("register_read", json!([f("scalars", "m32"), {"type": "register_array", "value": "MyIngress.reg"}, hx("0x0")])),
            prim("assign", json!([f("scalars", "m32"), op("&", op("+", f("scalars", "m32"), hx("0x1")), hx("0xffffffff"))])),
            prim("register_write", json!([{"type": "register_array", "value": "MyIngress.reg"}, hx("0x0"), f("scalars", "m32")])),
            prim("execute_meter", json!([{"type": "meter_array", "value": "MyIngress.mtr"}, hx("0x0"), f("scalars", "color")])),
            prim("modify_field_with_hash_based_offset", json!([f("scalars", "m16"), hx("0x0"), {"type": "calculation", "value": "hcalc"}, hx("0x10")])),
            prim("_jump_if_zero", json!([op("==", op("&", f("scalars", "m32"), hx("0x1")), hx("0x1")), hx("0x7")])),
            prim("assign", json!([f("standard_metadata", "egress_spec"), hx("0x5")])),
            prim("assign", json!([f("ipv6", "dstAddr"), f("ipv6", "srcAddr")])),
            prim("count", json!([{"type": "counter_array", "value": "MyIngress.cnt"}, hx("0x1")])),
            prim("exit", json!([])),
            prim("assign", json!([f("standard_metadata", "egress_spec"), hx("0x9")]))]},
        {"name": "MyEgress.pop_vlan", "id": 4, "runtime_data": [], "primitives": [
            prim("remove_header", json!([{"type": "header", "value": "vlan[0]"}]))]}
      ],
      "pipelines": [
        {"name": "ingress", "id": 0, "init_table": "node_1",
         "tables": [
           {"name": "MyIngress.t_exact", "id": 0, "key": [{"match_type": "exact", "name": "hdr.ipv6.dstAddr", "target": ["ipv6", "dstAddr"], "mask": null}],
            "match_type": "exact", "type": "simple", "max_size": 64, "with_counters": false, "support_timeout": false, "direct_meters": null,
            "action_ids": [1, 0], "actions": ["MyIngress.set_port", "NoAction"], "base_default_next": "MyIngress.t_lpm",
            "next_tables": {"__HIT__": "MyIngress.t_tern", "__MISS__": "MyIngress.t_lpm"},
            "default_entry": {"action_id": 0, "action_const": false, "action_data": [], "action_entry_const": false}},
           {"name": "MyIngress.t_tern", "id": 1,
            "key": [{"match_type": "ternary", "name": "hdr.ethernet.srcAddr", "target": ["ethernet", "srcAddr"], "mask": null},
                    {"match_type": "range", "name": "hdr.ipv6.hlim", "target": ["ipv6", "hlim"], "mask": null}],
            "match_type": "range", "type": "simple", "max_size": 64, "with_counters": false, "support_timeout": false, "direct_meters": null,
            "action_ids": [2, 0], "actions": ["MyIngress.set_tc", "NoAction"], "base_default_next": null,
            "next_tables": {"MyIngress.set_tc": null, "NoAction": null},
            "default_entry": {"action_id": 0, "action_const": true, "action_data": [], "action_entry_const": true},
            "entries": [
              {"match_key": [{"match_type": "ternary", "key": "0x000000000001", "mask": "0xffffffffffff"},
                             {"match_type": "range", "start": "0x00", "end": "0xff"}],
               "action_entry": {"action_id": 2, "action_data": ["0x07"]}, "priority": 1},
              {"match_key": [{"match_type": "ternary", "key": "0x000000000000", "mask": "0x000000000000"},
                             {"match_type": "range", "start": "0x0a", "end": "0x14"}],
               "action_entry": {"action_id": 2, "action_data": ["0x03"]}, "priority": 2}]},
           {"name": "MyIngress.t_lpm", "id": 2, "key": [{"match_type": "lpm", "name": "hdr.ipv6.srcAddr", "target": ["ipv6", "srcAddr"], "mask": null}],
            "match_type": "lpm", "type": "simple", "max_size": 64, "with_counters": true, "support_timeout": false, "direct_meters": null,
            "action_ids": [1, 3], "actions": ["MyIngress.set_port", "MyIngress.do_stuff"], "base_default_next": null,
            "next_tables": {"MyIngress.set_port": null, "MyIngress.do_stuff": null},
            "default_entry": {"action_id": 3, "action_const": false, "action_data": [], "action_entry_const": false}}
         ],
         "action_profiles": [],
         "conditionals": [{"name": "node_1", "id": 0,
            "expression": {"type": "expression", "value": {"op": "d2b", "left": null, "right": f("ipv6", "$valid$")}},
            "true_next": "MyIngress.t_exact", "false_next": null}]},
        {"name": "egress", "id": 1, "init_table": "MyEgress.t_keyless",
         "tables": [{"name": "MyEgress.t_keyless", "id": 3, "key": [], "match_type": "exact", "type": "simple", "max_size": 1,
            "with_counters": false, "support_timeout": false, "direct_meters": null, "action_ids": [4], "actions": ["MyEgress.pop_vlan"],
            "base_default_next": null, "next_tables": {"MyEgress.pop_vlan": null},
            "default_entry": {"action_id": 4, "action_const": true, "action_data": [], "action_entry_const": true}}],
         "action_profiles": [], "conditionals": []}
      ],
      "checksums": [], "force_arith": [], "extern_instances": [], "field_aliases": []
    })
}

fn load() -> Program {
    Program::load(&program_json().to_string()).unwrap()
}

const SRC: [u8; 16] = [
    0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x11,
];
const DST: [u8; 16] = [
    0x20, 0x01, 0x0d, 0xb8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x22,
];

fn ipv6(
    src_mac_last: u8,
    vlans: usize,
    version: u8,
    hlim: u8,
    src: [u8; 16],
    dst: [u8; 16],
) -> Vec<u8> {
    let mut p = vec![0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, src_mac_last];
    p.extend_from_slice(if vlans > 0 {
        &[0x81, 0x00]
    } else {
        &[0x86, 0xdd]
    });
    for i in 0..vlans {
        // pcp 0, vid 10+i; inner etherType
        let inner: [u8; 2] = if i + 1 < vlans {
            [0x81, 0x00]
        } else {
            [0x86, 0xdd]
        };
        // inner tags start with pcp 4 so the parser's lookahead loops to parse_vlan
        let pcp = if i > 0 { 0x80 } else { 0 };
        p.extend_from_slice(&[pcp, 10 + i as u8, inner[0], inner[1]]);
    }
    p.extend_from_slice(&[version << 4, 0, 0, 0, 0, 4, 17, hlim]);
    p.extend_from_slice(&src);
    p.extend_from_slice(&dst);
    p.extend_from_slice(b"DATA");
    p
}

#[test]
fn wide_exact_hit_then_ternary_by_priority() {
    let mut p = load();
    let t = p.table_id("t_exact").unwrap();
    let a = p.action_id(t, "set_port").unwrap();
    p.add_entry(t, vec![MatchKey::Exact(DST.to_vec())], a, vec![vec![3]], 0)
        .unwrap();
    let mut st = p.new_state();
    let mut out = Vec::new();
    // src MAC ...01 matches the priority-1 entry (bmv2: lower value wins) even with hlim in 10..20
    let (ig, eg) = p.process(&mut st, &ipv6(1, 0, 6, 15, SRC, DST), 1, 0, &mut out);
    assert_eq!((ig.drop, ig.egress_spec), (None, 3));
    assert_eq!(eg.drop, None);
    // tc is 8 bits starting at bit 4
    assert_eq!(((out[14] & 0x0f) << 4) | (out[15] >> 4), 7);
    let (_, _) = p.process(&mut st, &ipv6(2, 0, 6, 15, SRC, DST), 1, 0, &mut out);
    assert_eq!(((out[14] & 0x0f) << 4) | (out[15] >> 4), 3);
    let (_, _) = p.process(&mut st, &ipv6(2, 0, 6, 30, SRC, DST), 1, 0, &mut out);
    assert_eq!(((out[14] & 0x0f) << 4) | (out[15] >> 4), 0);
    assert_eq!(p.counter_read("MyIngress.cnt", 0).unwrap().packets, 3);
    // const table refuses changes
    let tt = p.table_id("t_tern").unwrap();
    let st_a = p.action_id(tt, "set_tc").unwrap();
    assert!(p
        .add_entry(
            tt,
            vec![
                MatchKey::Ternary(vec![], vec![]),
                MatchKey::Range(vec![0], vec![1])
            ],
            st_a,
            vec![vec![1]],
            1
        )
        .is_err());
    assert_eq!(p.entries(tt).unwrap().len(), 2);
}

#[test]
fn wide_lpm_miss_path_with_direct_counter() {
    let mut p = load();
    let t = p.table_id("MyIngress.t_lpm").unwrap();
    let a = p.action_id(t, "MyIngress.set_port").unwrap();
    let h = p
        .add_entry(
            t,
            vec![MatchKey::Lpm(
                SRC[..8].iter().chain([0u8; 8].iter()).copied().collect(),
                64,
            )],
            a,
            vec![vec![4]],
            0,
        )
        .unwrap();
    let mut st = p.new_state();
    let mut out = Vec::new();
    let (ig, _) = p.process(&mut st, &ipv6(1, 0, 6, 64, SRC, DST), 1, 0, &mut out);
    assert_eq!(ig.egress_spec, 4);
    let mut other = SRC;
    other[7] = 1; // outside the /64
    let (ig, _) = p.process(&mut st, &ipv6(1, 0, 6, 64, other, DST), 1, 0, &mut out);
    assert_eq!(ig.egress_spec, 5, "default action do_stuff");
    let e = p.entry(t, lanes_p4::EntryHandle(h.0)).unwrap();
    assert_eq!(e.counter.packets, 1);
    assert_eq!(e.counter.bytes, ipv6(1, 0, 6, 64, SRC, DST).len() as u64);
}

#[test]
fn registers_meters_hash_jumps_exit() {
    let mut p = load();
    p.meter_set(
        "MyIngress.mtr",
        0,
        MeterRates {
            cir: 0.0,
            cbs: 1,
            pir: 0.0,
            pbs: 2,
        },
    )
    .unwrap();
    let mut st = p.new_state();
    let mut out = Vec::new();
    let color = p.field("scalars", "color").unwrap();
    let m16 = p.field("scalars", "m16").unwrap();
    let mut ports = Vec::new();
    let mut colors = Vec::new();
    for _ in 0..3 {
        let pkt = ipv6(1, 0, 6, 64, SRC, DST);
        let (ig, eg) = p.process(&mut st, &pkt, 1, 0, &mut out);
        ports.push(ig.egress_spec);
        colors.push(st.field(color));
        assert_eq!(eg.drop, None);
        // the wide copy: dst := src, and exit stopped before egress_spec = 9
        assert_eq!(&out[14 + 24..14 + 40], &SRC);
        assert_eq!(st.field(m16), u64::from(crc16_arc(&SRC)) % 16);
    }
    // odd register values take egress_spec = 5, even ones jump over it
    assert_eq!(ports, [5, 0, 5]);
    assert_eq!(colors, [lanes_p4::GREEN, lanes_p4::YELLOW, lanes_p4::RED]);
    assert_eq!(p.register_read("MyIngress.reg", 0).unwrap(), 3);
    assert_eq!(p.counter_read("MyIngress.cnt", 1).unwrap().packets, 3);
    p.register_write("MyIngress.reg", 0, 0x1_0000_0001).unwrap();
    assert_eq!(
        p.register_read("MyIngress.reg", 0).unwrap(),
        1,
        "masked to 32 bits"
    );
    assert!(p.register_read("MyIngress.reg", 1).is_err());
}

#[test]
fn stacks_lookahead_verify_and_egress_remove() {
    let mut p = load();
    let mut st = p.new_state();
    let mut out = Vec::new();
    let m8 = p.field("scalars", "m8").unwrap();
    // one tag: parsed into vlan[0], removed in egress
    let pkt = ipv6(1, 1, 6, 64, SRC, DST);
    let (ig, eg) = p.process(&mut st, &pkt, 1, 0, &mut out);
    assert_eq!(ig.drop, None);
    assert_eq!(st.field(m8), 0x60, "set from lookahead");
    assert_eq!(eg.len, pkt.len() - 4);
    assert_eq!(
        &out[14..],
        &{
            let mut want = pkt[18..].to_vec();
            want[24..40].copy_from_slice(&SRC);
            want
        }[..]
    );
    // two tags fit the stack
    let (ig, _) = p.process(&mut st, &ipv6(1, 2, 6, 64, SRC, DST), 1, 0, &mut out);
    assert_eq!(ig.drop, None);
    assert!(st.is_valid(p.header_index("vlan[1]").unwrap()));
    // three do not
    let (ig, _) = p.process(&mut st, &ipv6(1, 3, 6, 64, SRC, DST), 1, 0, &mut out);
    assert_eq!(ig.drop, Some(DropReason::ParserError(3)));
    // verify(version == 6) fails with the program's own error
    let (ig, _) = p.process(&mut st, &ipv6(1, 0, 4, 64, SRC, DST), 1, 0, &mut out);
    assert_eq!(ig.drop, Some(DropReason::ParserError(7)));
    assert_eq!(p.error_name(7), Some("BadVersion"));
    // bmv2 policy: continue with parser_error set
    p.set_parser_error_policy(lanes_p4::ParserErrorPolicy::Continue);
    let (ig, _) = p.process(&mut st, &ipv6(1, 0, 4, 64, SRC, DST), 1, 0, &mut out);
    assert_eq!(ig.drop, None);
    assert_eq!(
        st.field(p.field("standard_metadata", "parser_error").unwrap()),
        7
    );
    let _ = EgressMeta::default();
}

#[test]
fn p4info_lists_externs() {
    let p = load();
    let n = lanes_p4::p4info::P4Names::from_program(&p);
    assert_eq!(n.counters.len(), 1);
    assert_eq!(
        n.direct_counters[0].table.as_deref(),
        Some("MyIngress.t_lpm")
    );
    assert_eq!(
        n.table("MyIngress.t_lpm").unwrap().direct_counter,
        Some(n.direct_counters[0].id)
    );
    assert_eq!(n.registers[0].bitwidth, 32);
    assert_eq!(n.meters[0].size, 1);
    assert_eq!(n.table("MyIngress.t_exact").unwrap().keys[0].bitwidth, 128);
}

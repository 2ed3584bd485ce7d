//! Clones (bmv2's clone_ingress_pkt_to_egress / clone_egress_pkt_to_egress, with a field list)
//! and truncate, on a small hand-written program in the form p4c-bm2-ss emits:
//!
//! ```p4
//! ingress: ti.apply()            // default action set by each test
//! egress:  if (standard_metadata.instance_type == 0) te.apply(); else tcopy.apply();
//! tcopy:   hdr.ethernet.dstAddr = (bit<48>)standard_metadata.instance_type;
//!          hdr.ethernet.etherType = (bit<16>)meta.tag;  truncate(20);
//! ```
//! `meta.tag` is in field list 1 (kept by clones), `meta.other` is not.

use lanes_p4::testprog::{action, assign, field, hex, keyless, skeleton};
use lanes_p4::{
    CloneRequest, DropReason, EgressMeta, Program, INSTANCE_EGRESS_CLONE, INSTANCE_INGRESS_CLONE,
};
use serde_json::{json, Value};

fn program() -> Value {
    let egress_spec = || field("standard_metadata", "egress_spec");
    let set_meta = || {
        vec![
            assign(egress_spec(), hex(1)),
            assign(field("scalars", "tag"), hex(0xab)),
            assign(field("scalars", "other"), hex(0xcd)),
        ]
    };
    let mut fwd_i2e = set_meta();
    fwd_i2e.push(assign(field("ethernet", "srcAddr"), hex(0xeeee_eeee_eeee)));
    fwd_i2e.push(json!({"op": "clone_ingress_pkt_to_egress", "parameters": [hex(5), hex(1)]}));
    let mut drop_i2e = set_meta();
    drop_i2e.push(json!({"op": "mark_to_drop", "parameters": []}));
    drop_i2e.push(json!({"op": "clone_ingress_pkt_to_egress", "parameters": [hex(5), hex(0)]}));
    let mut fwd_trunc = set_meta();
    fwd_trunc.push(json!({"op": "truncate", "parameters": [hex(30)]}));
    fwd_trunc.push(json!({"op": "truncate", "parameters": [hex(40)]}));
    let e2e = vec![
        assign(field("ethernet", "srcAddr"), hex(0x1111_1111_1111)),
        json!({"op": "clone_egress_pkt_to_egress", "parameters": [
            {"type": "runtime_data", "value": 0}, hex(1)]}),
    ];
    let mut e2e_drop = e2e.clone();
    e2e_drop.push(json!({"op": "mark_to_drop", "parameters": []}));
    let mark = vec![
        assign(
            field("ethernet", "dstAddr"),
            field("standard_metadata", "instance_type"),
        ),
        assign(field("ethernet", "etherType"), field("scalars", "tag")),
        json!({"op": "truncate", "parameters": [hex(20)]}),
    ];
    let session = json!([{"name": "session", "bitwidth": 32}]);
    let mut j = skeleton(json!([["tag", 8, false], ["other", 8, false]]));
    j["field_lists"] = json!([{"id": 1, "name": "fl", "elements": [field("scalars", "tag")]}]);
    j["actions"] = json!([
        action(0, "fwd", json!([]), set_meta()),
        action(1, "fwd_i2e", json!([]), fwd_i2e),
        action(2, "drop_i2e", json!([]), drop_i2e),
        action(3, "fwd_trunc", json!([]), fwd_trunc),
        action(4, "nop", json!([]), vec![]),
        action(5, "e2e", session.clone(), e2e),
        action(6, "e2e_drop", session, e2e_drop),
        action(7, "mark", json!([]), mark),
    ]);
    j["pipelines"] = json!([
        {"name": "ingress", "id": 0, "init_table": "ti", "conditionals": [],
         "tables": [keyless("ti", 0, &[(0, "fwd"), (1, "fwd_i2e"), (2, "drop_i2e"),
                                       (3, "fwd_trunc")], 0)]},
        {"name": "egress", "id": 1, "init_table": "is_copy",
         "conditionals": [{"name": "is_copy", "id": 0,
            "expression": {"type": "expression", "value": {"op": "==",
                "left": field("standard_metadata", "instance_type"), "right": hex(0)}},
            "true_next": "te", "false_next": "tcopy"}],
         "tables": [keyless("te", 1, &[(4, "nop"), (5, "e2e"), (6, "e2e_drop")], 4),
                    keyless("tcopy", 2, &[(7, "mark")], 7)]}
    ]);
    j
}

fn load() -> Program {
    lanes_p4::testprog::load(&program())
}

fn set_default(p: &mut Program, table: &str, action: &str, params: Vec<Vec<u8>>) {
    let t = p.table_id(table).unwrap();
    let a = p.action_id(t, action).unwrap();
    p.set_default(t, a, params).unwrap();
}

/// dst 00..02, src 00..01, IPv4 ethertype, 50 payload bytes 0, 1, 2, ...
fn frame() -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00];
    f.extend(0..50u8);
    f
}

fn std_field(p: &Program, st: &lanes_p4::PacketState, h: &str, f: &str) -> u64 {
    st.field(p.field(h, f).unwrap())
}

fn sm(p: &Program, st: &lanes_p4::PacketState, f: &str) -> u64 {
    std_field(p, st, "standard_metadata", f)
}

fn meta(port: u32) -> EgressMeta {
    EgressMeta {
        egress_port: port,
        ..EgressMeta::default()
    }
}

#[test]
fn egress_clone_is_a_second_packet_that_egress_rewrites_and_truncates() {
    let mut p = load();
    set_default(&mut p, "te", "e2e", vec![vec![0, 0, 0, 7]]);
    let pkt = frame();
    let (mut st, mut out) = (p.new_state(), Vec::new());
    let ig = p.ingress(&mut st, &pkt, 2, 5_000);
    assert_eq!((ig.drop, ig.egress_spec, st.take_clone()), (None, 1, None));
    let eg = p.egress(&mut st, &pkt, &meta(1), 6_000, &mut out);
    let req = st.take_clone().expect("egress asked for a clone");
    assert_eq!(req.session, 7, "the session is the action's parameter");
    // the original leaves whole, with egress's rewrite
    assert_eq!(eg.drop, None);
    assert_eq!(out.len(), pkt.len());
    assert_eq!(&out[6..12], &[0x11; 6]);
    assert_eq!(&out[12..], &pkt[12..]);

    let mut copy = p.new_state();
    let prio = p.egress_clone(&st, &mut copy, req, None);
    assert_eq!(prio, 0);
    assert_eq!(copy.clone_generation(), 1);
    assert_eq!(sm(&p, &copy, "instance_type"), INSTANCE_EGRESS_CLONE);
    assert_eq!(sm(&p, &copy, "packet_length"), pkt.len() as u64);
    assert_eq!(sm(&p, &copy, "egress_spec"), 0, "metadata reset");
    assert_eq!(
        std_field(&p, &copy, "scalars", "tag"),
        0xab,
        "in the field list"
    );
    assert_eq!(
        std_field(&p, &copy, "scalars", "other"),
        0,
        "not in the field list"
    );

    let mut out2 = Vec::new();
    let eg2 = p.egress(&mut copy, &pkt, &meta(3), 7_000, &mut out2);
    assert_eq!((eg2.drop, copy.take_clone()), (None, None));
    assert_eq!(sm(&p, &copy, "egress_port"), 3);
    // egress ran on the copy: instance_type into dstAddr, the kept tag into etherType, truncated
    assert_eq!(eg2.len, 20);
    assert_eq!(out2.len(), 20);
    assert_eq!(&out2[..6], &[0, 0, 0, 0, 0, 2]);
    assert_eq!(
        &out2[6..12],
        &[0x11; 6],
        "the copy is the packet as egress left it"
    );
    assert_eq!(&out2[12..14], &[0x00, 0xab]);
    assert_eq!(&out2[14..], &pkt[14..20]);
    // the original's state is untouched by the copy
    assert_eq!(sm(&p, &st, "instance_type"), 0);

    // a session's truncation length caps the copy further
    let mut copy = p.new_state();
    p.egress_clone(&st, &mut copy, req, Some(16));
    p.egress(&mut copy, &pkt, &meta(3), 8_000, &mut out2);
    assert_eq!(out2.len(), 16);
}

#[test]
fn egress_clone_is_asked_for_even_when_egress_drops_the_packet() {
    let mut p = load();
    set_default(&mut p, "te", "e2e_drop", vec![vec![0, 0, 0, 9]]);
    let pkt = frame();
    let (mut st, mut out) = (p.new_state(), Vec::new());
    p.ingress(&mut st, &pkt, 2, 0);
    let eg = p.egress(&mut st, &pkt, &meta(1), 0, &mut out);
    assert_eq!(eg.drop, Some(DropReason::Egress));
    assert_eq!(st.take_clone().map(|c| c.session), Some(9));
}

#[test]
fn ingress_clone_is_the_packet_as_received_with_instance_type_1() {
    let mut p = load();
    set_default(&mut p, "ti", "fwd_i2e", vec![]);
    let pkt = frame();
    let (mut st, mut out) = (p.new_state(), Vec::new());
    p.ingress(&mut st, &pkt, 2, 5_000_000);
    let req = st.take_clone().expect("ingress asked for a clone");
    assert_eq!(req.session, 5);
    let mut copy = p.new_state();
    let prio = p.ingress_clone(&st, &mut copy, &pkt, 2, 5_000_000, req, None);
    assert_eq!(prio, Some(0));
    assert_eq!(sm(&p, &copy, "instance_type"), INSTANCE_INGRESS_CLONE);
    assert_eq!(sm(&p, &copy, "ingress_port"), 2);
    assert_eq!(sm(&p, &copy, "ingress_global_timestamp"), 5_000);
    assert_eq!(sm(&p, &copy, "egress_spec"), 0);
    assert_eq!(std_field(&p, &copy, "scalars", "tag"), 0xab);
    assert_eq!(std_field(&p, &copy, "scalars", "other"), 0);
    // the original goes on as ingress left it
    let eg = p.egress(&mut st, &pkt, &meta(1), 6_000_000, &mut out);
    assert_eq!(eg.len, pkt.len());
    assert_eq!(&out[6..12], &[0xee; 6]);
    // the copy: the bytes as received (ingress's srcAddr rewrite is not in it), then egress
    let eg2 = p.egress(&mut copy, &pkt, &meta(3), 6_000_000, &mut out);
    assert_eq!(eg2.len, 20);
    assert_eq!(&out[..6], &[0, 0, 0, 0, 0, 1]);
    assert_eq!(&out[6..12], &pkt[6..12]);
    assert_eq!(&out[12..14], &[0x00, 0xab]);
}

#[test]
fn ingress_clone_of_a_dropped_packet_is_still_asked_for() {
    let mut p = load();
    set_default(&mut p, "ti", "drop_i2e", vec![]);
    let pkt = frame();
    let mut st = p.new_state();
    let ig = p.ingress(&mut st, &pkt, 2, 0);
    assert_eq!(ig.drop, Some(DropReason::Ingress));
    let req = st.take_clone();
    assert_eq!(
        req,
        Some(CloneRequest {
            session: 5,
            field_list: 0
        })
    );
    let mut copy = p.new_state();
    p.ingress_clone(&st, &mut copy, &pkt, 2, 0, req.unwrap(), None);
    assert_eq!(
        std_field(&p, &copy, "scalars", "tag"),
        0,
        "no field list: all zero"
    );
    // under the drop policy, frames the parser rejects never get as far as ingress: no clone
    p.set_parser_error_policy(lanes_p4::ParserErrorPolicy::Drop);
    let ig = p.ingress(&mut st, &pkt[..10], 2, 0);
    assert!(ig.drop.is_some());
    assert_eq!(st.take_clone(), None);
    // an ingress request not taken is not mistaken for an egress one
    p.ingress(&mut st, &pkt, 2, 0);
    let mut out = Vec::new();
    p.egress(&mut st, &pkt, &meta(1), 0, &mut out);
    assert_eq!(st.take_clone(), None);
}

#[test]
fn truncate_cuts_the_original_to_the_shortest_length_asked() {
    let mut p = load();
    set_default(&mut p, "ti", "fwd_trunc", vec![]);
    let pkt = frame();
    let (mut st, mut out) = (p.new_state(), Vec::new());
    let (_, eg) = p.process(&mut st, &pkt, 2, 0, &mut out);
    assert_eq!((eg.drop, eg.len, out.len()), (None, 30, 30));
    assert_eq!(&out[..], &pkt[..30]);
    // the next packet is whole again
    set_default(&mut p, "ti", "fwd", vec![]);
    let (_, eg) = p.process(&mut st, &pkt, 2, 0, &mut out);
    assert_eq!(eg.len, pkt.len());
}

#[test]
fn malformed_clone_and_truncate_primitives_are_refused() {
    let cases: [(Value, &str); 4] = [
        (
            json!({"op": "clone_egress_pkt_to_egress", "parameters": [hex(1), hex(9)]}),
            "unknown field list id 9",
        ),
        (
            json!({"op": "clone_egress_pkt_to_egress", "parameters": [hex(1), field("scalars", "tag")]}),
            "the field list id must be a constant",
        ),
        (
            json!({"op": "clone_ingress_pkt_to_egress", "parameters": []}),
            "expected 1 or 2 parameters, got 0",
        ),
        (
            json!({"op": "truncate", "parameters": []}),
            "expected 1 parameters, got 0",
        ),
    ];
    for (prim, want) in cases {
        let mut j = program();
        j["actions"][4]["primitives"] = json!([prim]);
        let e = Program::load(&j.to_string()).unwrap_err().to_string();
        assert!(e.contains(want) && !e.contains('\n'), "{e}");
        assert!(e.starts_with("actions[4] \"nop\" primitive 0"), "{e}");
    }
    let mut j = program();
    j["field_lists"][0]["elements"] = json!([field("scalars", "nope")]);
    let e = Program::load(&j.to_string()).unwrap_err().to_string();
    assert!(e.contains("field_lists[0]") && e.contains("nope"), "{e}");
}

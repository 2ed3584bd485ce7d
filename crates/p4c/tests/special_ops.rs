//! v1model's packet-making externs compiled by lanes p4c and run through the switch's pipeline
//! (lanes-p4), outcomes worked out by hand: `clone_preserving_field_list` and the older
//! `clone3` keep exactly the listed metadata in the copy, `resubmit_preserving_field_list` and
//! `recirculate_preserving_field_list` bring the packet back to ingress with their lists'
//! fields, `digest` carries its struct's values, `random` stays in its bounds, `log_msg` is
//! accepted; the JSON and P4Info have the field lists, learn lists and digests p4c writes.

mod common;
use common::*;
use lanes_p4::{CloneRequest, Digest, EgressMeta, MatchKey, PacketState, Program, Reentry};
use serde_json::Value;

const PROGRAM: &str = r#"
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
struct headers { ethernet_t eth; }
struct learn_t { bit<48> src; bit<9> port; }
struct metadata {
    @field_list(1)
    bit<8> mark;
    @field_list(1, 2)
    bit<16> tag;
    bit<8> scratch;
    bit<8> rnd;
}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action to(bit<9> p) { sm.egress_spec = p; }
    action clone_keep(bit<9> p) {
        sm.egress_spec = p;
        meta.mark = 7;
        meta.tag = 0x1234;
        meta.scratch = 9;
        clone_preserving_field_list(CloneType.I2E, 5, 1);
    }
    action learn(bit<9> p) {
        sm.egress_spec = p;
        digest<learn_t>(1, {hdr.eth.src, sm.ingress_port});
    }
    action again() {
        meta.tag = 0xabcd;
        meta.mark = 3;
        resubmit_preserving_field_list(2);
    }
    action old_clone() {
        sm.egress_spec = 1;
        meta.mark = 5;
        meta.tag = 6;
        clone3(CloneType.I2E, 6, {meta.mark});
    }
    action roll() {
        random(meta.rnd, 8w10, 8w20);
        hdr.eth.etherType = (bit<16>) meta.rnd;
        log_msg("rnd={}", {meta.rnd});
        log_msg("rolled");
        sm.egress_spec = 1;
    }
    table t {
        key = { hdr.eth.dst: exact; }
        actions = { to; clone_keep; learn; again; old_clone; roll; }
        default_action = to(1);
    }
    apply {
        if (sm.instance_type == 6 || sm.instance_type == 4) {
            // back in ingress: show what was kept
            hdr.eth.src = (bit<48>) (meta.mark ++ meta.tag ++ meta.scratch);
            sm.egress_spec = 3;
        } else {
            t.apply();
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action recirc() {
        meta.mark = 0x55;
        meta.scratch = 0x66;
        recirculate_preserving_field_list(1);
    }
    apply {
        if (sm.instance_type == 1) {
            hdr.eth.src = (bit<48>) (meta.mark ++ meta.tag ++ meta.scratch);
        } else if (sm.instance_type == 0 && hdr.eth.dst == 0xee) {
            recirc();
        }
    }
}
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;

fn frame(dst: u8) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, dst, 0, 0, 0, 0xaa, 0xbb, 0xcc, 0x08, 0x00];
    f.extend_from_slice(&[1, 2, 3, 4]);
    f
}

fn setup() -> (lanes_p4c::Output, Program) {
    // tests run in parallel: each compiles in a directory of its own
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = compile_src(&format!("special{n}"), PROGRAM).unwrap_or_else(|e| panic!("{e}"));
    let mut p = load(&out.json);
    let t = p.table_id("I.t").unwrap();
    for (dst, a, params) in [
        (1u8, "I.clone_keep", vec![vec![0, 2]]),
        (2, "I.learn", vec![vec![0, 4]]),
        (3, "I.again", vec![]),
        (4, "I.old_clone", vec![]),
        (5, "I.roll", vec![]),
    ] {
        let a = p.action_id(t, a).unwrap();
        p.add_entry(
            t,
            vec![MatchKey::Exact(vec![0, 0, 0, 0, 0, dst])],
            a,
            params,
            0,
        )
        .unwrap();
    }
    (out, p)
}

/// Ingress of `pkt` on port 9; the state after it.
fn ingress(p: &mut Program, pkt: &[u8]) -> (PacketState, lanes_p4::IngressResult) {
    let mut st = p.new_state();
    let ig = p.ingress(&mut st, pkt, 9, 1000);
    (st, ig)
}

fn egress(p: &mut Program, st: &mut PacketState, pkt: &[u8], port: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let meta = EgressMeta {
        egress_port: port,
        ..EgressMeta::default()
    };
    let r = p.egress(st, pkt, &meta, 2000, &mut out);
    assert_eq!(r.drop, None);
    out
}

/// The I2E copy of a clone request: its frame after egress (source MAC = mark, tag, scratch).
fn clone_copy(p: &mut Program, st: &PacketState, pkt: &[u8], req: CloneRequest) -> Vec<u8> {
    let mut copy = p.new_state();
    p.ingress_clone(st, &mut copy, pkt, 9, 1000, req, None)
        .unwrap();
    egress(p, &mut copy, pkt, 7)
}

#[test]
fn clone_preserving_field_list_keeps_the_listed_metadata_only() {
    let (_, mut p) = setup();
    let pkt = frame(1);
    let (mut st, ig) = ingress(&mut p, &pkt);
    assert_eq!((ig.drop, ig.egress_spec), (None, 2));
    let req = st.take_clone().expect("a clone request");
    assert_eq!(req.session, 5);
    let copy = clone_copy(&mut p, &st, &pkt, req);
    // field list 1 = mark, tag: scratch (9) is not kept
    assert_eq!(&copy[6..12], &[0, 0, 7, 0x12, 0x34, 0]);
    let orig = egress(&mut p, &mut st, &pkt, 2);
    assert_eq!(orig, pkt, "the original leaves unchanged");
}

#[test]
fn clone3_keeps_the_fields_it_names() {
    let (_, mut p) = setup();
    let pkt = frame(4);
    let (st, _) = ingress(&mut p, &pkt);
    let req = st.clone().take_clone().expect("a clone request");
    assert_eq!(req.session, 6);
    let copy = clone_copy(&mut p, &st, &pkt, req);
    // {meta.mark} only: tag (6) is zero in the copy
    assert_eq!(&copy[6..12], &[0, 0, 5, 0, 0, 0]);
}

#[test]
fn resubmit_brings_back_field_list_2() {
    let (_, mut p) = setup();
    let pkt = frame(3);
    let (mut st, _) = ingress(&mut p, &pkt);
    let how = st.take_resubmit().expect("a resubmission");
    assert!(matches!(how, Reentry::Resubmit(_)));
    let ig = p.reingress(&mut st, &pkt, 9, 1500, how);
    assert_eq!((ig.drop, ig.egress_spec), (None, 3));
    assert_eq!(st.passes(), 1);
    let out = egress(&mut p, &mut st, &pkt, 3);
    // list 2 = tag only: mark (3) is zero on the second pass
    assert_eq!(&out[6..12], &[0, 0, 0, 0xab, 0xcd, 0]);
}

#[test]
fn recirculate_brings_back_field_list_1_with_the_emitted_frame() {
    let (_, mut p) = setup();
    let pkt = frame(0xee);
    let (mut st, ig) = ingress(&mut p, &pkt);
    assert_eq!(ig.egress_spec, 1, "t's default action");
    let out = egress(&mut p, &mut st, &pkt, 1);
    let how = st.take_recirculate().expect("a recirculation");
    let ig = p.reingress(&mut st, &out, 9, 3000, how);
    assert_eq!((ig.drop, ig.egress_spec), (None, 3));
    let out2 = egress(&mut p, &mut st, &out, 3);
    // list 1 = mark (0x55), tag (0): scratch (0x66) is dropped
    assert_eq!(&out2[6..12], &[0, 0, 0x55, 0, 0, 0]);
    assert!(
        st.take_recirculate().is_none(),
        "instance 4 does not recirculate again"
    );
}

#[test]
fn digest_carries_the_struct_values() {
    let (out, mut p) = setup();
    let pkt = frame(2);
    let (mut st, ig) = ingress(&mut p, &pkt);
    assert_eq!(ig.egress_spec, 4);
    let mut ds: Vec<Digest> = Vec::new();
    p.take_digests(&mut st, &mut ds);
    assert_eq!(ds.len(), 1);
    assert_eq!(ds[0].list, 0);
    assert_eq!(
        ds[0].fields,
        vec![vec![0, 0, 0, 0xaa, 0xbb, 0xcc], vec![0, 9]]
    );
    assert_eq!(p.learn_lists()[0].0, "learn_t");
    // P4Info: a digest of kind 0x17 typed by the struct, and the struct in type_info
    let head = "digests {\n  preamble {\n    id: ";
    let at = out.p4info.find(head).expect("a digest") + head.len();
    let id: u32 = out.p4info[at..]
        .split('\n')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(id >> 24, 0x17, "{}", out.p4info);
    assert_eq!(
        id,
        lanes_p4c::ids::DIGEST << 24 | (lanes_p4c::ids::jenkins("learn_t") & 0xff_ffff)
    );
    assert!(out
        .p4info
        .contains("  type_spec {\n    struct {\n      name: \"learn_t\"\n    }\n  }\n"));
    assert!(out.p4info.contains("  structs {\n    key: \"learn_t\"\n    value {\n      members {\n        name: \"src\"\n        type_spec {\n          bitstring {\n            bit {\n              bitwidth: 48\n"));
}

#[test]
fn random_stays_within_its_bounds() {
    let (_, mut p) = setup();
    let pkt = frame(5);
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..200 {
        let (mut st, _) = ingress(&mut p, &pkt);
        let out = egress(&mut p, &mut st, &pkt, 1);
        let v = u16::from_be_bytes([out[12], out[13]]);
        assert!((10..=20).contains(&v), "{v}");
        seen.insert(v);
    }
    assert!(seen.len() > 5, "{seen:?}");
}

#[test]
fn json_lists_are_numbered_as_p4c_numbers_them() {
    let (out, _) = setup();
    let j: Value = serde_json::from_str(&out.json).unwrap();
    let names: Vec<(u64, &str, usize)> = j["field_lists"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["id"].as_u64().unwrap(),
                l["name"].as_str().unwrap(),
                l["elements"].as_array().unwrap().len(),
            )
        })
        .collect();
    // the annotated lists first, then clone3's own list
    assert_eq!(
        names,
        vec![(1, "field_list1", 2), (2, "field_list2", 1), (3, "fl", 1)]
    );
    assert_eq!(
        j["field_lists"][0]["elements"][1]["value"],
        serde_json::json!(["scalars", "userMetadata.tag"])
    );
    assert_eq!(j["learn_lists"][0]["name"], "learn_t");
    let prims: Vec<Value> = j["actions"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| a["primitives"].as_array().unwrap().clone())
        .collect();
    let find = |op: &str| prims.iter().find(|p| p["op"] == op).cloned().unwrap();
    assert_eq!(find("resubmit")["parameters"][0]["value"], "0x2");
    assert_eq!(find("recirculate")["parameters"][0]["value"], "0x1");
    assert_eq!(find("generate_digest")["parameters"][1]["value"], "0x1");
    assert_eq!(find("log_msg")["parameters"][0]["value"], "rnd={}");
    assert_eq!(
        find("modify_field_rng_uniform")["parameters"][1]["value"],
        "0xa"
    );
}

#[test]
fn misplaced_calls_are_refused() {
    let bad = PROGRAM.replace(
        "recirculate_preserving_field_list(1);",
        "resubmit_preserving_field_list(1);",
    );
    let e = compile_src("special-bad", &bad).unwrap_err();
    assert!(
        e.contains("resubmit_preserving_field_list can only be called in ingress"),
        "{e}"
    );
    let bad = PROGRAM.replace(
        "clone_preserving_field_list(CloneType.I2E",
        "clone_preserving_field_list(CloneType.E2E",
    );
    let e = compile_src("special-bad2", &bad).unwrap_err();
    assert!(e.contains("can only be called in egress"), "{e}");
}

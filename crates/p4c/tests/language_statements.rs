//! Language features on programs written for these tests, run through the switch's pipeline
//! with outcomes worked out by hand (continued from language.rs): switch on a value, `if` in
//! parser states, header and struct locals, saturating arithmetic, parser value sets, checksums
//! over the payload.

mod common;
use common::*;
use lanes_p4::{MatchKey, Program};

/// `switch` on a value in an apply block: labels falling through, default, and a switch on
/// action_run next to it.
#[test]
fn switch_on_a_value() {
    let src = r#"
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header h_t { bit<8> a; bit<8> b; }
struct headers { ethernet_t eth; h_t h; }
struct metadata { }
const bit<8> SEVEN = 7;
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action mark(bit<8> v) { hdr.h.b = v; }
    table t { key = { hdr.h.a: exact; } actions = { mark; NoAction; } default_action = NoAction(); }
    apply {
        switch (hdr.h.a) {
            1: { sm.egress_spec = 1; }
            2:
            SEVEN: { sm.egress_spec = 2; }
            default: { sm.egress_spec = 3; }
        }
        switch (t.apply().action_run) {
            mark: { sm.egress_spec = sm.egress_spec + 4; }
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;
    let out = compile_src("switch-value", src).unwrap_or_else(|e| panic!("{e}"));
    let mut p = load(&out.json);
    let t = p.table_id("I.t").unwrap();
    let a = p.action_id(t, "I.mark").unwrap();
    p.add_entry(t, vec![MatchKey::Exact(vec![7])], a, vec![vec![9]], 0)
        .unwrap();
    let mut st = p.new_state();
    for (a, want) in [(1u8, 1u32), (2, 2), (7, 6), (3, 3), (0, 3)] {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&[0x88, 0xb5, a, 0]);
        let r = p.ingress(&mut st, &f, 1, 0);
        assert_eq!((r.drop, r.egress_spec), (None, want), "a = {a}");
    }
    let bad = src.replace("switch (hdr.h.a)", "switch (t.apply().hit)");
    let e = compile_src("switch-call", &bad).unwrap_err();
    assert!(e.contains("switch on an expression with a call"), "{e}");
}

/// `if` in parser states (split into states as p4c does): statements before and after it, an
/// extract in one branch, a nested `if`, and the transition after the join.
#[test]
fn if_in_parser_states() {
    let src = r#"
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header h_t { bit<8> a; bit<8> b; }
struct headers { ethernet_t eth; h_t h; h_t h2; }
struct metadata { bit<8> n; bit<8> m; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.h);
        meta.m = 1;
        if (hdr.h.a == 1) {
            meta.n = 10;
        } else {
            pkt.extract(hdr.h2);
            if (hdr.h2.a == 5) { meta.n = 30; } else { meta.n = 20; }
        }
        meta.m = meta.m + meta.n;
        transition select(meta.n) { 10: accept; default: more; }
    }
    state more { meta.m = meta.m + 100; transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = (bit<9>) meta.m;
        if (hdr.h2.isValid()) { hdr.h.b = 0xee; }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.h); pkt.emit(hdr.h2); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;
    let out = compile_src("parser-if", src).unwrap_or_else(|e| panic!("{e}"));
    let mut p = load(&out.json);
    let mut st = p.new_state();
    // (h.a, h2.a) -> egress_spec: 1 + n, plus 100 through `more` unless n == 10
    for (a, a2, want) in [(1u8, 0u8, 11u32), (2, 5, 131), (2, 6, 121)] {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&[0x88, 0xb5, a, 0, a2, 0, 0xaa]);
        let mut o = Vec::new();
        let (ig, eg) = p.process(&mut st, &f, 1, 0, &mut o);
        assert_eq!(
            (ig.drop, ig.egress_spec),
            (None, want),
            "a = {a}, a2 = {a2}"
        );
        assert_eq!(eg.drop, None);
        // h2 extracted only on the else branch: h.b marks it
        assert_eq!(o[15], if a == 1 { 0 } else { 0xee });
    }
}

/// Header- and struct-typed local variables (a header instance of their own; a struct's fields
/// as scalars), whole-header and whole-struct copies.
#[test]
fn header_and_struct_locals() {
    let src = r#"
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
struct pair_t { bit<8> x; bit<8> y; }
struct metadata { pair_t p; }
struct headers { ethernet_t eth; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action swap() {
        pair_t q;
        q.x = meta.p.y;
        q.y = meta.p.x;
        meta.p = q;
    }
    apply {
        ethernet_t saved = hdr.eth;
        meta.p.x = 1;
        meta.p.y = 2;
        swap();
        hdr.eth.dst = hdr.eth.src;
        hdr.eth.src = saved.dst;
        hdr.eth.etherType = (bit<16>) (meta.p.x ++ meta.p.y);
        headers copy = hdr;
        if (copy.eth.isValid() && saved.isValid()) { sm.egress_spec = 3; } else { sm.egress_spec = 4; }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;
    let out = compile_src("locals", src).unwrap_or_else(|e| panic!("{e}"));
    let mut p = load(&out.json);
    let mut st = p.new_state();
    let mut f = vec![0, 0, 0, 0, 0, 0xd, 0, 0, 0, 0, 0, 0x5, 0x08, 0x00];
    f.extend_from_slice(&[1, 2, 3]);
    let mut o = Vec::new();
    let (ig, eg) = p.process(&mut st, &f, 1, 0, &mut o);
    assert_eq!((ig.egress_spec, eg.drop), (3, None));
    // dst <- old src, src <- the saved dst, etherType <- x ++ y after the swap (2, 1)
    assert_eq!(&o[..14], &[0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0xd, 2, 1]);
    assert_eq!(&o[14..], &[1, 2, 3]);
}

/// Saturating `|+|` and `|-|` on bit<8>: compiled to usat_cast as p4c-bm2-ss does, clamped at
/// 255 and 0 by the switch.
#[test]
fn saturating_arithmetic() {
    let src = r#"
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header h_t { bit<8> a; bit<8> b; bit<8> sum; bit<8> diff; }
struct headers { ethernet_t eth; h_t h; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.sum = hdr.h.a |+| hdr.h.b;
        hdr.h.diff = hdr.h.a |-| hdr.h.b;
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;
    let out = compile_src("saturating", src).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.json.contains("usat_cast"));
    let mut p = load(&out.json);
    for (a, b, sum, diff) in [(10u8, 20u8, 30u8, 0u8), (200, 100, 255, 100), (5, 5, 10, 0)] {
        let (_, _, bytes) = run(&mut p, &eth(0x88b5, &[a, b, 0, 0])).unwrap();
        assert_eq!(&bytes[14..18], &[a, b, sum, diff], "{a} {b}");
    }
    let bad = src.replace("hdr.h.a |+| hdr.h.b", "hdr.h.a |+| 300");
    assert!(compile_src("saturating-wide", &bad).is_err());
}

/// A parser value set: `parse_vsets` and a `parse_vset` case in the JSON, a `value_sets` entry
/// in the P4Info; frames take the state only for values the control plane put in the set.
#[test]
fn parser_value_sets() {
    let src = r#"
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header t_t { bit<8> x; }
struct headers { ethernet_t eth; t_t t; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    value_set<bit<16>>(4) pvs;
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etherType) {
            0x0800: accept;
            pvs: parse_t;
            default: accept;
        }
    }
    state parse_t { pkt.extract(hdr.t); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { if (hdr.t.isValid()) { sm.egress_spec = 2; } else { sm.egress_spec = 1; } }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.t); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;
    let out = compile_src("value-set", src).unwrap_or_else(|e| panic!("{e}"));
    let j: serde_json::Value = serde_json::from_str(&out.json).unwrap();
    assert_eq!(j["parse_vsets"][0]["name"], "P.pvs");
    assert_eq!(j["parse_vsets"][0]["compressed_bitwidth"], 16);
    assert!(out.p4info.contains("value_sets {"), "{}", out.p4info);
    assert!(out.p4info.contains("name: \"P.pvs\""));
    let mut p = load(&out.json);
    let port = |p: &mut Program, t: u16| run(p, &eth(t, &[0x42; 46])).unwrap().0;
    assert_eq!(port(&mut p, 0x88b5), 1);
    p.value_set_add("pvs", &[0x88, 0xb5], None).unwrap();
    assert_eq!(port(&mut p, 0x88b5), 2);
    assert_eq!(port(&mut p, 0x0800), 1, "the constant case comes first");
    let bad = src.replace("value_set<bit<16>>(4)", "value_set<bit<8>>(4)");
    let e = compile_src("value-set-width", &bad).unwrap_err();
    assert!(e.contains("holds bit<8> values"), "{e}");
}

/// `update_checksum_with_payload` / `verify_checksum_with_payload`: the calculation's last input
/// is the payload, as p4c-bm2-ss writes it, so the checksum covers the bytes after the header.
#[test]
fn checksums_with_the_payload() {
    let src = r#"
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header h_t { bit<16> a; bit<16> csum; }
struct headers { ethernet_t eth; h_t h; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout metadata meta) {
    apply { verify_checksum_with_payload(hdr.h.isValid(), { hdr.h.a }, hdr.h.csum, HashAlgorithm.csum16); }
}
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { hdr.h.a = 0x1234; sm.egress_spec = 1; }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) {
    apply { update_checksum_with_payload(hdr.h.isValid(), { hdr.h.a }, hdr.h.csum, HashAlgorithm.csum16); }
}
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;
    let out = compile_src("payload-checksum", src).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.json.contains("\"payload\""));
    let mut p = load(&out.json);
    let payload = [9u8, 8, 7, 6, 5];
    let sum = |a: u16| {
        let mut b = a.to_be_bytes().to_vec();
        b.extend_from_slice(&payload);
        csum(&b)
    };
    let mut rest = 0x0abcu16.to_be_bytes().to_vec();
    rest.extend_from_slice(&sum(0x0abc).to_be_bytes());
    rest.extend_from_slice(&payload);
    let (_, _, bytes) = run(&mut p, &eth(0x88b5, &rest)).unwrap();
    assert_eq!(p.stats().checksum_errors, 0);
    assert_eq!(
        &bytes[14..18],
        &[0x12, 0x34, (sum(0x1234) >> 8) as u8, sum(0x1234) as u8]
    );
    assert_eq!(&bytes[18..], &payload);
}

//! Language features on programs written for these tests, each run through the switch's
//! pipeline (lanes-p4) with outcomes worked out by hand: select on a tuple with a lookahead
//! field, masks, ranges and default; header stacks (next, last, pop_front); verify and custom
//! errors; serializable enums; const entries (ternary + range) and switch on action_run;
//! concatenation, slices read and written, the conditional operator, exit; hash over fields
//! and action parameters into a register, indexed counters, hit/miss; the preprocessor; new
//! types in P4Info; parser constants. More in language_statements.rs.

mod common;
use common::*;
use lanes_p4::{DropReason, MatchKey};

const PARSING: &str = r#"
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header h_t { bit<8> a; bit<8> b; }
header item_t { bit<7> val; bit<1> bos; }
struct headers { ethernet_t eth; h_t h; item_t[4] items; }
struct metadata { bit<8> n; bit<16> both; }
enum bit<16> EtherType { H = 0x88b6, STACK = 0x88b7 }
error { BadA }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etherType, pkt.lookahead<h_t>().a) {
            (EtherType.H, 8w0x00 &&& 8w0xf0): parse_h_low;
            (EtherType.H, _): parse_h;
            (EtherType.STACK, _): parse_items;
            default: accept;
        }
    }
    state parse_h_low { pkt.extract(hdr.h); meta.n = 1; transition accept; }
    state parse_h {
        pkt.extract(hdr.h);
        verify(hdr.h.a != 0xff, error.BadA);
        meta.n = 2;
        transition select(hdr.h.b) { 1..3: parse_items; default: accept; }
    }
    state parse_items {
        pkt.extract(hdr.items.next);
        meta.n = meta.n + 1;
        transition select(hdr.items.last.bos) { 1: accept; default: parse_items; }
    }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set_out(bit<9> p) { sm.egress_spec = p; }
    table classify {
        key = { hdr.h.a: ternary; hdr.h.b: range; }
        actions = { set_out; NoAction; }
        const entries = {
            (0x10 &&& 0xf0, 0..9): set_out(1);
            (_, 10..20): set_out(2);
            (0x30 &&& 0xff, _): NoAction();
        }
        default_action = set_out(3);
    }
    apply {
        meta.both = hdr.h.a ++ hdr.h.b;
        switch (classify.apply().action_run) {
            set_out: { if (hdr.items[0].isValid()) { hdr.items.pop_front(1); } }
            default: { exit; }
        }
        hdr.h.b[3:0] = meta.n[3:0];
        sm.priority = (meta.both > 0x1000) ? 3w7 : 3w1;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.h); pkt.emit(hdr.items); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;

#[test]
fn parser_tables_and_control_flow() {
    let out = compile_src("parsing", PARSING).unwrap();
    let mut p = load(&out.json);
    let tail = [0xee, 0xee];
    // a = 0x12 (not below 16), b = 5: parse_h, n = 2; entry 1 (0x1? and b in 0..9) -> port 1;
    // b[3:0] = n = 2; a ++ b = 0x1205 > 0x1000 -> priority 7
    let f = eth(0x88b6, &[0x12, 0x05, 0xee, 0xee]);
    assert_eq!(
        run(&mut p, &f),
        Ok((1, 7, eth(0x88b6, &[0x12, 0x02, 0xee, 0xee])))
    );
    // a = 0x05 (below 16: lookahead mask case) -> n = 1; b = 12 -> entry 2, port 2; 0x050c -> 1
    let f = eth(0x88b6, &[0x05, 0x0c, 0xee, 0xee]);
    assert_eq!(
        run(&mut p, &f),
        Ok((2, 1, eth(0x88b6, &[0x05, 0x01, 0xee, 0xee])))
    );
    // b = 2 in 1..3: two stack items (val 5 bos 0, val 9 bos 1), n = 4; no entry -> default
    // set_out(3); pop_front(1) leaves the second item; b[3:0] = 4; 0x2002 -> priority 7
    let mut rest = vec![0x20, 0x02, 5 << 1, (9 << 1) | 1];
    rest.extend_from_slice(&tail);
    let f = eth(0x88b6, &rest);
    assert_eq!(
        run(&mut p, &f),
        Ok((3, 7, eth(0x88b6, &[0x20, 0x04, (9 << 1) | 1, 0xee, 0xee])))
    );
    // a = 0xff fails verify: parser error BadA (the 8th error: code 7); as in bmv2 ingress
    // still runs, with parser_error set; the drop policy drops it before ingress
    let f = eth(0x88b6, &[0xff, 0x05, 0xee, 0xee]);
    assert!(run(&mut p, &f).is_ok());
    assert_eq!(p.stats().parser_errors, 1);
    p.set_parser_error_policy(lanes_p4::ParserErrorPolicy::Drop);
    assert_eq!(run(&mut p, &f), Err(DropReason::ParserError(7)));
    p.set_parser_error_policy(lanes_p4::ParserErrorPolicy::Continue);
    assert_eq!(p.error_name(7), Some("BadA"));
    // a = 0x30: the NoAction entry -> switch default -> exit: nothing after it runs
    let f = eth(0x88b6, &[0x30, 0x40, 0xee, 0xee]);
    assert_eq!(run(&mut p, &f), Ok((0, 0, f.clone())));
    // EtherType.STACK: items straight away (one, bos set); h invalid: no entry matches ->
    // set_out(3), whose branch pops the item: it is not sent
    let f = eth(0x88b7, &[(3 << 1) | 1, 0xee]);
    let (port, _, bytes) = run(&mut p, &f).unwrap();
    assert_eq!((port, bytes), (3, eth(0x88b7, &[0xee])));
}

const EXTERNS: &str = r#"
#include <core.p4>
#include <v1model.p4>
#define SLOTS 16
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header ip_t { bit<32> src; bit<32> dst; bit<8> proto; }
struct headers { ethernet_t eth; ip_t ip; }
struct metadata { bit<16> h; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.ip); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    register<bit<16>>(SLOTS) hashes;
    counter(SLOTS, CounterType.packets_and_bytes) per_port;
    direct_counter(CounterType.packets) hits;
    action remember(bit<32> salt) {
        hash(meta.h, HashAlgorithm.crc16, 16w0, { hdr.ip.src, salt }, 32w65536);
        hashes.write(7, meta.h);
    }
    table t {
        key = { hdr.ip.dst: exact; }
        actions = { remember; NoAction; }
        counters = hits;
    }
    apply {
        per_port.count((bit<32>)sm.ingress_port);
        if (t.apply().hit) {
            sm.egress_spec = 2;
        } else {
            sm.egress_spec = 3;
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.ip); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;

#[test]
fn hash_over_fields_and_parameters_registers_counters_hit_miss() {
    let out = compile_src("externs", EXTERNS).unwrap();
    let mut p = load(&out.json);
    let t = p.table_id("I.t").unwrap();
    let a = p.action_id(t, "I.remember").unwrap();
    let salt = 0xdead_beefu32;
    p.add_entry(
        t,
        vec![MatchKey::Exact(vec![10, 0, 0, 2])],
        a,
        vec![salt.to_be_bytes().to_vec()],
        0,
    )
    .unwrap();
    let frame = |dst: [u8; 4]| {
        let mut ip = vec![10, 0, 0, 1];
        ip.extend_from_slice(&dst);
        ip.push(17);
        eth(0x0800, &ip)
    };
    let hit = frame([10, 0, 0, 2]);
    let miss = frame([10, 0, 0, 3]);
    assert_eq!(run(&mut p, &hit).unwrap().0, 2);
    assert_eq!(run(&mut p, &miss).unwrap().0, 3);
    // hash input: src (32 bits) then the action parameter (32 bits)
    let mut input = vec![10, 0, 0, 1];
    input.extend_from_slice(&salt.to_be_bytes());
    assert_eq!(
        p.register_read("I.hashes", 7).unwrap(),
        u64::from(lanes_p4::crc16_arc(&input))
    );
    let c = p.counter_read("I.per_port", 9).unwrap();
    assert_eq!((c.packets, c.bytes), (2, 2 * hit.len() as u64));
    assert!(out.p4info.contains("direct_counters {"), "{}", out.p4info);
}

const DEFINES: &str = r#"
#include <v1model.p4>
#ifndef WIDTH
#define WIDTH 9
#endif
#if WIDTH > 8 && defined(FAST)
const bit<9> OUT = 5;
#elif WIDTH > 8
const bit<9> OUT = 6;
#else
#error WIDTH too small
#endif
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
struct headers { ethernet_t eth; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = OUT; }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;

#[test]
fn preprocessor_defines_and_conditionals() {
    let dir = std::env::temp_dir().join(format!("lanes-p4c-defines-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("prog.p4");
    std::fs::write(&path, DEFINES).unwrap();
    let port = |defines: Vec<(String, String)>| {
        let opts = lanes_p4c::Options {
            include_dirs: vec![],
            defines,
        };
        let out = lanes_p4c::compile_file(&path, &opts).unwrap_or_else(|d| panic!("{d}"));
        let mut p = load(&out.json);
        run(&mut p, &eth(0x0800, &[])).unwrap().0
    };
    assert_eq!(port(vec![]), 6);
    assert_eq!(port(vec![("FAST".into(), "1".into())]), 5);
    let opts = lanes_p4c::Options {
        include_dirs: vec![],
        defines: vec![("WIDTH".into(), "8".into())],
    };
    let e = lanes_p4c::compile_file(&path, &opts)
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("prog.p4:11:1: error: #error WIDTH too small"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

const NEW_TYPES: &str = r#"
#include <v1model.p4>
type bit<48> Mac_t;
@p4runtime_translation("example.org/Mac", 49)
type bit<48> TMac_t;
typedef bit<48> PlainMac_t;
header ethernet_t { Mac_t dst; TMac_t src; bit<16> etherType; }
struct headers { ethernet_t eth; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action rewrite(TMac_t m, PlainMac_t p) { hdr.eth.src = m; }
    table t { key = { hdr.eth.dst: exact; hdr.eth.src: exact; } actions = { rewrite; } }
    apply { t.apply(); }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;

/// `type` declarations are named in P4Info (type_name, type_info.new_types) and a
/// `@p4runtime_translation` gives the width P4Runtime uses, as p4c writes them.
#[test]
fn new_types_in_p4info() {
    let info = compile_src("newtypes", NEW_TYPES).unwrap().p4info;
    let field = |name: &str, width: u32, ty: &str| {
        format!("    name: \"{name}\"\n    bitwidth: {width}\n    match_type: EXACT\n    type_name {{\n      name: \"{ty}\"\n    }}\n")
    };
    assert!(info.contains(&field("hdr.eth.dst", 48, "Mac_t")), "{info}");
    assert!(info.contains(&field("hdr.eth.src", 49, "TMac_t")), "{info}");
    assert!(
        info.contains(
            "    name: \"m\"\n    bitwidth: 49\n    type_name {\n      name: \"TMac_t\"\n    }\n"
        ),
        "{info}"
    );
    assert!(
        info.contains("    name: \"p\"\n    bitwidth: 48\n  }\n"),
        "{info}"
    );
    assert!(info.contains("key: \"Mac_t\"\n    value {\n      original_type {\n        bitstring {\n          bit {\n            bitwidth: 48"), "{info}");
    assert!(
        info.contains(
            "translated_type {\n        uri: \"example.org/Mac\"\n        sdn_bitwidth: 49\n"
        ),
        "{info}"
    );
    // the table had no default action: NoAction, default only
    assert!(
        info.contains(
            "    id: 21257015\n    annotations: \"@defaultonly\"\n    scope: DEFAULT_ONLY\n"
        ),
        "{info}"
    );
}

/// A parser's own constants as select cases, and the 2018 `mark_to_drop()` (no argument).
#[test]
fn parser_constants_and_the_older_mark_to_drop() {
    let src = r#"
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header h_t { bit<8> a; }
struct headers { ethernet_t eth; h_t h; }
struct metadata { }
action my_drop() { mark_to_drop(); }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    const bit<16> TYPE_H = 16w0x88b6;
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etherType) { TYPE_H: parse_h; default: accept; }
    }
    state parse_h { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    table t { key = { hdr.h.a: exact; } actions = { my_drop; NoAction; } default_action = my_drop(); }
    apply { sm.egress_spec = 2; if (hdr.h.isValid()) { t.apply(); } }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;
    let out = compile_src("parser-const", src).unwrap_or_else(|e| panic!("{e}"));
    let mut p = load(&out.json);
    let mut st = p.new_state();
    let mut f = vec![0u8; 12];
    f.extend_from_slice(&[0x88, 0xb6, 7]);
    // h parsed (the parser's constant matched): t's default drops
    assert_eq!(p.ingress(&mut st, &f, 1, 0).drop, Some(DropReason::Ingress));
    f[13] = 0xb7;
    let r = p.ingress(&mut st, &f, 1, 0);
    assert_eq!((r.drop, r.egress_spec), (None, 2));
}

//! Functions, controls instantiated inside controls and function-like macros (all inlined
//! before lowering, as p4c does), and an `if` inside a block of a parser state: programs
//! written for these tests, run through the switch's pipeline (lanes-p4) with outcomes worked
//! out by hand.

mod common;
use common::*;
use lanes_p4::{DropReason, MatchKey, Program};

const FUNCTIONS: &str = r#"
#include <core.p4>
#include <v1model.p4>
#define PORT_BASE 4
#define TO_PORT(x) ((bit<9>)(x) + PORT_BASE)
#define MAX_OF(a, b) ((a) > (b) ? (a) : (b))
#define PAIR(x, y) x, y
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> flags; }
struct headers { ethernet_t eth; h_t h; }
struct metadata { bit<8> m; bit<8> top; }

bit<8> max8(in bit<8> x, in bit<8> y) {
    if (x > y) return x;
    return y;
}
bit<8> clamp(in bit<8> v, in bit<8> hi) {
    bit<8> r = v;
    if (v > hi) { r = hi; }
    return r;
}
void swap(inout bit<8> x, inout bit<8> y) { bit<8> t = x; x = y; y = t; }
bit<8> sum_max(in bit<8> x, in bit<8> y, in bit<8> z) { return max8(x, y) + z; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etherType) { 0x88b5: parse_h; default: accept; }
    }
    state parse_h {
        pkt.extract(hdr.h);
        {
            meta.m = 1;
            if (hdr.h.flags == 1) {
                if (hdr.h.a == 0) { meta.m = 2; } else { meta.m = 3; }
            }
        }
        meta.top = max8(PAIR(hdr.h.a, hdr.h.b));
        transition accept;
    }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action act_swap() { swap(hdr.h.a, hdr.h.b); }
    action set_c(bit<8> v) { hdr.h.c = clamp(v, 100); }
    table t {
        key = { hdr.h.flags: exact; }
        actions = { act_swap; set_c; NoAction; }
        const entries = { 2: act_swap(); 3: set_c(200); 4: set_c(50); }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = TO_PORT(hdr.h.flags);
        if (hdr.h.isValid()) {
            t.apply();
            if (max8(hdr.h.a, hdr.h.c) == 100) { hdr.eth.src[7:0] = 0xaa; }
            hdr.eth.dst[7:0] = meta.top;
            hdr.eth.dst[15:8] = MAX_OF(hdr.h.flags, meta.m);
            hdr.eth.dst[23:16] = sum_max(hdr.h.a, hdr.h.b, 1);
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;

/// Ethernet (dst ..:02, src ..:01, EtherType 0x88b5) and `h`.
fn frame(dst: [u8; 3], src_low: u8, h: [u8; 4]) -> Vec<u8> {
    let mut f = vec![0, 0, 0, dst[0], dst[1], dst[2], 0, 0, 0, 0, 0, src_low];
    f.extend_from_slice(&0x88b5u16.to_be_bytes());
    f.extend_from_slice(&h);
    f
}

/// (egress port, bytes out) or the drop, for a frame in on port 1.
fn run(p: &mut Program, f: &[u8]) -> Result<(u32, Vec<u8>), DropReason> {
    pass(p, f, 1).map(|(port, _, out)| (port, out))
}

#[test]
fn functions_macros_and_an_if_in_a_parser_block() {
    let out = compile_src("functions", FUNCTIONS).unwrap();
    let mut p = load(&out.json);
    let cases = [
        // flags 1, a 0: the parser's inner if sets m = 2; top = max(0, 9) = 9; port 1 + 4;
        // no entry for flags 1; dst = max(0,9)+1 . max(1,2) . 9
        ([0, 9, 0, 1], 5, [0x0a, 2, 9], 0x01, [0, 9, 0, 1]),
        // flags 1, a 4: m = 3; top = max(4, 4) = 4 (the second return); dst 5 . 3 . 4
        ([4, 4, 0, 1], 5, [5, 3, 4], 0x01, [4, 4, 0, 1]),
        // flags 2: m = 1; top 7; swap(a, b) through inout parameters; max8(7, 0) = 7;
        // dst = max(7,5)+1 . max(2,1) . 7
        ([5, 7, 0, 2], 6, [8, 2, 7], 0x01, [7, 5, 0, 2]),
        // flags 3: set_c(200) clamps c to 100; max8(1, 100) == 100 marks src; dst 3 . 3 . 2
        ([1, 2, 0, 3], 7, [3, 3, 2], 0xaa, [1, 2, 100, 3]),
        // flags 4: set_c(50) leaves 50; dst = 200+1 . 4 . max(200, 3)
        ([200, 3, 9, 4], 8, [201, 4, 200], 0x01, [200, 3, 50, 4]),
    ];
    for (h, port, dst, src_low, h_out) in cases {
        let f = frame([0, 0, 2], 1, h);
        assert_eq!(
            run(&mut p, &f),
            Ok((port, frame(dst, src_low, h_out))),
            "h = {h:?}"
        );
    }
}

const NESTED: &str = r#"
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers { ethernet_t eth; h_t h; }
struct metadata { bit<8> m; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.h); transition accept; }
}
control Acl(inout headers hdr, inout standard_metadata_t sm) {
    counter(4, CounterType.packets) hits;
    bit<8> seen = 7;
    action deny() { mark_to_drop(sm); hits.count(0); }
    action allow() { hits.count(1); seen = seen + 1; }
    table acl {
        key = { hdr.h.a: exact; }
        actions = { deny; allow; }
        default_action = allow();
        const entries = { 0xde: deny(); }
    }
    apply { acl.apply(); hdr.h.c = hdr.h.c + seen; }
}
control Route(inout headers hdr, inout standard_metadata_t sm) {
    Acl() inner;
    action to(bit<9> p) { sm.egress_spec = p; }
    table routes { key = { hdr.h.b: exact; } actions = { to; NoAction; } default_action = NoAction(); }
    apply { routes.apply(); if (hdr.h.d == 1) { inner.apply(hdr, sm); } }
}
control Stamp(inout bit<8> x, in bit<8> v) { apply { x = x ^ v; } }
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Acl() first;
    Route() r;
    Stamp() s;
    apply { first.apply(hdr, sm); r.apply(hdr, sm); s.apply(hdr.h.d, 8w0xf0); }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;

#[test]
fn controls_inside_controls_are_inlined_with_their_instance_names() {
    let out = compile_src("nested", NESTED).unwrap();
    // p4c's names: the instance path under the outer control
    for name in [
        "I.first.acl",
        "I.r.routes",
        "I.r.inner.acl",
        "I.first.hits",
        "I.r.inner.hits",
        "I.r.to",
    ] {
        assert!(
            out.json.contains(&format!("\"{name}\"")),
            "{name} not in the JSON"
        );
        assert!(
            out.p4info.contains(&format!("name: \"{name}\"")),
            "{name} not in the P4Info"
        );
    }
    let mut p = load(&out.json);
    let t = p.table_id("I.r.routes").unwrap();
    let to = p.action_id(t, "I.r.to").unwrap();
    for (b, port) in [(1u8, 3u8), (2, 4)] {
        p.add_entry(
            t,
            vec![MatchKey::Exact(vec![b])],
            to,
            vec![vec![0, port]],
            0,
        )
        .unwrap();
    }
    let f = |h: [u8; 4]| frame([0, 0, 2], 1, h);
    // first allows (seen 8, c + 8), route b 1 -> port 3, d 1 applies inner: allows again with
    // its own seen (7 + 1), c + 8; Stamp: d ^ 0xf0
    assert_eq!(run(&mut p, &f([1, 1, 0, 1])), Ok((3, f([1, 1, 16, 0xf1]))));
    // first denies, b 9 has no route: dropped
    assert!(run(&mut p, &f([0xde, 9, 0, 0])).is_err());
    // first denies, the route sets port 3 again, inner denies: dropped
    assert!(run(&mut p, &f([0xde, 1, 0, 1])).is_err());
    // first allows, route b 2 -> port 4, d 0: inner not applied
    assert_eq!(run(&mut p, &f([2, 2, 1, 0])), Ok((4, f([2, 2, 9, 0xf0]))));
    let cell = |n: &str, i: u64| p.counter_read(n, i).unwrap().packets;
    assert_eq!([cell("I.first.hits", 0), cell("I.first.hits", 1)], [2, 2]);
    assert_eq!(
        [cell("I.r.inner.hits", 0), cell("I.r.inner.hits", 1)],
        [1, 1]
    );
}

/// The programs above with a token deleted, duplicated or swapped at many places: each compiles
/// or gives a one-line error, never a panic (the inliners and the macro expander included).
#[test]
fn mutated_inlining_programs_never_panic() {
    let swaps = [
        "(", ")", "{", "}", ";", ",", "return", "apply", "#define", "x", "1", ".",
    ];
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for (k, src) in [FUNCTIONS, NESTED].into_iter().enumerate() {
        let words: Vec<&str> = src
            .split_inclusive(|c: char| !c.is_alphanumeric() && c != '_')
            .collect();
        for n in 0..150 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let i = (x as usize) % words.len();
            let mut w = words.clone();
            match n % 3 {
                0 => {
                    w.remove(i);
                }
                1 => w.insert(i, words[i]),
                _ => w[i] = swaps[(x >> 40) as usize % swaps.len()],
            }
            if let Err(e) = compile_src(&format!("mut{k}-{n}"), &w.concat()) {
                assert_eq!(e.lines().count(), 1, "{e}");
            }
        }
    }
}

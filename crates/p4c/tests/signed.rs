//! Signed `int<W>` end to end: header, metadata and local int fields, signed literals and
//! constants, casts between bit and int, unary minus, signed comparisons, arithmetic shift,
//! two's complement wrap-around, saturating `|+|`/`|-|` (bmv2's `sat_cast`) and an int<8>
//! action parameter, compiled and run through the switch's pipeline (lanes-p4). The expected
//! bytes come from Rust's i8/i16 arithmetic, which has the same two's complement semantics.

mod common;
use common::*;

const SIGNED: &str = r#"
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header s_t {
    int<8> a; int<8> b; bit<8> u; bit<8> flags;
    int<8> shr; int<8> sum; int<8> sat_add; int<8> sat_sub; bit<8> cmp; bit<8> neg; bit<8> u_shr;
}
struct headers { ethernet_t eth; s_t s; }
struct metadata { int<16> wide; }
const int<8> LIMIT = -100;

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.s); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action add_k(int<8> k) { hdr.s.sum = hdr.s.sum + k; }
    table t {
        key = { hdr.s.flags: exact; }
        actions = { add_k; NoAction; }
        const entries = { 1: add_k(-3); 2: add_k(100); }
        default_action = NoAction();
    }
    apply {
        hdr.s.shr = hdr.s.a >> 1;
        hdr.s.sum = hdr.s.a + hdr.s.b;
        hdr.s.sat_add = hdr.s.a |+| hdr.s.b;
        hdr.s.sat_sub = hdr.s.a |-| hdr.s.b;
        bit<8> c = 0;
        if (hdr.s.a < hdr.s.b) { c = c | 1; }
        if (hdr.s.a > hdr.s.b) { c = c | 2; }
        if (hdr.s.a <= -1) { c = c | 4; }
        if (hdr.s.a >= hdr.s.b) { c = c | 8; }
        int<8> t8 = (int<8>)hdr.s.u;
        if (t8 < 0) { c = c | 16; }
        if (hdr.s.a < LIMIT) { c = c | 32; }
        hdr.s.cmp = c;
        hdr.s.neg = (bit<8>)(-hdr.s.a);
        hdr.s.u_shr = (bit<8>)(t8 >> 2);
        meta.wide = (int<16>)hdr.s.a - 16s300;
        hdr.eth.src[15:0] = (bit<16>)meta.wide;
        t.apply();
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.s); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;

fn frame(a: i8, b: i8, u: u8, flags: u8) -> Vec<u8> {
    let mut f = vec![0u8; 12];
    f.extend_from_slice(&0x88b5u16.to_be_bytes());
    f.extend_from_slice(&[a as u8, b as u8, u, flags, 0, 0, 0, 0, 0, 0, 0]);
    f
}

/// What the program should leave in the frame, by Rust's signed arithmetic.
fn expected(a: i8, b: i8, u: u8, flags: u8) -> Vec<u8> {
    let k = match flags {
        1 => -3i8,
        2 => 100,
        _ => 0,
    };
    let c = u8::from(a < b)
        | u8::from(a > b) << 1
        | u8::from(a <= -1) << 2
        | u8::from(a >= b) << 3
        | u8::from((u as i8) < 0) << 4
        | u8::from(a < -100) << 5;
    let wide = i16::from(a).wrapping_sub(300);
    let mut f = vec![0u8; 12];
    f[10..12].copy_from_slice(&wide.to_be_bytes());
    f.extend_from_slice(&0x88b5u16.to_be_bytes());
    f.extend_from_slice(&[
        a as u8,
        b as u8,
        u,
        flags,
        (a >> 1) as u8,
        a.wrapping_add(b).wrapping_add(k) as u8,
        a.saturating_add(b) as u8,
        a.saturating_sub(b) as u8,
        c,
        a.wrapping_neg() as u8,
        ((u as i8) >> 2) as u8,
    ]);
    f
}

fn run(p: &mut lanes_p4::Program, f: &[u8]) -> Vec<u8> {
    let mut st = p.new_state();
    let mut o = Vec::new();
    let (ig, eg) = p.process(&mut st, f, 1, 0, &mut o);
    assert_eq!((ig.egress_spec, eg.drop), (1, None));
    o[..eg.len].to_vec()
}

#[test]
fn signed_fields_casts_compare_shift_wrap_and_saturate() {
    let out = compile_src("signed", SIGNED).unwrap_or_else(|e| panic!("{e}"));
    // bmv2's form: signed fields flagged in header_types, int arithmetic wrapped by
    // two_comp_mod, saturating int arithmetic by sat_cast
    let json: serde_json::Value = serde_json::from_str(&out.json).unwrap();
    let s_t = json["header_types"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "s_t")
        .unwrap();
    assert_eq!(s_t["fields"][0], serde_json::json!(["a", 8, true]));
    assert_eq!(s_t["fields"][2], serde_json::json!(["u", 8, false]));
    assert!(out.json.contains("\"two_comp_mod\"") && out.json.contains("\"sat_cast\""));
    // P4Runtime: an int<8> parameter is an 8-bit bitstring (two's complement)
    assert!(
        out.p4info.contains("name: \"k\"\n    bitwidth: 8"),
        "{}",
        out.p4info
    );
    let mut p = load(&out.json);
    let cases: [(i8, i8, u8, u8); 10] = [
        (-1, 1, 0x80, 0),   // -1 < 1 across zero; 0x80 as int<8> is -128
        (1, -1, 0x7f, 0),   // 1 > -1; 0x7f stays positive
        (127, 1, 0xff, 0),  // 127 + 1 wraps to -128, |+| clamps at 127
        (-128, 1, 0x40, 0), // -128 - 1 clamps at -128; -(-128) wraps to -128
        (-128, -1, 0, 0),   // -129 wraps to 127; |+| clamps at -128
        (-7, 3, 0xf0, 0),   // -7 >> 1 = -4 (arithmetic); 0xf0 >> 2 = 0xfc as int
        (100, -100, 1, 0),  // 100 |-| -100 clamps at 127
        (-101, 0, 2, 0),    // below LIMIT (-100)
        (5, 5, 3, 1),       // add_k(-3): 10 - 3
        (50, 0, 4, 2),      // add_k(100): 50 + 100 wraps to -106
    ];
    for (a, b, u, flags) in cases {
        assert_eq!(
            run(&mut p, &frame(a, b, u, flags)),
            expected(a, b, u, flags),
            "a {a} b {b} u {u:#x} flags {flags}"
        );
    }
    // a few of the cases spelled out, so the reference model itself is pinned
    let o = run(&mut p, &frame(127, 1, 0xff, 0));
    assert_eq!(&o[18..22], &[63, 0x80, 127, 126]); // shr, sum = -128, sat_add, sat_sub
    let o = run(&mut p, &frame(-1, 1, 0x80, 0));
    assert_eq!(o[22], 1 | 4 | 16); // -1 < 1, -1 <= -1, (int<8>)0x80 < 0
    assert_eq!(&o[10..12], &(-301i16).to_be_bytes()); // (int<16>)-1 - 300
    let o = run(&mut p, &frame(-7, 3, 0xf0, 0));
    assert_eq!((o[18], o[24]), ((-4i8) as u8, 0xfc));
    let o = run(&mut p, &frame(-128, -1, 0, 0));
    assert_eq!((o[19], o[20]), (127, 0x80)); // -129 wraps to 127; sat_cast clamps to -128
}

#[test]
fn int_and_bit_do_not_mix_without_a_cast() {
    // (case, text replaced, by, the diagnostic: the whole line where it names its location, else its end)
    let cases = [
        ("signed-mix", "hdr.s.a + hdr.s.b;", "hdr.s.a + hdr.s.u;",
         "prog.p4:27:29: error: type mismatch: int<8> + bit<8>; P4-16 does not mix int and bit: cast one side, e.g. (bit<8>) or (int<8>)"),
        ("signed-assign", "hdr.s.neg = (bit<8>)(-hdr.s.a);", "hdr.s.neg = -hdr.s.a;",
         "prog.p4:39:21: error: type mismatch: int<8> assigned to hdr.s.neg of type bit<8>; cast it with (bit<8>)"),
        ("signed-cast", "(int<16>)hdr.s.a", "(int<16>)hdr.s.u",
         "prog.p4:41:21: error: cannot cast bit<8> to int<16> directly: cast to bit<16> first"),
        ("signed-div", "hdr.s.a >> 1", "hdr.s.a / 2",
         "prog.p4:26:29: error: operator / is not defined on int<8>"),
        ("signed-range", "LIMIT = -100", "LIMIT = -129", "error: value -129 does not fit in int<8>"),
    ];
    for (name, from, to, want) in cases {
        let bad = SIGNED.replace(from, to);
        assert_ne!(bad, SIGNED, "{name}: the program has no '{from}'");
        let got = one_line_error(name, &bad);
        if want.starts_with("prog.p4:") {
            assert_eq!(got, want, "{name}"); // the whole line, location included
        } else {
            assert!(got.ends_with(want), "{name}: {got}");
        }
    }
}

/// Negative constants in select cases and table entries on int<W> keys: matched as their bits.
const KEYS: &str = r#"
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header s_t { int<8> a; bit<8> out; bit<8> seen; }
struct headers { ethernet_t eth; s_t s; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.s); transition select(hdr.s.a) { -1: minus_one; 8s2: two; default: accept; } }
    state minus_one { hdr.s.seen = 1; transition accept; }
    state two { hdr.s.seen = 2; transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set_out(bit<8> v) { hdr.s.out = v; }
    table t {
        key = { hdr.s.a: ternary; }
        actions = { set_out; NoAction; }
        const entries = { -2: set_out(7); 3: set_out(9); -128 &&& 0x80: set_out(1); }
        default_action = NoAction();
    }
    apply { t.apply(); sm.egress_spec = 1; }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.s); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;

#[test]
fn negative_select_cases_and_entries_on_int_keys() {
    let out = compile_src("signed-keys", KEYS).unwrap_or_else(|e| panic!("{e}"));
    let mut p = load(&out.json);
    // (a, out, seen): -2 exact; -1 and -5 only under the sign-bit mask; -1 and 2 select states
    for (a, o, seen) in [
        (-2i8, 7u8, 0u8),
        (-1, 1, 1),
        (-5, 1, 0),
        (3, 9, 0),
        (2, 0, 2),
        (4, 0, 0),
    ] {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&0x88b5u16.to_be_bytes());
        f.extend_from_slice(&[a as u8, 0, 0]);
        let bytes = run(&mut p, &f);
        assert_eq!(&bytes[14..17], &[a as u8, o, seen], "a {a}");
    }
    let bad = KEYS.replace("-1: minus_one", "-129: minus_one");
    assert!(
        one_line_error("signed-case", &bad).ends_with("error: value -129 does not fit in int<8>")
    );
}

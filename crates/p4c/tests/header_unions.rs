//! Header unions compiled and run through the switch's pipeline: the parser extracts one
//! member (chosen by etherType), `u.isValid()` is true iff a member is valid, setValid on one
//! member invalidates the other, union assignment copies member by member, and emit(u) writes
//! the valid member only.

mod common;
use common::*;

fn source(ingress: &str) -> String {
    format!(
        r#"
#include <core.p4>
#include <v1model.p4>
header ethernet_t {{ bit<48> dst; bit<48> src; bit<16> etherType; }}
header a_t {{ bit<16> x; }}
header b_t {{ bit<32> y; }}
header_union ab_t {{ a_t a; b_t b; }}
header flag_t {{ bit<8> v; }}
struct headers {{ ethernet_t eth; ab_t u; ab_t w; flag_t f; }}
struct metadata {{ bit<8> m; }}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    state start {{
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etherType) {{
            0x1111: pa; 0x2222: pb; 0x3333: pab; default: accept;
        }}
    }}
    state pa {{ pkt.extract(hdr.u.a); transition accept; }}
    state pb {{ pkt.extract(hdr.u.b); transition accept; }}
    state pab {{ pkt.extract(hdr.u.a); pkt.extract(hdr.u.b); transition accept; }}
}}
control V(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    apply {{
        hdr.f.setValid();
        hdr.f.v = hdr.u.isValid() ? 8w1 : 8w0;
        {ingress}
    }}
}}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{ apply {{ }} }}
control C(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control D(packet_out pkt, in headers hdr) {{
    apply {{ pkt.emit(hdr.eth); pkt.emit(hdr.f); pkt.emit(hdr.u); pkt.emit(hdr.w); }}
}}
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#
    )
}

fn frame(ether_type: u16, rest: &[u8]) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2];
    f.extend_from_slice(&ether_type.to_be_bytes());
    f.extend_from_slice(rest);
    f
}

fn run(tag: &str, ingress: &str, f: &[u8]) -> Vec<u8> {
    let out = compile_src(tag, &source(ingress)).unwrap_or_else(|e| panic!("{tag}: {e}"));
    let mut p = load(&out.json);
    pass(&mut p, f, 1)
        .unwrap_or_else(|d| panic!("{tag}: {d:?}"))
        .2
}

#[test]
fn the_parsed_member_is_emitted_and_the_union_is_valid() {
    let f = frame(0x1111, &[0xaa, 0xbb, 7]);
    assert_eq!(run("pa", "", &f), frame(0x1111, &[1, 0xaa, 0xbb, 7]));
    let f = frame(0x2222, &[1, 2, 3, 4, 7]);
    assert_eq!(run("pb", "", &f), frame(0x2222, &[1, 1, 2, 3, 4, 7]));
    let f = frame(0x0800, &[7]);
    assert_eq!(run("none", "", &f), frame(0x0800, &[0, 7]));
}

#[test]
fn extracting_the_second_member_drops_the_first() {
    let f = frame(0x3333, &[0xaa, 0xbb, 1, 2, 3, 4, 7]);
    assert_eq!(run("pab", "", &f), frame(0x3333, &[1, 1, 2, 3, 4, 7]));
}

#[test]
fn set_valid_on_one_member_invalidates_the_other() {
    let ing = "hdr.u.b.setValid(); hdr.u.b.y = 0xcafef00d;";
    let f = frame(0x1111, &[0xaa, 0xbb, 7]);
    assert_eq!(
        run("setb", ing, &f),
        frame(0x1111, &[1, 0xca, 0xfe, 0xf0, 0x0d, 7])
    );
    let ing = "hdr.u.a.setInvalid(); hdr.f.v = hdr.u.isValid() ? 8w1 : 8w2;";
    assert_eq!(run("inval", ing, &f), frame(0x1111, &[2, 7]));
}

#[test]
fn union_assignment_copies_the_valid_member() {
    let f = frame(0x2222, &[1, 2, 3, 4, 7]);
    assert_eq!(
        run("assign", "hdr.w = hdr.u;", &f),
        frame(0x2222, &[1, 1, 2, 3, 4, 1, 2, 3, 4, 7])
    );
}

#[test]
fn a_union_member_that_is_not_a_header_is_refused() {
    let src = source("").replace(
        "header_union ab_t { a_t a; b_t b; }",
        "header_union ab_t { a_t a; bit<8> b; }",
    );
    let e = one_line_error("badunion", &src);
    assert!(e.contains("header union 'ab_t': member 'b'"), "{e}");
}

#[test]
fn a_table_can_match_on_union_validity() {
    let ing = "action set(bit<8> v) { hdr.f.v = v; }
        table t { key = { hdr.u.isValid(): exact; } actions = { set; } }";
    let src = source("t.apply();").replace(
        "apply {\n        hdr.f.setValid();",
        &format!("{ing}\n    apply {{\n        hdr.f.setValid();"),
    );
    let out = compile_src("key", &src).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.p4info.contains("name: \"hdr.u.$valid$\""),
        "p4c's key name"
    );
    let mut p = load(&out.json);
    entry(
        &mut p,
        "I.t",
        vec![lanes_p4::MatchKey::Exact(vec![1])],
        "I.set",
        vec![vec![9]],
    );
    let f = frame(0x1111, &[0xaa, 0xbb]);
    assert_eq!(
        pass(&mut p, &f, 1).unwrap().2,
        frame(0x1111, &[9, 0xaa, 0xbb])
    );
    let f = frame(0x0800, &[]);
    assert_eq!(pass(&mut p, &f, 1).unwrap().2, frame(0x0800, &[0]));
}

//! Whole-stack assignment compiled and run through the switch's pipeline: in the parser and in a
//! control, every element (validity and fields) is copied and the destination takes the
//! source's next index; a union stack is copied element by element.

mod common;
use common::*;

fn source(parser: &str, ingress: &str) -> String {
    format!(
        r#"
#include <core.p4>
#include <v1model.p4>
header ethernet_t {{ bit<48> dst; bit<48> src; bit<16> etherType; }}
header e_t {{ bit<8> x; }}
header b_t {{ bit<16> y; }}
header_union ab_t {{ e_t a; b_t b; }}
struct headers {{ ethernet_t eth; e_t[3] s1; e_t[3] s2; ab_t[2] u1; ab_t[2] u2; }}
struct metadata {{ bit<8> m; }}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    state start {{
        pkt.extract(hdr.eth);
        {parser}
        transition accept;
    }}
}}
control V(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    apply {{ {ingress} }}
}}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{ apply {{ }} }}
control C(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control D(packet_out pkt, in headers hdr) {{ apply {{ pkt.emit(hdr); }} }}
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#
    )
}

fn frame(rest: &[u8]) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x12, 0x34];
    f.extend_from_slice(rest);
    f
}

fn run(tag: &str, parser: &str, ingress: &str, f: &[u8]) -> Vec<u8> {
    let out = compile_src(tag, &source(parser, ingress)).unwrap_or_else(|e| panic!("{tag}: {e}"));
    let mut p = load(&out.json);
    pass(&mut p, f, 1)
        .unwrap_or_else(|d| panic!("{tag}: {d:?}"))
        .2
}

#[test]
fn a_stack_copied_in_the_parser_keeps_its_next_index() {
    // s1 = [0x11, 0x22], s2 = s1, then s2.next is element 2: 0x33
    let parser = "pkt.extract(hdr.s1.next); pkt.extract(hdr.s1.next); hdr.s2 = hdr.s1; \
                  pkt.extract(hdr.s2.next);";
    let f = frame(&[0x11, 0x22, 0x33, 0x99]);
    assert_eq!(
        run("parser", parser, "", &f),
        frame(&[0x11, 0x22, 0x11, 0x22, 0x33, 0x99])
    );
}

#[test]
fn a_stack_copied_in_a_control_copies_validity() {
    // s2 has three elements, s1 one: after the copy s2 has one
    let parser = "pkt.extract(hdr.s1.next); pkt.extract(hdr.s2.next); pkt.extract(hdr.s2.next); \
                  pkt.extract(hdr.s2.next);";
    let f = frame(&[0x11, 1, 2, 3, 0x99]);
    assert_eq!(
        run("control", parser, "hdr.s2 = hdr.s1;", &f),
        frame(&[0x11, 0x11, 0x99])
    );
}

#[test]
fn a_union_stack_is_copied_element_by_element() {
    let parser = "pkt.extract(hdr.u1.next.b); pkt.extract(hdr.u1.next.a); \
                  pkt.extract(hdr.u2.next.a);";
    let f = frame(&[0xab, 0xcd, 0x11, 0x22, 0x99]);
    assert_eq!(
        run("union", parser, "hdr.u2 = hdr.u1;", &f),
        frame(&[0xab, 0xcd, 0x11, 0xab, 0xcd, 0x11, 0x99])
    );
}

#[test]
fn stacks_of_different_types_are_refused() {
    let src = source("", "hdr.s1 = hdr.u1;");
    let e = compile_src("mismatch", &src).expect_err("should not compile");
    assert!(e.contains("stack type mismatch"), "{e}");
}

//! Header union stacks (`U[2]` with `U` a header_union) compiled and run through the switch's
//! pipeline: `extract(u.next.m)` fills the elements in order (a third is StackOutOfBounds),
//! `extract(u[i].m)` names an element, members of one element stay exclusive, and `emit(hdr)`
//! writes each element's valid member.

mod common;
use common::*;

fn source(parser: &str, ingress: &str) -> String {
    format!(
        r#"
#include <core.p4>
#include <v1model.p4>
header ethernet_t {{ bit<48> dst; bit<48> src; bit<16> etherType; }}
header a_t {{ bit<8> x; }}
header b_t {{ bit<16> y; }}
header_union ab_t {{ a_t a; b_t b; }}
header out_t {{ bit<8> valid_bits; bit<8> err; }}
struct headers {{ ethernet_t eth; out_t o; ab_t[2] u; }}
struct metadata {{ bit<8> m; }}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    state start {{
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etherType) {{ 1: one; 2: two; 3: three; default: accept; }}
    }}
    {parser}
}}
control V(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    apply {{
        hdr.o.setValid();
        hdr.o.valid_bits = (hdr.u[0].a.isValid() ? 8w8 : 0) | (hdr.u[0].b.isValid() ? 8w4 : 0)
            | (hdr.u[1].a.isValid() ? 8w2 : 0) | (hdr.u[1].b.isValid() ? 8w1 : 0);
        hdr.o.err = (bit<8>)(sm.parser_error == error.StackOutOfBounds ? 1w1 : 1w0);
        {ingress}
    }}
}}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{ apply {{ }} }}
control C(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control D(packet_out pkt, in headers hdr) {{ apply {{ pkt.emit(hdr); }} }}
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#
    )
}

/// `next`: state one extracts a then b (two elements), two extracts b then a, three extracts
/// three elements (one too many).
const NEXT: &str = "
    state one { pkt.extract(hdr.u.next.a); pkt.extract(hdr.u.next.b); transition accept; }
    state two { pkt.extract(hdr.u.next.b); pkt.extract(hdr.u.next.a); transition accept; }
    state three {
        pkt.extract(hdr.u.next.a); pkt.extract(hdr.u.next.a); pkt.extract(hdr.u.next.a);
        transition accept;
    }";

fn frame(ether_type: u16, rest: &[u8]) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2];
    f.extend_from_slice(&ether_type.to_be_bytes());
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
fn next_fills_the_elements_in_order() {
    // u[0].a = 0x11, u[1].b = 0x2233, payload 0x99; o = (valid bits 8|1, no error)
    let f = frame(1, &[0x11, 0x22, 0x33, 0x99]);
    assert_eq!(
        run("one", NEXT, "", &f),
        frame(1, &[9, 0, 0x11, 0x22, 0x33, 0x99])
    );
    let f = frame(2, &[0x22, 0x33, 0x11, 0x99]);
    assert_eq!(
        run("two", NEXT, "", &f),
        frame(2, &[4 | 2, 0, 0x22, 0x33, 0x11, 0x99])
    );
}

#[test]
fn a_third_next_extract_is_stack_out_of_bounds() {
    // the parser stops at the error; ingress sees the two elements it extracted
    let f = frame(3, &[0x11, 0x22, 0x33, 0x99]);
    assert_eq!(
        run("three", NEXT, "", &f),
        frame(3, &[8 | 2, 1, 0x11, 0x22, 0x33, 0x99])
    );
}

#[test]
fn constant_indexes_name_elements_and_members_stay_exclusive() {
    let parser = "
        state one { pkt.extract(hdr.u[1].b); transition accept; }
        state two { pkt.extract(hdr.u[0].a); pkt.extract(hdr.u[0].b); transition accept; }
        state three { transition accept; }";
    let f = frame(1, &[0x22, 0x33, 0x99]);
    assert_eq!(
        run("c1", parser, "", &f),
        frame(1, &[1, 0, 0x22, 0x33, 0x99])
    );
    // b replaces a in element 0: a's byte is gone from the frame
    let f = frame(2, &[0x11, 0x22, 0x33, 0x99]);
    assert_eq!(
        run("c2", parser, "", &f),
        frame(2, &[4, 0, 0x22, 0x33, 0x99])
    );
    // writes through a constant index; setValid of a member invalidates its sibling
    let ingress = "if (hdr.u[1].b.isValid()) { hdr.u[1].b.y = 0xabcd; hdr.u[0].a.setValid(); \
                   hdr.u[0].a.x = 0x77; hdr.u[1].a.setValid(); hdr.u[1].a.x = 0x55; }";
    let f = frame(1, &[0x22, 0x33, 0x99]);
    assert_eq!(
        run("c3", parser, ingress, &f),
        frame(1, &[1, 0, 0x77, 0x55, 0x99])
    );
}

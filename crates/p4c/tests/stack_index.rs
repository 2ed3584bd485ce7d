//! Header stack elements indexed at run time (`hdr.s[hdr.ix.i]`), compiled and run through the
//! switch's pipeline: reads and writes of a field, validity, header copies, an element's field
//! as an inout argument. An index past the stack reads zeros (an invalid header) and writes
//! nothing; a negative `int<W>` index is past the stack.

mod common;
use common::*;

fn source(ingress: &str) -> String {
    format!(
        r#"
#include <core.p4>
#include <v1model.p4>
header ethernet_t {{ bit<48> dst; bit<48> src; bit<16> etherType; }}
header ix_t {{ bit<8> i; int<8> j; bit<8> r; }}
header e_t {{ bit<8> v; }}
struct headers {{ ethernet_t eth; ix_t ix; e_t[3] s; }}
struct metadata {{ bit<8> m; }}
bit<8> bump(inout bit<8> x) {{ x = x + 1; return x; }}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    state start {{
        pkt.extract(hdr.eth);
        pkt.extract(hdr.ix);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        transition accept;
    }}
}}
control V(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    apply {{
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

/// A frame with `ix` = (i, j, r) and stack elements `s`, then two payload bytes.
fn frame(ix: [u8; 3], s: &[u8]) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x12, 0x34];
    f.extend_from_slice(&ix);
    f.extend_from_slice(s);
    f.extend_from_slice(&[0xee, 0xff]);
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
fn a_field_write_goes_to_the_indexed_element_and_past_the_stack_nowhere() {
    let w = "hdr.s[hdr.ix.i].v = 8w0x7f;";
    assert_eq!(
        run("w0", w, &frame([0, 0, 0], &[1, 2, 3])),
        frame([0, 0, 0], &[0x7f, 2, 3])
    );
    assert_eq!(
        run("w2", w, &frame([2, 0, 0], &[1, 2, 3])),
        frame([2, 0, 0], &[1, 2, 0x7f])
    );
    let past = frame([3, 0, 0], &[1, 2, 3]);
    assert_eq!(run("w3", w, &past), past);
}

#[test]
fn a_field_read_takes_the_indexed_element_and_zero_past_the_stack() {
    let r = "hdr.ix.r = hdr.s[hdr.ix.i].v + 1;";
    assert_eq!(
        run("r1", r, &frame([1, 0, 0], &[5, 6, 7])),
        frame([1, 0, 7], &[5, 6, 7])
    );
    assert_eq!(
        run("r9", r, &frame([9, 0, 0], &[5, 6, 7])),
        frame([9, 0, 1], &[5, 6, 7])
    );
}

#[test]
fn an_index_computed_from_another_element_and_read_write_in_one_statement() {
    // s[s[i & 1].v & 3].v = s[s[i & 1].v & 3].v + 16
    let rw = "hdr.s[hdr.s[hdr.ix.i & 1].v & 3].v = hdr.s[hdr.s[hdr.ix.i & 1].v & 3].v + 16;";
    // s[1].v = 2: element 2 gets 16 more
    assert_eq!(
        run("rw", rw, &frame([1, 0, 0], &[0, 2, 5])),
        frame([1, 0, 0], &[0, 2, 21])
    );
}

#[test]
fn a_negative_signed_index_is_past_the_stack() {
    let w = "hdr.s[hdr.ix.j].v = 8w0x7f; hdr.ix.r = hdr.s[hdr.ix.j].v;";
    let f = frame([0, 0xff, 9], &[1, 2, 3]);
    assert_eq!(run("neg", w, &f), frame([0, 0xff, 0], &[1, 2, 3]));
    assert_eq!(
        run("pos", w, &frame([0, 1, 9], &[1, 2, 3])),
        frame([0, 1, 0x7f], &[1, 0x7f, 3])
    );
}

#[test]
fn validity_set_invalid_and_header_copy_of_an_element() {
    let v = "hdr.ix.r = hdr.s[hdr.ix.i].isValid() ? 8w1 : 8w2; hdr.s[hdr.ix.i].setInvalid();";
    // element 1 valid, then removed from the frame
    assert_eq!(
        run("valid", v, &frame([1, 0, 0], &[1, 2, 3])),
        frame([1, 0, 1], &[1, 3])
    );
    assert_eq!(
        run("valid9", v, &frame([9, 0, 0], &[1, 2, 3])),
        frame([9, 0, 2], &[1, 2, 3])
    );
    let c = "hdr.s[0] = hdr.s[hdr.ix.i]; hdr.s[hdr.ix.i + 1] = hdr.s[0];";
    assert_eq!(
        run("copy", c, &frame([1, 0, 0], &[1, 2, 3])),
        frame([1, 0, 0], &[2, 2, 2])
    );
}

#[test]
fn an_element_field_as_an_inout_argument() {
    let f = "hdr.ix.r = bump(hdr.s[hdr.ix.i].v);";
    assert_eq!(
        run("inout", f, &frame([2, 0, 0], &[1, 2, 3])),
        frame([2, 0, 4], &[1, 2, 4])
    );
}

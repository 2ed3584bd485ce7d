//! Parsers instantiated inside parsers, inlined: the sub-parser extracts into the caller's
//! stack through an inout argument and returns a value through an out argument, the statements
//! after the apply run when it accepts, it can be applied from two states, and its reject is
//! the caller's.

mod common;
use common::*;

const SRC: &str = r#"
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header e_t { bit<8> t; bit<8> v; }
header out_t { bit<8> sum; bit<8> after; }
struct headers { ethernet_t eth; out_t o; e_t[3] s; }
struct metadata { bit<8> m; }
parser Sub(packet_in pkt, inout headers hdr, out bit<8> nxt, in bit<8> add) {
    bit<8> seen;
    state start {
        pkt.extract(hdr.s.next);
        seen = hdr.s.last.v;
        transition select(hdr.s.last.t) { 0xff: reject; default: done; }
    }
    state done {
        nxt = hdr.s.last.t;
        hdr.o.sum = hdr.o.sum + seen + add;
        transition accept;
    }
}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Sub() sub;
    bit<8> next_t;
    state start {
        pkt.extract(hdr.eth);
        hdr.o.setValid();
        hdr.o.sum = 0;
        transition first;
    }
    state first {
        sub.apply(pkt, hdr, next_t, 8w1);
        hdr.o.after = hdr.o.after + 1;
        transition select(next_t) { 2: second; default: accept; }
    }
    state second {
        sub.apply(pkt, hdr, next_t, hdr.o.after);
        hdr.o.after = hdr.o.after + 0x10;
        transition accept;
    }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { if (sm.parser_error != error.NoError) { hdr.o.after = 0xee; } }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;

fn frame(rest: &[u8]) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x12, 0x34];
    f.extend_from_slice(rest);
    f
}

fn run(tag: &str, f: &[u8]) -> Vec<u8> {
    let out = compile_src(tag, SRC).unwrap_or_else(|e| panic!("{tag}: {e}"));
    let mut p = load(&out.json);
    pass(&mut p, f, 1)
        .unwrap_or_else(|d| panic!("{tag}: {d:?}"))
        .2
}

#[test]
fn applied_once_the_rest_of_the_state_runs_after_it() {
    // one element (t 1, v 5): sum = 5 + 1, after = 1
    let f = frame(&[1, 5, 0x99]);
    assert_eq!(run("once", &f), frame(&[6, 1, 1, 5, 0x99]));
}

#[test]
fn applied_from_two_states_each_with_its_arguments() {
    // (t 2, v 5) then (t 1, v 7): sum = (5 + 1) + (7 + after 1), after = 1 + 0x10
    let f = frame(&[2, 5, 1, 7, 0x99]);
    assert_eq!(run("twice", &f), frame(&[14, 0x11, 2, 5, 1, 7, 0x99]));
}

#[test]
fn its_reject_is_the_callers() {
    // t 0xff rejects: the parser error is set, the statements after the apply never ran
    let f = frame(&[0xff, 5, 0x99]);
    assert_eq!(run("reject", &f), frame(&[0, 0xee, 0xff, 5, 0x99]));
}

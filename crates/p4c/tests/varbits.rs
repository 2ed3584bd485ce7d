//! `varbit<W>` fields compiled and run through the switch's pipeline: IPv4 options sized by
//! the IHL the parser looks ahead at, a checksum over the header with its options, a length
//! the header cannot hold (HeaderTooShort, which the program sees in `parser_error`), a local
//! varbit swapping two fields, and `==` of varbits. Frames in, exact frames out.

mod common;
use common::*;

/// Ethernet, then IPv4 with up to 8 bytes of options (`varbit<64>`) when etherType is 0x0800.
/// The checksum is verified and updated over the header with its options; ingress decrements
/// the TTL and sends to port 1, or to port 2 when the parser raised HeaderTooShort.
const IPV4: &str = r#"
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header ihl_only_t { bit<4> version; bit<4> ihl; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> totalLen; bit<16> id; bit<3> flags;
    bit<13> frag; bit<8> ttl; bit<8> protocol; bit<16> csum; bit<32> src; bit<32> dst;
    varbit<64> options;
}
struct headers { ethernet_t eth; ipv4_t ip; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etherType) { 0x0800: ip; default: accept; }
    }
    state ip {
        pkt.extract(hdr.ip,
            (bit<32>)(8 * (4 * (bit<9>)pkt.lookahead<ihl_only_t>().ihl - 20)));
        transition accept;
    }
}
control V(inout headers hdr, inout metadata meta) {
    apply {
        verify_checksum(hdr.ip.isValid(),
            { hdr.ip.version, hdr.ip.ihl, hdr.ip.tos, hdr.ip.totalLen, hdr.ip.id, hdr.ip.flags,
              hdr.ip.frag, hdr.ip.ttl, hdr.ip.protocol, hdr.ip.src, hdr.ip.dst, hdr.ip.options },
            hdr.ip.csum, HashAlgorithm.csum16);
    }
}
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.HeaderTooShort) {
            sm.egress_spec = 2;
        } else if (sm.checksum_error == 1) {
            mark_to_drop(sm);
        } else if (hdr.ip.isValid()) {
            hdr.ip.ttl = hdr.ip.ttl - 1;
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) {
    apply {
        update_checksum(hdr.ip.isValid(),
            { hdr.ip.version, hdr.ip.ihl, hdr.ip.tos, hdr.ip.totalLen, hdr.ip.id, hdr.ip.flags,
              hdr.ip.frag, hdr.ip.ttl, hdr.ip.protocol, hdr.ip.src, hdr.ip.dst, hdr.ip.options },
            hdr.ip.csum, HashAlgorithm.csum16);
    }
}
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.ip); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;

/// Ethernet + an IPv4 header with `options` (its IHL to match, checksum valid), TTL `ttl`,
/// then four payload bytes.
fn ipv4_frame(options: &[u8], ttl: u8) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00];
    let ihl = 5 + options.len() as u8 / 4;
    let mut ip = vec![
        0x40 | ihl,
        0,
        0,
        20 + options.len() as u8 + 4,
        0,
        7,
        0x40,
        0,
        ttl,
        17,
    ];
    ip.extend_from_slice(&[0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
    ip.extend_from_slice(options);
    let c = csum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
    f
}

fn ipv4_program() -> lanes_p4::Program {
    load(
        &compile_src("ipv4", IPV4)
            .unwrap_or_else(|e| panic!("{e}"))
            .json,
    )
}

#[test]
fn ipv4_options_are_carried_and_covered_by_the_checksum() {
    let mut p = ipv4_program();
    for options in [&[][..], &[1, 2, 3, 4], &[0x94, 4, 0, 0, 1, 1, 1, 0]] {
        let (port, _, out) = pass(&mut p, &ipv4_frame(options, 64), 0).unwrap();
        assert_eq!(port, 1);
        assert_eq!(out, ipv4_frame(options, 63), "options {options:?}");
    }
    // a wrong checksum over the options is caught (the options are in the input)
    let mut bad = ipv4_frame(&[1, 2, 3, 4], 64);
    bad[14 + 20] ^= 0xff;
    assert!(pass(&mut p, &bad, 0).is_err());
}

#[test]
fn options_longer_than_the_varbit_raise_header_too_short() {
    let mut p = ipv4_program();
    // IHL 8: 12 bytes of options, the varbit holds 8
    let f = ipv4_frame(&[7; 12], 64);
    let (port, _, out) = pass(&mut p, &f, 0).unwrap();
    assert_eq!(port, 2);
    assert_eq!(
        out, f,
        "the header is not extracted: its bytes go out as payload"
    );
    assert_eq!(p.stats().parser_errors, 1);
}

/// Two varbit fields swapped through a local varbit; port 1 when they were equal.
const SWAP: &str = r#"
#include <core.p4>
#include <v1model.p4>
header len_t { bit<8> bits; }
header opt_t { varbit<32> v; }
struct headers { len_t len; opt_t a; opt_t b; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.len);
        pkt.extract(hdr.a, (bit<32>)hdr.len.bits);
        pkt.extract(hdr.b, 16);
        transition accept;
    }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    varbit<32> tmp;
    apply {
        sm.egress_spec = hdr.a.v == hdr.b.v ? 9w1 : 9w2;
        tmp = hdr.a.v;
        hdr.a.v = hdr.b.v;
        hdr.b.v = tmp;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;

#[test]
fn a_local_varbit_swaps_two_fields_of_different_lengths() {
    let mut p = load(&compile_src("swap", SWAP).unwrap().json);
    let (port, _, out) = pass(&mut p, &[8, 0xaa, 1, 2, 0xff], 0).unwrap();
    assert_eq!((port, out), (2, vec![8, 1, 2, 0xaa, 0xff]));
    let (port, _, out) = pass(&mut p, &[24, 0, 1, 2, 1, 2, 0xff], 0).unwrap();
    assert_eq!(
        (port, out),
        (2, vec![24, 1, 2, 0, 1, 2, 0xff]),
        "same value, other length"
    );
    let (port, _, out) = pass(&mut p, &[16, 1, 2, 1, 2, 0xff], 0).unwrap();
    assert_eq!((port, out), (1, vec![16, 1, 2, 1, 2, 0xff]));
}

#[test]
fn varbit_misuse_is_refused_in_one_line() {
    let prog = |header: &str, parser: &str, ingress: &str| {
        SWAP.replace("header opt_t { varbit<32> v; }", header)
            .replace("pkt.extract(hdr.b, 16);", parser)
            .replace("tmp = hdr.a.v;", ingress)
    };
    let e = one_line_error(
        "ext",
        &prog("header opt_t { varbit<32> v; }", "pkt.extract(hdr.b);", ""),
    );
    assert!(e.ends_with("error: header opt_t has a varbit field: extract it with its length in bits, extract(hdr, len)"), "{e}");
    let e = one_line_error(
        "len",
        &prog(
            "header opt_t { varbit<32> v; }",
            "pkt.extract(hdr.len, 8);",
            "",
        ),
    );
    assert!(
        e.ends_with("error: header len_t has no varbit field: extract it without a length"),
        "{e}"
    );
    let e = one_line_error(
        "last",
        &prog("header opt_t { varbit<32> v; bit<8> x; }", "", ""),
    );
    assert!(
        e.ends_with(
            "error: field 'x' follows varbit field 'v': a varbit must be its header's last field"
        ),
        "{e}"
    );
    let e = one_line_error(
        "lt",
        &prog(
            "header opt_t { varbit<32> v; }",
            "",
            "if (hdr.a.v < tmp) { }",
        ),
    );
    assert!(e.ends_with("error: < cannot compare varbit<32>s"), "{e}");
}

/// A stack of two headers ending in a varbit, extracted with lengths `(first, second)` and,
/// with `third`, once more (one too many: StackOutOfBounds, which sends to port 2).
fn stack_program(third: bool) -> String {
    format!(
        r#"
#include <core.p4>
#include <v1model.p4>
header len_t {{ bit<8> bits; }}
header opt_t {{ bit<8> k; varbit<16> v; }}
struct headers {{ len_t len; opt_t[2] s; }}
struct metadata {{ }}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    state start {{
        pkt.extract(hdr.len);
        pkt.extract(hdr.s.next, (bit<32>)hdr.len.bits);
        pkt.extract(hdr.s.next, 8);
        {}
        transition accept;
    }}
}}
control V(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    apply {{ sm.egress_spec = sm.parser_error == error.StackOutOfBounds ? 9w2 : 9w1; }}
}}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{ apply {{ }} }}
control C(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control D(packet_out pkt, in headers hdr) {{ apply {{ pkt.emit(hdr); }} }}
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#,
        if third {
            "pkt.extract(hdr.s.next, 8);"
        } else {
            ""
        }
    )
}

#[test]
fn stack_elements_take_their_own_lengths() {
    let mut p = load(&compile_src("stack", &stack_program(false)).unwrap().json);
    // element 0: k 0xa0, 16 bits; element 1: k 0xb0, 8 bits; then payload
    let f = [16, 0xa0, 1, 2, 0xb0, 3, 0xee];
    assert_eq!(pass(&mut p, &f, 0).unwrap().2, f);
    let f = [0, 0xa0, 0xb0, 3, 0xee, 0xef];
    assert_eq!(pass(&mut p, &f, 0).unwrap().2, f);
    let mut p = load(&compile_src("stack3", &stack_program(true)).unwrap().json);
    let f = [8, 0xa0, 1, 0xb0, 3, 0xc0, 4, 0xee];
    let (port, _, out) = pass(&mut p, &f, 0).unwrap();
    assert_eq!(
        (port, out),
        (2, f.to_vec()),
        "the third is not extracted: payload"
    );
}

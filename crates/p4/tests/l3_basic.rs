//! l3_basic.json: IPv4 forwarding with TTL decrement and checksum update.

mod common;
use common::*;
use lanes_p4::{MatchKey, Program};

fn program() -> Program {
    let mut p = load("l3_basic.json");
    let t = p.table_id("MyIngress.ipv4_lpm").unwrap();
    let fwd = p.action_id(t, "MyIngress.ipv4_forward").unwrap();
    p.add_entry(
        t,
        vec![MatchKey::Lpm(vec![10, 0, 2, 0], 24)],
        fwd,
        vec![mac([2, 0]).to_vec(), vec![1, 0x00]],
        0,
    )
    .unwrap();
    p.add_entry(
        t,
        vec![MatchKey::Lpm(vec![10, 0, 2, 7], 32)],
        fwd,
        vec![mac([2, 7]).to_vec(), vec![7]],
        0,
    )
    .unwrap();
    p
}

#[test]
fn ttl_decrement_and_checksum() {
    let mut p = program();
    let mut st = p.new_state();
    let mut out = Vec::new();
    for (dst, port, ttl) in [
        ([10, 0, 2, 7], 7u32, 64u8),
        ([10, 0, 2, 9], 256, 1),
        ([10, 0, 2, 8], 256, 0),
    ] {
        let pkt = ipv4_udp([10, 0, 1, 1], dst, ttl, b"payload!");
        let (ig, eg) = p.process(&mut st, &pkt, 1, 0, &mut out);
        assert_eq!((ig.drop, eg.drop, ig.egress_spec), (None, None, port));
        assert_eq!(out.len(), pkt.len());
        // MACs: new destination, old destination as source
        let want_dst = if port == 7 { mac([2, 7]) } else { mac([2, 0]) };
        assert_eq!(&out[0..6], &want_dst);
        assert_eq!(&out[6..12], &pkt[0..6]);
        // TTL wraps at 8 bits like P4 bit<8>
        assert_eq!(out[22], ttl.wrapping_sub(1));
        // checksum over the output header verifies independently
        assert_eq!(internet_checksum(&out[14..34]), 0, "ttl {ttl}");
        let mut zeroed = out[14..34].to_vec();
        zeroed[10] = 0;
        zeroed[11] = 0;
        assert_eq!(
            u16::from_be_bytes([out[24], out[25]]),
            internet_checksum(&zeroed)
        );
        assert_eq!(&out[34..], &pkt[34..]);
    }
    assert_eq!(p.stats().checksum_errors, 0);
}

#[test]
fn bad_checksum_is_flagged_like_bmv2_and_repaired() {
    let mut p = program();
    let mut st = p.new_state();
    let mut out = Vec::new();
    let mut pkt = ipv4_udp([10, 0, 1, 1], [10, 0, 2, 7], 64, b"");
    pkt[24] ^= 0xff;
    let (ig, _) = p.process(&mut st, &pkt, 1, 0, &mut out);
    assert_eq!(ig.drop, None);
    assert_eq!(p.stats().checksum_errors, 1);
    let f = p.field("standard_metadata", "checksum_error").unwrap();
    assert_eq!(st.field(f), 1);
    assert_eq!(internet_checksum(&out[14..34]), 0);
}

#[test]
fn no_route_drops() {
    let mut p = program();
    let mut st = p.new_state();
    let mut out = Vec::new();
    let (ig, eg) = p.process(
        &mut st,
        &ipv4_udp([10, 0, 1, 1], [192, 168, 0, 1], 64, b""),
        1,
        0,
        &mut out,
    );
    assert!(ig.drop.is_some() && eg.drop.is_some());
}

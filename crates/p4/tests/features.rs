//! A synthetic program exercising what tm_basic/l3_basic do not: 128-bit fields (exact, lpm,
//! wide copy), header stacks, lookahead, verify, ternary/range const entries with priorities,
//! __HIT__/__MISS__, registers, counters, meters, hash, _jump_if_zero, exit, remove_header.
//! The program is tests/data/features.json (hand-written in p4c's bmv2 JSON structure).

mod common;
use lanes_p4::{crc16_arc, DropReason, EgressMeta, MatchKey, MeterRates, Program};

fn load() -> Program {
    Program::load(&common::program_text_in_tests("features.json")).unwrap()
}

const SRC: [u8; 16] = [
    0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x11,
];
const DST: [u8; 16] = [
    0x20, 0x01, 0x0d, 0xb8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x22,
];

fn ipv6(
    src_mac_last: u8,
    vlans: usize,
    version: u8,
    hlim: u8,
    src: [u8; 16],
    dst: [u8; 16],
) -> Vec<u8> {
    let mut p = vec![0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, src_mac_last];
    p.extend_from_slice(if vlans > 0 {
        &[0x81, 0x00]
    } else {
        &[0x86, 0xdd]
    });
    for i in 0..vlans {
        // pcp 0, vid 10+i; inner etherType
        let inner: [u8; 2] = if i + 1 < vlans {
            [0x81, 0x00]
        } else {
            [0x86, 0xdd]
        };
        // inner tags start with pcp 4 so the parser's lookahead loops to parse_vlan
        let pcp = if i > 0 { 0x80 } else { 0 };
        p.extend_from_slice(&[pcp, 10 + i as u8, inner[0], inner[1]]);
    }
    p.extend_from_slice(&[version << 4, 0, 0, 0, 0, 4, 17, hlim]);
    p.extend_from_slice(&src);
    p.extend_from_slice(&dst);
    p.extend_from_slice(b"DATA");
    p
}

#[test]
fn wide_exact_hit_then_ternary_by_priority() {
    let mut p = load();
    let t = p.table_id("t_exact").unwrap();
    let a = p.action_id(t, "set_port").unwrap();
    p.add_entry(t, vec![MatchKey::Exact(DST.to_vec())], a, vec![vec![3]], 0)
        .unwrap();
    let mut st = p.new_state();
    let mut out = Vec::new();
    // src MAC ...01 matches the priority-1 entry (bmv2: lower value wins) even with hlim in 10..20
    let (ig, eg) = p.process(&mut st, &ipv6(1, 0, 6, 15, SRC, DST), 1, 0, &mut out);
    assert_eq!((ig.drop, ig.egress_spec), (None, 3));
    assert_eq!(eg.drop, None);
    // tc is 8 bits starting at bit 4
    assert_eq!(((out[14] & 0x0f) << 4) | (out[15] >> 4), 7);
    let (_, _) = p.process(&mut st, &ipv6(2, 0, 6, 15, SRC, DST), 1, 0, &mut out);
    assert_eq!(((out[14] & 0x0f) << 4) | (out[15] >> 4), 3);
    let (_, _) = p.process(&mut st, &ipv6(2, 0, 6, 30, SRC, DST), 1, 0, &mut out);
    assert_eq!(((out[14] & 0x0f) << 4) | (out[15] >> 4), 0);
    assert_eq!(p.counter_read("MyIngress.cnt", 0).unwrap().packets, 3);
    // const table refuses changes
    let tt = p.table_id("t_tern").unwrap();
    let st_a = p.action_id(tt, "set_tc").unwrap();
    assert!(p
        .add_entry(
            tt,
            vec![
                MatchKey::Ternary(vec![], vec![]),
                MatchKey::Range(vec![0], vec![1])
            ],
            st_a,
            vec![vec![1]],
            1
        )
        .is_err());
    assert_eq!(p.entries(tt).unwrap().len(), 2);
}

#[test]
fn wide_lpm_miss_path_with_direct_counter() {
    let mut p = load();
    let t = p.table_id("MyIngress.t_lpm").unwrap();
    let a = p.action_id(t, "MyIngress.set_port").unwrap();
    let h = p
        .add_entry(
            t,
            vec![MatchKey::Lpm(
                SRC[..8].iter().chain([0u8; 8].iter()).copied().collect(),
                64,
            )],
            a,
            vec![vec![4]],
            0,
        )
        .unwrap();
    let mut st = p.new_state();
    let mut out = Vec::new();
    let (ig, _) = p.process(&mut st, &ipv6(1, 0, 6, 64, SRC, DST), 1, 0, &mut out);
    assert_eq!(ig.egress_spec, 4);
    let mut other = SRC;
    other[7] = 1; // outside the /64
    let (ig, _) = p.process(&mut st, &ipv6(1, 0, 6, 64, other, DST), 1, 0, &mut out);
    assert_eq!(ig.egress_spec, 5, "default action do_stuff");
    let e = p.entry(t, lanes_p4::EntryHandle(h.0)).unwrap();
    assert_eq!(e.counter.packets, 1);
    assert_eq!(e.counter.bytes, ipv6(1, 0, 6, 64, SRC, DST).len() as u64);
}

#[test]
fn registers_meters_hash_jumps_exit() {
    let mut p = load();
    p.meter_set(
        "MyIngress.mtr",
        0,
        MeterRates {
            cir: 0.0,
            cbs: 1,
            pir: 0.0,
            pbs: 2,
        },
    )
    .unwrap();
    let mut st = p.new_state();
    let mut out = Vec::new();
    let color = p.field("scalars", "color").unwrap();
    let m16 = p.field("scalars", "m16").unwrap();
    let mut ports = Vec::new();
    let mut colors = Vec::new();
    for _ in 0..3 {
        let pkt = ipv6(1, 0, 6, 64, SRC, DST);
        let (ig, eg) = p.process(&mut st, &pkt, 1, 0, &mut out);
        ports.push(ig.egress_spec);
        colors.push(st.field(color));
        assert_eq!(eg.drop, None);
        // the wide copy: dst := src, and exit stopped before egress_spec = 9
        assert_eq!(&out[14 + 24..14 + 40], &SRC);
        assert_eq!(st.field(m16), u64::from(crc16_arc(&SRC)) % 16);
    }
    // odd register values take egress_spec = 5, even ones jump over it
    assert_eq!(ports, [5, 0, 5]);
    assert_eq!(colors, [lanes_p4::GREEN, lanes_p4::YELLOW, lanes_p4::RED]);
    assert_eq!(p.register_read("MyIngress.reg", 0).unwrap(), 3);
    assert_eq!(p.counter_read("MyIngress.cnt", 1).unwrap().packets, 3);
    p.register_write("MyIngress.reg", 0, 0x1_0000_0001).unwrap();
    assert_eq!(
        p.register_read("MyIngress.reg", 0).unwrap(),
        1,
        "masked to 32 bits"
    );
    assert!(p.register_read("MyIngress.reg", 1).is_err());
}

#[test]
fn stacks_lookahead_verify_and_egress_remove() {
    let mut p = load();
    p.set_parser_error_policy(lanes_p4::ParserErrorPolicy::Drop);
    let mut st = p.new_state();
    let mut out = Vec::new();
    let m8 = p.field("scalars", "m8").unwrap();
    // one tag: parsed into vlan[0], removed in egress
    let pkt = ipv6(1, 1, 6, 64, SRC, DST);
    let (ig, eg) = p.process(&mut st, &pkt, 1, 0, &mut out);
    assert_eq!(ig.drop, None);
    assert_eq!(st.field(m8), 0x60, "set from lookahead");
    assert_eq!(eg.len, pkt.len() - 4);
    assert_eq!(
        &out[14..],
        &{
            let mut want = pkt[18..].to_vec();
            want[24..40].copy_from_slice(&SRC);
            want
        }[..]
    );
    // two tags fit the stack
    let (ig, _) = p.process(&mut st, &ipv6(1, 2, 6, 64, SRC, DST), 1, 0, &mut out);
    assert_eq!(ig.drop, None);
    assert!(st.is_valid(p.header_index("vlan[1]").unwrap()));
    // three do not
    let (ig, _) = p.process(&mut st, &ipv6(1, 3, 6, 64, SRC, DST), 1, 0, &mut out);
    assert_eq!(ig.drop, Some(DropReason::ParserError(3)));
    // verify(version == 6) fails with the program's own error
    let (ig, _) = p.process(&mut st, &ipv6(1, 0, 4, 64, SRC, DST), 1, 0, &mut out);
    assert_eq!(ig.drop, Some(DropReason::ParserError(7)));
    assert_eq!(p.error_name(7), Some("BadVersion"));
    // bmv2's policy (the default): continue with parser_error set
    p.set_parser_error_policy(lanes_p4::ParserErrorPolicy::Continue);
    let (ig, _) = p.process(&mut st, &ipv6(1, 0, 4, 64, SRC, DST), 1, 0, &mut out);
    assert_eq!(ig.drop, None);
    assert_eq!(
        st.field(p.field("standard_metadata", "parser_error").unwrap()),
        7
    );
    let _ = EgressMeta::default();
}

#[test]
fn p4info_lists_externs() {
    let p = load();
    let n = lanes_p4::p4info::P4Names::from_program(&p);
    assert_eq!(n.counters.len(), 1);
    assert_eq!(
        n.direct_counters[0].table.as_deref(),
        Some("MyIngress.t_lpm")
    );
    assert_eq!(
        n.table("MyIngress.t_lpm").unwrap().direct_counter,
        Some(n.direct_counters[0].id)
    );
    assert_eq!(n.registers[0].bitwidth, 32);
    assert_eq!(n.meters[0].size, 1);
    assert_eq!(n.table("MyIngress.t_exact").unwrap().keys[0].bitwidth, 128);
}

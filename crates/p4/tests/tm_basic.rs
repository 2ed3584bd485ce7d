//! tm_basic.json (the thesis program) with the thesis's table entries (appendix 2).

mod common;
use common::*;
use lanes_p4::{DropReason, EgressMeta, MatchKey, Program, TableId};

/// TOPO-1 switch S1: tables 2.1 and 2.2.
fn topo1() -> (Program, TableId, TableId) {
    let mut p = load("tm_basic.json");
    let fwd_t = p.table_id("MyIngress.ipv4_lpm").unwrap();
    let prio_t = p.table_id("src_ip_prio").unwrap();
    let fwd = p.action_id(fwd_t, "MyIngress.ipv4_forward").unwrap();
    let setp = p.action_id(prio_t, "set_priority").unwrap();
    for (h, (prio, rate)) in [
        (7u8, 7_500_000u64),
        (5, 2_500_000),
        (4, 2_500_000),
        (3, 12_500_000),
    ]
    .into_iter()
    .enumerate()
    {
        let h = h as u8 + 1;
        p.add_entry(
            fwd_t,
            vec![MatchKey::Lpm(vec![10, 0, 1, h], 32)],
            fwd,
            vec![mac([1, h]).to_vec(), vec![h]],
            0,
        )
        .unwrap();
        p.add_entry(
            prio_t,
            vec![MatchKey::Lpm(vec![10, 0, 1, h], 32)],
            setp,
            vec![
                vec![prio],
                rate.to_be_bytes().to_vec(),
                7000u64.to_be_bytes().to_vec(),
            ],
            0,
        )
        .unwrap();
    }
    (p, fwd_t, prio_t)
}

#[test]
fn forwards_by_lpm_and_sets_traffic_class() {
    let (mut p, _, _) = topo1();
    let mut st = p.new_state();
    let mut out = Vec::new();
    let pkt = ipv4_udp([10, 0, 1, 1], [10, 0, 1, 2], 64, b"hello thesis");
    let ig = p.ingress(&mut st, &pkt, 1, 1_000);
    assert_eq!(ig.drop, None);
    assert_eq!(ig.egress_spec, 2);
    assert_eq!(ig.priority, 7);
    assert_eq!(ig.queue_rate, Some(7_500_000));
    assert_eq!(ig.queue_quantum, Some(7000));
    assert_eq!(ig.packet_length as usize, pkt.len());
    let eg = p.egress(
        &mut st,
        &pkt,
        &EgressMeta {
            egress_port: 2,
            qid: 7,
            ..Default::default()
        },
        2_000,
        &mut out,
    );
    assert_eq!(eg.drop, None);
    assert_eq!(eg.len, pkt.len());
    // only the destination MAC changes: no TTL or checksum change in this program
    assert_eq!(&out[0..6], &mac([1, 2]));
    assert_eq!(&out[6..], &pkt[6..]);

    // H4 -> H3: priority 3, 12.5 MB/s
    let pkt = ipv4_udp([10, 0, 1, 4], [10, 0, 1, 3], 64, b"x");
    let ig = p.ingress(&mut st, &pkt, 4, 0);
    assert_eq!(
        (ig.egress_spec, ig.priority, ig.queue_rate),
        (3, 4 - 1, Some(12_500_000))
    );
}

#[test]
fn unknown_destination_is_dropped_by_default_action() {
    let (mut p, _, _) = topo1();
    let mut st = p.new_state();
    let mut out = Vec::new();
    let (ig, eg) = p.process(
        &mut st,
        &ipv4_udp([10, 0, 1, 1], [10, 0, 9, 9], 64, b""),
        1,
        0,
        &mut out,
    );
    assert_eq!(ig.drop, Some(DropReason::Ingress));
    assert_eq!(ig.egress_spec, 511);
    assert!(eg.drop.is_some() && out.is_empty());
    assert_eq!(p.stats().ingress_drops, 1);
}

#[test]
fn unknown_source_drop_is_overridden_by_forwarding_as_in_bmv2() {
    // The thesis program applies src_ip_prio (default drop) and then ipv4_lpm, whose
    // ipv4_forward writes egress_spec again: bmv2 forwards such a packet at priority 0, and so
    // do we (mark_to_drop only sets egress_spec to 511).
    let (mut p, _, _) = topo1();
    let mut st = p.new_state();
    let ig = p.ingress(
        &mut st,
        &ipv4_udp([10, 0, 9, 9], [10, 0, 1, 2], 64, b""),
        1,
        0,
    );
    assert_eq!(
        (ig.drop, ig.egress_spec, ig.priority, ig.queue_rate),
        (None, 2, 0, Some(0))
    );
}

#[test]
fn non_ipv4_skips_tables() {
    let (mut p, _, _) = topo1();
    let mut st = p.new_state();
    let mut out = Vec::new();
    let f = arp();
    let (ig, eg) = p.process(&mut st, &f, 3, 0, &mut out);
    // bmv2: egress_spec keeps its reset value 0
    assert_eq!((ig.drop, ig.egress_spec, ig.priority), (None, 0, 0));
    assert_eq!(eg.len, f.len());
    assert_eq!(out, f);
}

#[test]
fn longest_prefix_wins_topo2() {
    let mut p = load("tm_basic.json");
    let t = p.table_id("ipv4_lpm").unwrap();
    let pt = p.table_id("src_ip_prio").unwrap();
    let fwd = p.action_id(t, "ipv4_forward").unwrap();
    let setp = p.action_id(pt, "set_priority").unwrap();
    // TOPO-2 S1: /32 hosts and 10.0.2.0/24; priorities with a 10.0.0.0/8 catch-all
    p.add_entry(
        t,
        vec![MatchKey::Lpm(vec![10, 0, 1, 1], 32)],
        fwd,
        vec![mac([1, 1]).to_vec(), vec![1]],
        0,
    )
    .unwrap();
    p.add_entry(
        t,
        vec![MatchKey::Lpm(vec![10, 0, 2, 0], 24)],
        fwd,
        vec![mac([2, 0]).to_vec(), vec![4]],
        0,
    )
    .unwrap();
    let r = |x: u64| x.to_be_bytes().to_vec();
    p.add_entry(
        pt,
        vec![MatchKey::Lpm(vec![10, 0, 1, 1], 32)],
        setp,
        vec![vec![7], r(3_750_000), r(7000)],
        0,
    )
    .unwrap();
    p.add_entry(
        pt,
        vec![MatchKey::Lpm(vec![10, 0, 0, 0], 8)],
        setp,
        vec![vec![3], r(6_250_000), r(7000)],
        0,
    )
    .unwrap();
    let mut st = p.new_state();
    let ig = p.ingress(
        &mut st,
        &ipv4_udp([10, 0, 2, 5], [10, 0, 1, 1], 9, b""),
        4,
        0,
    );
    assert_eq!(
        (ig.egress_spec, ig.priority, ig.queue_rate),
        (1, 3, Some(6_250_000))
    );
    let ig = p.ingress(
        &mut st,
        &ipv4_udp([10, 0, 1, 1], [10, 0, 2, 6], 9, b""),
        1,
        0,
    );
    assert_eq!(
        (ig.egress_spec, ig.priority, ig.queue_rate),
        (4, 7, Some(3_750_000))
    );
    // entries read back, modify and delete
    let es = p.entries(t).unwrap();
    assert_eq!(es.len(), 2);
    assert_eq!(es[1].keys, vec![MatchKey::Lpm(vec![10, 0, 2, 0], 24)]);
    assert_eq!(es[1].params, vec![mac([2, 0]).to_vec(), vec![0, 4]]);
    p.modify_entry(t, es[1].handle, fwd, vec![mac([2, 0]).to_vec(), vec![5]])
        .unwrap();
    let ig = p.ingress(
        &mut st,
        &ipv4_udp([10, 0, 1, 1], [10, 0, 2, 6], 9, b""),
        1,
        0,
    );
    assert_eq!(ig.egress_spec, 5);
    p.delete_entry(t, es[1].handle).unwrap();
    let ig = p.ingress(
        &mut st,
        &ipv4_udp([10, 0, 1, 1], [10, 0, 2, 6], 9, b""),
        1,
        0,
    );
    assert_eq!(ig.drop, Some(DropReason::Ingress));
    // set_default to NoAction: a miss now leaves egress_spec at 0
    let noact = p.action_id(t, "NoAction").unwrap();
    p.set_default(t, noact, vec![]).unwrap();
    let ig = p.ingress(
        &mut st,
        &ipv4_udp([10, 0, 1, 1], [10, 0, 2, 6], 9, b""),
        1,
        0,
    );
    assert_eq!((ig.drop, ig.egress_spec), (None, 0));
}

#[test]
fn bad_entries_are_refused() {
    let (mut p, t, _) = topo1();
    let fwd = p.action_id(t, "ipv4_forward").unwrap();
    // port does not fit 9 bits
    assert!(p
        .add_entry(
            t,
            vec![MatchKey::Lpm(vec![1, 2, 3, 4], 32)],
            fwd,
            vec![mac([0, 0]).to_vec(), vec![2, 0]],
            0
        )
        .is_err());
    // wrong match kind, wrong parameter count, duplicate
    assert!(p
        .add_entry(
            t,
            vec![MatchKey::Exact(vec![1, 2, 3, 4])],
            fwd,
            vec![mac([0, 0]).to_vec(), vec![1]],
            0
        )
        .is_err());
    assert!(p
        .add_entry(
            t,
            vec![MatchKey::Lpm(vec![1, 2, 3, 4], 32)],
            fwd,
            vec![vec![1]],
            0
        )
        .is_err());
    let e = p
        .add_entry(
            t,
            vec![MatchKey::Lpm(vec![10, 0, 1, 1], 32)],
            fwd,
            vec![mac([0, 0]).to_vec(), vec![1]],
            0,
        )
        .unwrap_err();
    assert_eq!(e.to_string(), "an entry with this key already exists");
    // set_priority is not an action of ipv4_lpm
    let pt = p.table_id("src_ip_prio").unwrap();
    let setp = p.action_id(pt, "set_priority").unwrap();
    assert!(p.action_id(t, "set_priority").is_none());
    assert!(p
        .add_entry(t, vec![MatchKey::Lpm(vec![9, 0, 0, 0], 8)], setp, vec![], 0)
        .is_err());
}

#[test]
fn truncated_frames_are_counted_and_reach_ingress_with_parser_error_set() {
    let (mut p, _, _) = topo1();
    let mut st = p.new_state();
    let mut out = Vec::new();
    let parser_error = p.field("standard_metadata", "parser_error").unwrap();
    let pkt = ipv4_udp([10, 0, 1, 1], [10, 0, 1, 2], 64, b"");
    // 14..33 bytes: Ethernet complete, IPv4 cut; 0..13: Ethernet cut. As in bmv2, ingress
    // runs with parser_error = PacketTooShort and IPv4 invalid: no route, egress_spec stays 0
    for n in 0..34 {
        let ig = p.ingress(&mut st, &pkt[..n], 1, 0);
        assert_eq!((ig.drop, ig.egress_spec), (None, 0), "len {n}");
        assert_eq!(st.field(parser_error), 1, "len {n}");
        assert_eq!(p.error_name(1), Some("PacketTooShort"));
    }
    assert_eq!(p.stats().parser_errors, 34);
    // a complete header with no payload passes, parser_error = NoError
    let (ig, _) = p.process(&mut st, &pkt[..34], 1, 0, &mut out);
    assert_eq!((ig.drop, ig.egress_spec), (None, 2));
    assert_eq!(st.field(parser_error), 0);
    // the drop policy drops them before ingress
    p.set_parser_error_policy(lanes_p4::ParserErrorPolicy::Drop);
    for n in 0..34 {
        let (ig, eg) = p.process(&mut st, &pkt[..n], 1, 0, &mut out);
        assert!(
            matches!(ig.drop, Some(DropReason::ParserError(1))),
            "len {n}: {ig:?}"
        );
        assert!(eg.drop.is_some());
    }
    assert_eq!(p.stats().parser_errors, 68);
}

#[test]
fn state_survives_queueing_between_ingress_and_egress() {
    // two packets in flight, each with its own state, egressed in reverse order
    let (mut p, _, _) = topo1();
    let (mut a, mut b) = (p.new_state(), p.new_state());
    let pa = ipv4_udp([10, 0, 1, 1], [10, 0, 1, 2], 64, b"aaaa");
    let pb = ipv4_udp([10, 0, 1, 3], [10, 0, 1, 4], 64, b"bbbbbbbb");
    let ia = p.ingress(&mut a, &pa, 1, 0);
    let ib = p.ingress(&mut b, &pb, 3, 0);
    let mut out = Vec::new();
    p.egress(
        &mut b,
        &pb,
        &EgressMeta {
            egress_port: ib.egress_spec,
            ..Default::default()
        },
        0,
        &mut out,
    );
    assert_eq!(&out[..6], &mac([1, 4]));
    assert_eq!(&out[out.len() - 8..], b"bbbbbbbb");
    p.egress(
        &mut a,
        &pa,
        &EgressMeta {
            egress_port: ia.egress_spec,
            ..Default::default()
        },
        0,
        &mut out,
    );
    assert_eq!(&out[..6], &mac([1, 2]));
    assert_eq!(&out[out.len() - 4..], b"aaaa");
}

#[test]
fn queue_config_metadata_comes_with_every_packet() {
    let (mut p, _, _) = topo1();
    assert!(p.has_queue_config());
    let mut st = p.new_state();
    for _ in 0..3 {
        let ig = p.ingress(
            &mut st,
            &ipv4_udp([10, 0, 1, 1], [10, 0, 1, 2], 64, b""),
            1,
            0,
        );
        // set_priority leaves queue_burst at 0: the switch keeps the queue's bucket as it is
        assert_eq!(
            (ig.priority, ig.queue_rate, ig.queue_quantum, ig.queue_burst),
            (7, Some(7_500_000), Some(7000), Some(0))
        );
    }
}

#[test]
fn p4info_names_match_the_p4info_file() {
    for (json, info) in [
        ("tm_basic.json", "tm_basic.p4info.txtpb"),
        ("l3_basic.json", "l3_basic.p4info.txtpb"),
        ("nas.json", "nas.p4info.txtpb"),
        ("nas_inband.json", "nas_inband.p4info.txtpb"),
    ] {
        let p = load(json);
        let n = lanes_p4::p4info::P4Names::from_program(&p);
        let text = program_text(info);
        // every preamble name in the file is one the helper derives (the file's ids are p4c's,
        // hashes of the names, the helper's count from 1: P4Runtime maps them by name)
        let mut pairs = Vec::new();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for w in lines.windows(2) {
            if let (Some(_), Some(name)) = (w[0].strip_prefix("id: "), w[1].strip_prefix("name: "))
            {
                pairs.push(name.trim_matches('"').to_string());
            }
        }
        // p4c leaves the tables it synthesises for statements in `apply` (tbl_*), and the
        // actions only they use, out of the P4Info
        let shown: Vec<_> = n
            .tables
            .iter()
            .filter(|t| !t.name.starts_with("tbl_"))
            .collect();
        let mut expected: Vec<String> = shown.iter().map(|t| t.name.clone()).collect();
        expected.extend(
            n.actions
                .iter()
                .filter(|a| shown.iter().any(|t| t.action_ids.contains(&a.id)))
                .map(|a| a.name.clone()),
        );
        // indexed counters and registers
        expected.extend(
            n.counters
                .iter()
                .chain(&n.registers)
                .map(|c| c.name.clone()),
        );
        for e in &expected {
            assert!(pairs.contains(e), "{info}: missing {e:?}");
        }
        let t = n.table("MyIngress.ipv4_lpm").unwrap();
        assert_eq!(t.keys[0].name, "hdr.ipv4.dstAddr");
        assert_eq!(t.keys[0].bitwidth, 32);
        let f = n.action("MyIngress.ipv4_forward").unwrap();
        assert_eq!(
            f.params
                .iter()
                .map(|x| (x.name.as_str(), x.bitwidth))
                .collect::<Vec<_>>(),
            [("dstAddr", 48), ("port", 9)]
        );
        // p4c's per-table copies of drop/NoAction collapse to one P4Info action
        assert_eq!(
            n.actions
                .iter()
                .filter(|a| a.name == "MyIngress.drop")
                .count(),
            1
        );
    }
}

//! Random and truncated packets, and mutated JSON: never a panic; every packet is either
//! dropped or emitted whole.

mod common;

use common::*;
use lanes_p4::{MatchKey, Program};
use proptest::prelude::*;
use serde_json::Value;

fn tm_with_entries() -> Program {
    let mut p = load("tm_basic.json");
    let t = p.table_id("ipv4_lpm").unwrap();
    let pt = p.table_id("src_ip_prio").unwrap();
    let fwd = p.action_id(t, "ipv4_forward").unwrap();
    let setp = p.action_id(pt, "set_priority").unwrap();
    p.add_entry(
        t,
        vec![MatchKey::Lpm(vec![10, 0, 0, 0], 8)],
        fwd,
        vec![vec![0, 0, 0, 0, 1, 1], vec![1]],
        0,
    )
    .unwrap();
    p.add_entry(
        pt,
        vec![MatchKey::Lpm(vec![0, 0, 0, 0], 0)],
        setp,
        vec![vec![3], vec![1], vec![1]],
        0,
    )
    .unwrap();
    p
}

fn programs() -> Vec<Program> {
    let mut l3 = load("l3_basic.json");
    let t = l3.table_id("ipv4_lpm").unwrap();
    let fwd = l3.action_id(t, "ipv4_forward").unwrap();
    l3.add_entry(
        t,
        vec![MatchKey::Lpm(vec![0, 0, 0, 0], 0)],
        fwd,
        vec![vec![1], vec![2]],
        0,
    )
    .unwrap();
    let feat = Program::load(&program_text_in_tests("features.json")).unwrap();
    vec![tm_with_entries(), l3, feat]
}

fn check_all(progs: &mut [Program], pkt: &[u8]) {
    for p in progs.iter_mut() {
        let mut st = p.new_state();
        let mut out = Vec::new();
        let before = p.stats().packets;
        let (ig, eg) = p.process(&mut st, pkt, 1, 0, &mut out);
        assert_eq!(p.stats().packets, before + 1);
        match eg.drop {
            Some(_) => assert!(out.is_empty()),
            None => {
                assert!(ig.drop.is_none());
                assert_eq!(eg.len, out.len());
                // header-rewriting programs keep the length (features may pop a VLAN tag)
                assert!(out.len() + 4 >= pkt.len());
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_bytes(pkt in proptest::collection::vec(any::<u8>(), 0..160)) {
        let mut progs = programs();
        check_all(&mut progs, &pkt);
    }

    #[test]
    fn random_ethertype_and_truncation(et in prop_oneof![Just(0x0800u16), Just(0x86dd), Just(0x8100), any::<u16>()],
                                       body in proptest::collection::vec(any::<u8>(), 0..120),
                                       cut in 0usize..140) {
        let mut pkt = vec![0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 2, 2];
        pkt.extend_from_slice(&et.to_be_bytes());
        pkt.extend_from_slice(&body);
        pkt.truncate(cut.min(pkt.len()));
        let mut progs = programs();
        check_all(&mut progs, &pkt);
    }
}

#[test]
fn every_truncation_of_valid_frames() {
    let mut progs = programs();
    let frames = [
        ipv4_udp([10, 0, 1, 1], [10, 0, 1, 2], 64, b"0123456789"),
        arp(),
    ];
    for f in frames {
        for n in 0..=f.len() {
            check_all(&mut progs, &f[..n]);
        }
    }
    // 14..33-byte IPv4 frames are all parser errors in tm_basic
    assert!(progs[0].stats().parser_errors >= 34);
}

/// All JSON pointers into a value.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match v {
        Value::Object(m) => m.iter().for_each(|(k, x)| {
            pointers(
                x,
                format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                out,
            )
        }),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| pointers(x, format!("{at}/{i}"), out)),
        _ => {}
    }
}

fn replacement(k: u8) -> Value {
    match k % 12 {
        0 => Value::Null,
        1 => serde_json::json!(0),
        2 => serde_json::json!(4096),
        3 => serde_json::json!(-1),
        4 => serde_json::json!("0x"),
        5 => serde_json::json!("ipv4"),
        6 => serde_json::json!([]),
        7 => serde_json::json!({}),
        8 => serde_json::json!(true),
        9 => serde_json::json!("0xffffffffffffffffffffffffffffffffff"),
        10 => serde_json::json!(["ipv4", "ttl"]),
        _ => serde_json::json!(1.5),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn json_node_mutations(which in 0usize..3, pick in any::<u32>(), k in any::<u8>()) {
        let text = match which {
            0 => program_text("tm_basic.json"),
            1 => program_text("l3_basic.json"),
            _ => program_text_in_tests("features.json"),
        };
        let mut v: Value = serde_json::from_str(&text).unwrap();
        let mut ps = Vec::new();
        pointers(&v, String::new(), &mut ps);
        let ptr = &ps[1 + pick as usize % (ps.len() - 1)];
        if let Some(slot) = v.pointer_mut(ptr) {
            *slot = replacement(k);
        }
        if let Ok(mut p) = Program::load(&v.to_string()) {
            let mut st = p.new_state();
            let mut out = Vec::new();
            for f in [ipv4_udp([10, 0, 1, 1], [10, 0, 1, 2], 64, b"x"), arp(), vec![0x86; 80]] {
                p.process(&mut st, &f, 1, 0, &mut out);
            }
        }
    }

    #[test]
    fn json_byte_mutations(pos in any::<u32>(), byte in any::<u8>(), cut in any::<u32>()) {
        let mut b = program_text("l3_basic.json").into_bytes();
        let n = b.len();
        b[pos as usize % n] = byte;
        b.truncate(n - (cut as usize % 64));
        if let Ok(s) = std::str::from_utf8(&b) {
            if let Ok(mut p) = Program::load(s) {
                let mut st = p.new_state();
                let mut out = Vec::new();
                p.process(&mut st, &ipv4_udp([10, 0, 1, 1], [10, 0, 1, 2], 64, b"x"), 1, 0, &mut out);
            }
        }
    }
}

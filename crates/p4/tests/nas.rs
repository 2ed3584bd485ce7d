//! nas.json (network-aware scheduling): per-flow counting on both sides of the traffic manager,
//! per-port bytes at egress, and the deprioritisation action.

mod common;
use common::*;
use lanes_p4::{EgressMeta, MatchKey, Program};

const H1: [u8; 4] = [10, 0, 1, 1];
const H2: [u8; 4] = [10, 0, 1, 2];
const H4: [u8; 4] = [10, 0, 4, 4];

/// One switch: everything to 10.0.0.0/8 leaves on port 3 at priority 3 (quantum 7000); the flow
/// h1 -> h4 is tracked as flow 5, h2 -> h4 is not tracked.
fn switch() -> Program {
    let mut p = load("nas.json");
    let fwd_t = p.table_id("ipv4_lpm").unwrap();
    let fwd = p.action_id(fwd_t, "ipv4_forward").unwrap();
    p.add_entry(
        fwd_t,
        vec![MatchKey::Lpm(vec![10, 0, 0, 0], 8)],
        fwd,
        vec![mac([4, 0]).to_vec(), vec![3]],
        0,
    )
    .unwrap();
    let prio_t = p.table_id("src_ip_prio").unwrap();
    let setp = p.action_id(prio_t, "set_priority").unwrap();
    let params = vec![
        vec![3],
        12_500_000u64.to_be_bytes().to_vec(),
        7000u64.to_be_bytes().to_vec(),
    ];
    p.add_entry(
        prio_t,
        vec![MatchKey::Lpm(vec![10, 0, 0, 0], 8)],
        setp,
        params,
        0,
    )
    .unwrap();
    p
}

fn track(p: &mut Program, src: [u8; 4], dst: [u8; 4], flow: u32) -> lanes_p4::EntryHandle {
    let t = p.table_id("nas_flow").unwrap();
    let a = p.action_id(t, "nas_track").unwrap();
    let keys = vec![MatchKey::Exact(src.to_vec()), MatchKey::Exact(dst.to_vec())];
    p.add_entry(t, keys, a, vec![flow.to_be_bytes().to_vec()], 0)
        .unwrap()
}

/// Ingress, then egress on `port` (as if the TM let the packet through).
fn through(
    p: &mut Program,
    src: [u8; 4],
    dst: [u8; 4],
    len: usize,
    port: u32,
) -> lanes_p4::IngressResult {
    let mut st = p.new_state();
    let pkt = ipv4_udp(src, dst, 64, &vec![0u8; len]);
    let ig = p.ingress(&mut st, &pkt, 1, 0);
    let meta = EgressMeta {
        egress_port: port,
        ..Default::default()
    };
    let mut out = Vec::new();
    let eg = p.egress(&mut st, &pkt, &meta, 0, &mut out);
    assert_eq!(eg.drop, None);
    ig
}

fn count(p: &Program, name: &str, i: u64) -> (u64, u64) {
    let c = p.counter_read(name, i).unwrap();
    (c.packets, c.bytes)
}

#[test]
fn tracked_flow_is_counted_on_both_sides_of_the_tm() {
    let mut p = switch();
    track(&mut p, H1, H4, 5);
    for _ in 0..3 {
        let ig = through(&mut p, H1, H4, 100, 3);
        assert_eq!(
            (ig.egress_spec, ig.priority, ig.queue_quantum),
            (3, 3, Some(7000))
        );
    }
    // ingress alone: a packet the TM would drop is counted in nas_in, not in nas_out
    let mut st = p.new_state();
    p.ingress(&mut st, &ipv4_udp(H1, H4, 64, &[0u8; 100]), 1, 0);
    let frame = 14 + 20 + 8 + 100;
    assert_eq!(count(&p, "MyIngress.nas_in", 5), (4, 4 * frame as u64));
    assert_eq!(count(&p, "MyEgress.nas_out", 5), (3, 3 * frame as u64));
    assert_eq!(count(&p, "MyEgress.nas_port", 3).1, 3 * frame as u64);
}

#[test]
fn untracked_flows_count_in_cell_zero_at_egress_only() {
    let mut p = switch();
    track(&mut p, H1, H4, 5);
    through(&mut p, H2, H4, 10, 3);
    through(&mut p, H2, H4, 10, 3);
    assert_eq!(count(&p, "MyIngress.nas_in", 0).0, 0);
    assert_eq!(count(&p, "MyEgress.nas_out", 0).0, 2);
    assert_eq!(count(&p, "MyEgress.nas_out", 5).0, 0);
    // and a tracked packet after an untracked one does not inherit its index, nor the reverse
    through(&mut p, H1, H4, 10, 3);
    through(&mut p, H2, H4, 10, 3);
    assert_eq!(
        (
            count(&p, "MyEgress.nas_out", 5).0,
            count(&p, "MyEgress.nas_out", 0).0
        ),
        (1, 3)
    );
}

#[test]
fn demoted_flow_goes_to_its_queue_with_its_quantum_and_no_rate() {
    let mut p = switch();
    let h = track(&mut p, H1, H4, 5);
    let t = p.table_id("nas_flow").unwrap();
    let d = p.action_id(t, "nas_demote").unwrap();
    let params = vec![
        5u32.to_be_bytes().to_vec(),
        vec![1],
        450u64.to_be_bytes().to_vec(),
    ];
    p.modify_entry(t, h, d, params).unwrap();
    let ig = through(&mut p, H1, H4, 100, 3);
    assert_eq!(
        (ig.priority, ig.queue_rate, ig.queue_quantum),
        (1, Some(0), Some(450))
    );
    assert_eq!(
        (
            count(&p, "MyIngress.nas_in", 5).0,
            count(&p, "MyEgress.nas_out", 5).0
        ),
        (1, 1)
    );
    // the other flow keeps its class
    let ig = through(&mut p, H2, H4, 100, 3);
    assert_eq!(
        (ig.priority, ig.queue_rate, ig.queue_quantum),
        (3, Some(12_500_000), Some(7000))
    );
}

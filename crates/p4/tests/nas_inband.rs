//! nas_inband.json (network-aware scheduling in the data plane) on two switches in memory: the
//! downstream one finds a marked flow that keeps losing at its port and clones a feedback frame
//! towards the flow's upstream switch; the upstream one, where the flow loses too, demotes it
//! until the hold time has passed; a flow that loses only downstream (no mark) is never reported;
//! the mark is cleared towards a host, with a valid IPv4 checksum.

mod common;
use common::*;
use lanes_p4::{EgressMeta, MatchKey, PacketState, Program};

const H1: [u8; 4] = [10, 0, 1, 1];
const H4: [u8; 4] = [10, 0, 4, 4];
const H5: [u8; 4] = [10, 0, 2, 5];
const MS: u64 = 1_000_000; // ns
const MARK: u8 = 0x04;

/// A switch forwarding 10.0.0.0/8 to `out` at priority 3, watching h1 -> h4 as flow 1 and
/// h5 -> h4 as flow 2, its ports (1 upstream, 3 downstream, 4 a host) configured, hold 3 s.
fn switch(out: u8) -> Program {
    let mut p = load("nas_inband.json");
    let t = p.table_id("ipv4_lpm").unwrap();
    let a = p.action_id(t, "ipv4_forward").unwrap();
    p.add_entry(
        t,
        vec![MatchKey::Lpm(vec![10, 0, 0, 0], 8)],
        a,
        vec![mac([4, 0]).to_vec(), vec![out]],
        0,
    )
    .unwrap();
    let t = p.table_id("src_ip_prio").unwrap();
    let a = p.action_id(t, "set_priority").unwrap();
    let params = vec![
        vec![3],
        7_500_000u64.to_be_bytes().to_vec(),
        7000u64.to_be_bytes().to_vec(),
    ];
    p.add_entry(t, vec![MatchKey::Lpm(vec![10, 0, 0, 0], 8)], a, params, 0)
        .unwrap();
    let t = p.table_id("nas_flow").unwrap();
    let a = p.action_id(t, "nas_watch").unwrap();
    for (src, flow) in [(H1, 1u32), (H5, 2)] {
        let keys = vec![MatchKey::Exact(src.to_vec()), MatchKey::Exact(H4.to_vec())];
        p.add_entry(t, keys, a, vec![flow.to_be_bytes().to_vec()], 0)
            .unwrap();
    }
    let t = p.table_id("nas_port").unwrap();
    let a = p.action_id(t, "nas_port_cfg").unwrap();
    for (port, edge) in [(1u16, 0u8), (3, 0), (4, 1)] {
        // busy from 10 kB per window: every window below carries more
        p.add_entry(
            t,
            vec![MatchKey::Exact(port.to_be_bytes().to_vec())],
            a,
            vec![10_000u32.to_be_bytes().to_vec(), vec![edge]],
            0,
        )
        .unwrap();
    }
    p.register_write("nas_hold", 0, 3_000_000).unwrap();
    p
}

fn packet(src: [u8; 4], diffserv: u8) -> Vec<u8> {
    let mut pkt = ipv4_udp(src, H4, 64, &[0u8; 1000]);
    pkt[15] = diffserv;
    pkt
}

/// A feedback frame for the flow from `src` to H4, as a downstream switch sends it.
fn feedback_frame(src: [u8; 4]) -> Vec<u8> {
    let mut fb = packet(src, 0)[..34].to_vec();
    fb[12..14].copy_from_slice(&[0x88, 0xb5]);
    fb
}

struct Sent {
    out: Vec<u8>,
    feedback: Option<Vec<u8>>,
}

/// Ingress of `n` packets on `port` at `t`, then egress of `pass` of them on `out_port` (the
/// TM dropped the rest); returns the last frame sent and any feedback frame a clone made.
fn window(
    p: &mut Program,
    pkt: &[u8],
    port: u32,
    out_port: u32,
    n: usize,
    pass: usize,
    t: u64,
) -> Sent {
    let mut states: Vec<PacketState> = (0..n).map(|_| p.new_state()).collect();
    for st in &mut states {
        let ig = p.ingress(st, pkt, port, t);
        assert_eq!(ig.drop, None);
    }
    let mut sent = Sent {
        out: vec![],
        feedback: None,
    };
    for st in states.iter_mut().take(pass) {
        let meta = EgressMeta {
            egress_port: out_port,
            ..Default::default()
        };
        p.egress(st, pkt, &meta, t, &mut sent.out);
        if let Some(req) = st.take_clone() {
            let mut copy = p.new_state();
            p.egress_clone(st, &mut copy, req, None);
            let mut fb = vec![];
            let meta = EgressMeta {
                egress_port: req.session,
                ..Default::default()
            };
            p.egress(&mut copy, pkt, &meta, t, &mut fb);
            assert_eq!(
                p.register_read("nas_in_port", 1).unwrap(),
                u64::from(req.session)
            );
            assert!(
                sent.feedback.replace(fb).is_none(),
                "one feedback per window at most"
            );
        }
    }
    sent
}

fn ingress_priority(p: &mut Program, pkt: &[u8], port: u32, t: u64) -> (u8, bool) {
    let mut st = p.new_state();
    let ig = p.ingress(&mut st, pkt, port, t);
    (ig.priority, ig.drop.is_some())
}

#[test]
fn a_marked_flow_that_keeps_losing_is_reported_upstream_and_demoted_there_for_the_hold_time() {
    let mut down = switch(3);
    let victim = packet(H1, MARK);
    // windows of 300 ms, each losing half of the flow at port 3
    for k in 1..=2 {
        let s = window(&mut down, &victim, 1, 3, 40, 20, k * 300 * MS);
        assert!(
            s.feedback.is_none(),
            "window {k}: no feedback before three lossy windows"
        );
    }
    let s = window(&mut down, &victim, 1, 3, 40, 20, 900 * MS);
    let fb = s.feedback.expect("the third lossy window reports the flow");
    assert_eq!(fb.len(), 34, "Ethernet + IPv4 header");
    assert_eq!(&fb[12..14], &[0x88, 0xb5]);
    assert_eq!((&fb[26..30], &fb[30..34]), (&H1[..], &H4[..]));
    assert_eq!(internet_checksum(&fb[14..34]), 0);
    assert_eq!(down.counter_read("nas_events", 3).unwrap().packets, 1);
    // the next window within 250 ms sends nothing more (metered), the one after does
    assert!(window(&mut down, &victim, 1, 3, 40, 20, 1000 * MS)
        .feedback
        .is_none());
    assert!(window(&mut down, &victim, 1, 3, 40, 20, 1200 * MS)
        .feedback
        .is_some());

    // upstream: the flow loses there too (its own windows), so the feedback demotes it
    let mut up = switch(3);
    let fresh = packet(H1, 0);
    for k in 1..=2 {
        window(&mut up, &fresh, 4, 3, 40, 20, k * 300 * MS);
    }
    assert_eq!(ingress_priority(&mut up, &fresh, 4, 700 * MS), (3, false));
    let (_, dropped) = ingress_priority(&mut up, &fb, 3, 700 * MS);
    assert!(dropped, "feedback is used up where it arrives");
    assert_eq!(
        up.counter_read("nas_events", 1).unwrap().packets,
        1,
        "a demotion"
    );
    assert_eq!(
        ingress_priority(&mut up, &fresh, 4, 800 * MS),
        (1, false),
        "demoted"
    );
    // feedback while demoted extends it even when the flow no longer loses (or leaves) here
    let (_, dropped) = ingress_priority(&mut up, &fb, 3, 3_000 * MS);
    assert!(dropped);
    assert_eq!(up.counter_read("nas_events", 1).unwrap().packets, 2);
    assert_eq!(
        ingress_priority(&mut up, &fresh, 4, 5_999 * MS),
        (1, false),
        "for the hold time"
    );
    assert_eq!(
        ingress_priority(&mut up, &fresh, 4, 6_001 * MS),
        (3, false),
        "then restored"
    );
    // now it neither loses nor is demoted here: the feedback is passed on, nothing changes
    ingress_priority(&mut up, &fb, 3, 6_100 * MS);
    assert_eq!(
        up.counter_read("nas_events", 2).unwrap().packets,
        1,
        "passed on"
    );
    assert_eq!(ingress_priority(&mut up, &fresh, 4, 6_200 * MS), (3, false));
}

#[test]
fn a_flow_that_loses_only_downstream_is_not_reported() {
    let mut down = switch(3);
    let unmarked = packet(H5, 0);
    for k in 1..=6 {
        let s = window(&mut down, &unmarked, 4, 3, 40, 20, k * 300 * MS);
        assert!(s.feedback.is_none(), "window {k}");
    }
    assert_eq!(down.counter_read("nas_events", 3).unwrap().packets, 0);
}

#[test]
fn feedback_for_a_flow_that_lost_one_window_here_is_passed_on_not_acted_on() {
    // a burst upstream (one lossy window) while the flow is doomed downstream must not demote it
    let mut up = switch(3);
    let fresh = packet(H1, 0);
    window(&mut up, &fresh, 1, 3, 40, 20, 300 * MS);
    let fb = feedback_frame(H1);
    let (_, dropped) = ingress_priority(&mut up, &fb, 3, 400 * MS);
    assert!(dropped);
    assert_eq!(
        up.counter_read("nas_events", 1).unwrap().packets,
        0,
        "no demotion"
    );
    assert_eq!(
        up.counter_read("nas_events", 2).unwrap().packets,
        1,
        "passed on"
    );
    assert_eq!(ingress_priority(&mut up, &fresh, 1, 500 * MS), (3, false));
}

#[test]
fn feedback_for_a_flow_that_does_not_lose_here_is_passed_on_towards_its_source() {
    let mut mid = switch(3);
    let fresh = packet(H1, 0);
    window(&mut mid, &fresh, 1, 3, 10, 10, 300 * MS); // the flow arrives on port 1, no loss
    let fb = feedback_frame(H1);
    let mut st = mid.new_state();
    let ig = mid.ingress(&mut st, &fb, 3, 400 * MS);
    assert!(ig.drop.is_some());
    let req = st
        .take_clone()
        .expect("an ingress clone towards the source");
    assert_eq!(
        req.session, 1,
        "the session of the port the flow arrives on"
    );
    assert_eq!(mid.counter_read("nas_events", 2).unwrap().packets, 1);
    assert_eq!(
        ingress_priority(&mut mid, &fresh, 1, 500 * MS),
        (3, false),
        "not demoted here"
    );
}

#[test]
fn the_mark_leaves_lossy_flows_and_is_cleared_towards_hosts() {
    let mut sw = switch(3);
    let pkt = packet(H1, 0);
    let s = window(&mut sw, &pkt, 1, 3, 40, 20, 300 * MS);
    assert_eq!(s.out[15] & MARK, 0, "one lossy window is a burst: no mark");
    let s = window(&mut sw, &pkt, 1, 3, 40, 20, 600 * MS);
    assert_eq!(
        s.out[15] & MARK,
        MARK,
        "two windows in a row lost half: the flow leaves marked"
    );
    assert_eq!(internet_checksum(&s.out[14..34]), 0);
    let mut edge = switch(4);
    let s = window(&mut edge, &packet(H1, MARK | 0x20), 1, 4, 10, 10, 300 * MS);
    assert_eq!(
        s.out[15], 0x20,
        "cleared towards a host, the rest of diffserv kept"
    );
    assert_eq!(internet_checksum(&s.out[14..34]), 0);
}

//! Resubmission and recirculation in the packet path: the packet goes through ingress again
//! (as received, or as egress emitted it), keeps only the field list's metadata, leaves once,
//! and a program that never stops asking is cut off after MAX_PASSES passes.
//!
//! The programs (hand-written bmv2 JSON) count passes in `scalars.count`, which their field
//! list keeps, and set `scalars.other`, which it does not; when done they write count, other
//! and instance_type into the Ethernet header.

use lanes_p4::testprog::{assign, field, hex, keyless, load, skeleton};
use lanes_p4::Program;
use lanes_switch::{Dataplane, TmDefaults, TxOutcome, MAX_PASSES};
use serde_json::{json, Value};

fn action(id: u64, name: &str, prims: Vec<Value>) -> Value {
    lanes_p4::testprog::action(id, name, json!([]), prims)
}

fn plus_one(h: &str, f: &str) -> Value {
    json!({"type": "expression", "value": {"op": "+", "left": field(h, f), "right": hex(1)}})
}

fn below(limit: u64) -> Value {
    json!({"type": "expression", "value": {"op": "<",
        "left": field("scalars", "count"), "right": hex(limit)}})
}

/// count, other and instance_type into srcAddr, dstAddr and etherType; out of port 1.
fn report() -> Vec<Value> {
    vec![
        assign(field("standard_metadata", "egress_spec"), hex(1)),
        assign(field("ethernet", "srcAddr"), field("scalars", "count")),
        assign(field("ethernet", "dstAddr"), field("scalars", "other")),
        assign(
            field("ethernet", "etherType"),
            field("standard_metadata", "instance_type"),
        ),
    ]
}

fn base() -> Value {
    let mut j = skeleton(json!([["count", 8, false], ["other", 8, false]]));
    j["field_lists"] = json!([{"id": 1, "name": "fl", "elements": [field("scalars", "count")]}]);
    j
}

/// Ingress resubmits (and marks to drop: the resubmission wins) while count < `limit`.
fn resubmitter(limit: u64) -> Program {
    let mut j = base();
    j["actions"] = json!([
        action(
            0,
            "again",
            vec![
                assign(field("scalars", "count"), plus_one("scalars", "count")),
                assign(field("scalars", "other"), hex(0x55)),
                json!({"op": "resubmit", "parameters": [hex(1)]}),
                json!({"op": "mark_to_drop", "parameters": []}),
            ]
        ),
        action(1, "out", report()),
    ]);
    j["pipelines"][0] = json!({"name": "ingress", "id": 0, "init_table": "more",
        "conditionals": [{"name": "more", "id": 0, "expression": below(limit),
                          "true_next": "t_again", "false_next": "t_out"}],
        "tables": [keyless("t_again", 0, &[(0, "again")], 0), keyless("t_out", 1, &[(1, "out")], 1)]});
    load(&j)
}

/// Ingress sends to port 1; egress adds 1 to etherType and recirculates while count < `limit`,
/// then writes count and instance_type into the MACs.
fn recirculator(limit: u64) -> Program {
    let mut j = base();
    j["actions"] = json!([
        action(
            0,
            "fwd",
            vec![assign(field("standard_metadata", "egress_spec"), hex(1))]
        ),
        action(
            1,
            "again",
            vec![
                assign(field("scalars", "count"), plus_one("scalars", "count")),
                assign(
                    field("ethernet", "etherType"),
                    plus_one("ethernet", "etherType")
                ),
                json!({"op": "recirculate", "parameters": [hex(1)]}),
            ]
        ),
        action(
            2,
            "mark",
            vec![
                assign(field("ethernet", "srcAddr"), field("scalars", "count")),
                assign(
                    field("ethernet", "dstAddr"),
                    field("standard_metadata", "instance_type")
                ),
            ]
        ),
    ]);
    j["pipelines"] = json!([
        {"name": "ingress", "id": 0, "init_table": "ti", "conditionals": [],
         "tables": [keyless("ti", 0, &[(0, "fwd")], 0)]},
        {"name": "egress", "id": 1, "init_table": "more",
         "conditionals": [{"name": "more", "id": 0, "expression": below(limit),
                           "true_next": "t_again", "false_next": "t_mark"}],
         "tables": [keyless("t_again", 1, &[(1, "again")], 1), keyless("t_mark", 2, &[(2, "mark")], 2)]}
    ]);
    load(&j)
}

fn switch(p: Program) -> Dataplane {
    let mut dp = Dataplane::new(TmDefaults {
        rate_bps: 100e6,
        ..TmDefaults::default()
    });
    for port in 1..=2 {
        dp.add_port(port, None).unwrap();
    }
    dp.set_program(p);
    dp
}

/// One 64-byte frame (etherType 0x1000) arrives on port 2; everything sent, as (port, frame).
fn run(dp: &mut Dataplane) -> Vec<(u32, Vec<u8>)> {
    let mut f = vec![0u8; 12];
    f.extend_from_slice(&[0x10, 0x00]);
    f.resize(64, 0xab);
    dp.ingress_frame(&f, f.len(), 2, 0);
    let mut out = vec![];
    let mut now = 0;
    while let Some(t) = dp.next_deadline(now) {
        now = t;
        dp.service(now, &mut |port, f| {
            out.push((port, f.to_vec()));
            TxOutcome::Sent
        });
    }
    out
}

fn mac(b: &[u8]) -> u64 {
    b.iter().fold(0u64, |a, x| (a << 8) | u64::from(*x))
}

#[test]
fn a_resubmitted_packet_keeps_its_field_list_and_leaves_once() {
    let mut dp = switch(resubmitter(3));
    let out = run(&mut dp);
    assert_eq!(out.len(), 1, "{out:?}");
    let (port, f) = &out[0];
    assert_eq!(*port, 1);
    // count kept across three resubmissions; other zeroed each time; instance_type 6
    assert_eq!((mac(&f[6..12]), mac(&f[0..6]), mac(&f[12..14])), (3, 0, 6));
    assert!(f[14..].iter().all(|b| *b == 0xab));
    assert_eq!(
        dp.drops.ingress, 0,
        "the resubmission won over mark_to_drop"
    );
    assert_eq!(dp.port(2).unwrap().counters.rx_pkts, 1);
}

#[test]
fn a_recirculated_packet_reenters_as_egress_emitted_it() {
    let mut dp = switch(recirculator(2));
    let out = run(&mut dp);
    assert_eq!(out.len(), 1, "{out:?}");
    let (port, f) = &out[0];
    assert_eq!(*port, 1);
    // egress changed etherType on both recirculated passes; count kept; instance_type 4
    assert_eq!(
        (mac(&f[6..12]), mac(&f[0..6]), mac(&f[12..14])),
        (2, 4, 0x1002)
    );
    assert_eq!(f.len(), 64);
}

#[test]
fn endless_passes_are_cut_off_and_counted() {
    for p in [resubmitter(255), recirculator(255)] {
        let mut dp = switch(p);
        assert!(run(&mut dp).is_empty());
        assert_eq!(dp.drops.pass_limit, 1);
        assert_eq!(dp.queued_pkts(), 0);
        // the limit is on passes, not packets: the next packet gets its own
        assert!(run(&mut dp).is_empty());
        assert_eq!(dp.drops.pass_limit, 2);
    }
    // exactly MAX_PASSES passes are allowed
    let mut dp = switch(resubmitter(u64::from(MAX_PASSES)));
    assert_eq!(run(&mut dp).len(), 1);
    assert_eq!(dp.drops.pass_limit, 0);
}

/// Ingress sends the first pass to port 9, which the switch does not have, and later passes to
/// port 1; egress recirculates the first pass (if `recirculate`) and marks the others.
fn via_missing_port(recirculate: bool) -> Program {
    let mut j = base();
    j["actions"] = json!([
        action(
            0,
            "far",
            vec![assign(field("standard_metadata", "egress_spec"), hex(9))]
        ),
        action(
            1,
            "fwd",
            vec![assign(field("standard_metadata", "egress_spec"), hex(1))]
        ),
        action(
            2,
            "again",
            vec![
                assign(field("scalars", "count"), plus_one("scalars", "count")),
                assign(
                    field("ethernet", "etherType"),
                    plus_one("ethernet", "etherType")
                ),
                json!({"op": "recirculate", "parameters": [hex(1)]}),
            ]
        ),
        action(
            3,
            "mark",
            vec![
                assign(field("ethernet", "srcAddr"), field("scalars", "count")),
                assign(
                    field("ethernet", "dstAddr"),
                    field("standard_metadata", "instance_type")
                ),
            ]
        ),
    ]);
    let again_below = if recirculate { 1 } else { 0 };
    j["pipelines"] = json!([
        {"name": "ingress", "id": 0, "init_table": "first",
         "conditionals": [{"name": "first", "id": 0, "expression": below(1),
                           "true_next": "t_far", "false_next": "t_fwd"}],
         "tables": [keyless("t_far", 0, &[(0, "far")], 0), keyless("t_fwd", 1, &[(1, "fwd")], 1)]},
        {"name": "egress", "id": 1, "init_table": "more",
         "conditionals": [{"name": "more", "id": 1, "expression": below(again_below),
                           "true_next": "t_again", "false_next": "t_mark"}],
         "tables": [keyless("t_again", 2, &[(2, "again")], 2), keyless("t_mark", 3, &[(3, "mark")], 3)]}
    ]);
    load(&j)
}

#[test]
fn egress_runs_for_a_port_the_switch_does_not_have_and_may_recirculate() {
    // as in bmv2: egress runs on a packet sent to a missing port, and its recirculation comes
    // back through ingress and leaves on a port that exists
    let mut dp = switch(via_missing_port(true));
    let out = run(&mut dp);
    assert_eq!(out.len(), 1, "{out:?}");
    let (port, f) = &out[0];
    assert_eq!(*port, 1);
    assert_eq!(
        (mac(&f[6..12]), mac(&f[0..6]), mac(&f[12..14])),
        (1, 4, 0x1001)
    );
    assert_eq!(dp.drops.unknown_port, 0);
    // without a recirculation the frame has nowhere to go: counted, not sent
    let mut dp = switch(via_missing_port(false));
    assert!(run(&mut dp).is_empty());
    assert_eq!(dp.drops.unknown_port, 1);
    assert_eq!(dp.queued_pkts(), 0);
}

//! Digests: `generate_digest` in ingress records the learn list's field values as they are at
//! the end of ingress, in whole big-endian bytes; egress and unknown learn lists do not.

use lanes_p4::testprog::{action, assign, field, frame, hex, keyless, load, load_err, skeleton};
use lanes_p4::{Digest, EgressMeta, Program};
use serde_json::{json, Value};

fn digest() -> Value {
    json!({"op": "generate_digest", "parameters": [hex(1), hex(1)]})
}

fn program(in_egress: bool) -> Program {
    let mut j = skeleton(json!([["tag", 20, false]]));
    j["learn_lists"] = json!([{"id": 1, "name": "learn_t", "elements": [
        field("ethernet", "srcAddr"), field("standard_metadata", "ingress_port"),
        field("scalars", "tag")]}]);
    let learn = vec![
        digest(),
        // set after the call: the digest carries the value at the end of ingress, as bmv2's
        assign(field("scalars", "tag"), hex(0xabcde)),
    ];
    j["actions"] = json!([
        action(
            0,
            "learn",
            json!([]),
            if in_egress { vec![] } else { learn }
        ),
        action(1, "elearn", json!([]), vec![digest()]),
    ]);
    j["pipelines"] = json!([
        {"name": "ingress", "id": 0, "init_table": "ti", "conditionals": [],
         "tables": [keyless("ti", 0, &[(0, "learn")], 0)]},
        {"name": "egress", "id": 1, "init_table": "te", "conditionals": [],
         "tables": [keyless("te", 1, &[(1, "elearn")], 1)]}
    ]);
    load(&j)
}

#[test]
fn ingress_digests_carry_the_learn_lists_fields() {
    let mut p = program(false);
    assert_eq!(p.learn_lists(), vec![("learn_t", vec![48, 9, 20])]);
    let mut st = p.new_state();
    p.ingress(&mut st, &frame(0x0800, &[0; 46]), 7, 0);
    let mut out: Vec<Digest> = vec![];
    p.take_digests(&mut st, &mut out);
    assert_eq!(
        out,
        vec![Digest {
            list: 0,
            fields: vec![vec![0, 0, 0, 0, 0, 1], vec![0, 7], vec![0x0a, 0xbc, 0xde]],
        }]
    );
    // taken once
    p.take_digests(&mut st, &mut out);
    assert_eq!(out.len(), 1);
}

#[test]
fn egress_does_not_digest() {
    let mut p = program(true);
    let mut st = p.new_state();
    let pkt = frame(0x0800, &[0; 46]);
    p.ingress(&mut st, &pkt, 7, 0);
    let mut out = Vec::new();
    p.egress(&mut st, &pkt, &EgressMeta::default(), 0, &mut out);
    let mut digests: Vec<Digest> = vec![];
    p.take_digests(&mut st, &mut digests);
    assert!(digests.is_empty());
}

#[test]
fn unknown_learn_lists_are_refused() {
    let mut j = skeleton(json!([]));
    j["actions"] = json!([action(
        0,
        "learn",
        json!([]),
        vec![json!({"op": "generate_digest", "parameters": [hex(1), hex(4)]})]
    )]);
    let e = load_err(&j);
    assert!(e.contains("unknown learn list id 4"), "{e}");
}

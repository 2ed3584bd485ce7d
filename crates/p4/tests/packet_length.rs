//! `standard_metadata.packet_length` in egress follows the headers ingress made valid or
//! invalid, as bmv2's packet-length register does (its `add_header` / `remove_header` move it by
//! the header's size); metadata headers and re-validating a valid header change nothing.

use lanes_p4::testprog::{action, assign, field, frame, keyless, load, skeleton};
use lanes_p4::{EgressMeta, Program};
use serde_json::{json, Value};

fn header_op(op: &str, h: &str) -> Value {
    json!({"op": op, "parameters": [{"type": "header", "value": h}]})
}

/// Ingress runs `prims`; egress copies packet_length into `scalars.len`.
fn program(prims: Vec<Value>) -> Program {
    let mut j = skeleton(json!([["len", 32, false]]));
    j["actions"] = json!([
        action(0, "a", json!([]), prims),
        action(
            1,
            "e",
            json!([]),
            vec![assign(
                field("scalars", "len"),
                field("standard_metadata", "packet_length")
            )]
        ),
    ]);
    j["pipelines"] = json!([
        {"name": "ingress", "id": 0, "init_table": "ti", "conditionals": [],
         "tables": [keyless("ti", 0, &[(0, "a")], 0)]},
        {"name": "egress", "id": 1, "init_table": "te", "conditionals": [],
         "tables": [keyless("te", 1, &[(1, "e")], 1)]}
    ]);
    load(&j)
}

fn egress_len(prims: Vec<Value>) -> (u64, usize) {
    let mut p = program(prims);
    let pkt = frame(0x0800, &[0; 46]);
    let mut st = p.new_state();
    let mut out = Vec::new();
    p.ingress(&mut st, &pkt, 1, 0);
    let eg = p.egress(&mut st, &pkt, &EgressMeta::default(), 0, &mut out);
    (st.field(p.field("scalars", "len").unwrap()), eg.len)
}

#[test]
fn egress_sees_the_length_after_ingress_changed_headers() {
    assert_eq!(egress_len(vec![]), (60, 60));
    // removing the 14-byte Ethernet header: 46 bytes, in the field and on the wire
    assert_eq!(
        egress_len(vec![header_op("remove_header", "ethernet")]),
        (46, 46)
    );
    // removed and added back: no change; added when already valid: no change
    let back = vec![
        header_op("remove_header", "ethernet"),
        header_op("add_header", "ethernet"),
        header_op("add_header", "ethernet"),
    ];
    assert_eq!(egress_len(back), (60, 60));
    // metadata headers are not in the packet
    assert_eq!(
        egress_len(vec![header_op("remove_header", "scalars")]).0,
        60
    );
}

use crate::testprog::{frame, load, skeleton};
use crate::MatchKey;
use serde_json::json;

#[test]
fn masked_key_field_matches_field_and_mask() {
    // p4c: `key = { hdr.ethernet.etherType & 0xff : exact; }` gives "mask": "0x00ff"
    let mut j = skeleton(json!([]));
    j["actions"] = json!([
        {"name": "fwd", "id": 0, "runtime_data": [{"name": "port", "bitwidth": 9}],
         "primitives": [{"op": "assign", "parameters": [
             {"type": "field", "value": ["standard_metadata", "egress_spec"]},
             {"type": "runtime_data", "value": 0}]}]},
        {"name": "drop", "id": 1, "runtime_data": [], "primitives": [{"op": "mark_to_drop", "parameters": []}]}
    ]);
    j["pipelines"][0] = json!({"name": "ingress", "id": 0, "init_table": "t", "conditionals": [],
        "tables": [{"name": "t", "id": 0, "type": "simple", "max_size": 16,
            "key": [{"match_type": "exact", "target": ["ethernet", "etherType"], "mask": "0x00ff"}],
            "action_ids": [0, 1], "actions": ["fwd", "drop"],
            "next_tables": {"fwd": null, "drop": null}, "base_default_next": null,
            "default_entry": {"action_id": 1, "action_const": false, "action_data": []}}]});
    let mut p = load(&j);
    let t = p.table_id("t").unwrap();
    let a = p.action_id(t, "fwd").unwrap();
    p.add_entry(
        t,
        vec![MatchKey::Exact(vec![0x00, 0x34])],
        a,
        vec![vec![5]],
        0,
    )
    .unwrap();
    let mut st = p.new_state();
    let mut out = Vec::new();
    for (ethertype, port) in [(0x1234u16, Some(5)), (0xab34, Some(5)), (0x1235, None)] {
        let (ig, eg) = p.process(&mut st, &frame(ethertype, &[]), 1, 0, &mut out);
        match port {
            Some(port) => assert_eq!((eg.drop, ig.egress_spec), (None, port), "{ethertype:#x}"),
            None => assert!(eg.drop.is_some(), "{ethertype:#x}"),
        }
    }
    // the mask must fit the field
    j["pipelines"][0]["tables"][0]["key"][0]["mask"] = json!("0x1ffff");
    let m = crate::testprog::load_err(&j);
    assert!(
        m.contains("key mask 0x1ffff does not fit the 16-bit field"),
        "{m}"
    );
}

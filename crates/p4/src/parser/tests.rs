use crate::testprog::{frame, load, skeleton};
use crate::DropReason;
use serde_json::json;

#[test]
fn default_transition_without_type_as_p4c_writes_it() {
    // p4c: {"value": "default", "mask": null, "next_state": ...} with no "type"
    let mut j = skeleton(json!([]));
    j["parsers"][0]["parse_states"][0]["transition_key"] =
        json!([{"type": "field", "value": ["ethernet", "etherType"]}]);
    j["parsers"][0]["parse_states"][0]["transitions"] = json!([
        {"value": "0x0800", "mask": null, "next_state": null},
        {"value": "default", "mask": null, "next_state": "reject"}
    ]);
    let mut p = load(&j);
    p.set_parser_error_policy(crate::ParserErrorPolicy::Drop);
    let mut st = p.new_state();
    let mut out = Vec::new();
    let (_, eg) = p.process(&mut st, &frame(0x0800, &[]), 1, 0, &mut out);
    assert_eq!(eg.drop, None);
    let (_, eg) = p.process(&mut st, &frame(0x86dd, &[]), 1, 0, &mut out);
    assert_eq!(
        eg.drop,
        Some(DropReason::ParserError(2)),
        "default goes to reject"
    );
}

//! Parser value sets: a select case over a value set matches the values the control plane put
//! in it (masked by the transition's mask), in order with the constant cases; limits and errors.

use lanes_p4::testprog::{frame, load, load_err, skeleton};
use lanes_p4::Program;
use serde_json::json;

/// start: extract ethernet, select etherType: 0x0800 -> accept; value set `pvs` -> extract
/// `t` ({x: 8}); default -> reject (the frame then runs ingress with a parser error).
fn program(mask: Option<&str>) -> Program {
    let mut j = skeleton(json!([]));
    j["header_types"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "t_t", "id": 3, "fields": [["x", 8, false]]}));
    j["headers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "t", "id": 3, "header_type": "t_t", "metadata": false}));
    j["parse_vsets"] =
        json!([{"name": "ParserImpl.pvs", "id": 0, "compressed_bitwidth": 16, "max_size": 2}]);
    let extract =
        |h: &str| json!({"op": "extract", "parameters": [{"type": "regular", "value": h}]});
    j["parsers"][0]["parse_states"] = json!([
        {"name": "start", "id": 0, "parser_ops": [extract("ethernet")],
         "transition_key": [{"type": "field", "value": ["ethernet", "etherType"]}],
         "transitions": [
            {"type": "hexstr", "value": "0x0800", "mask": null, "next_state": null},
            {"type": "parse_vset", "value": "ParserImpl.pvs", "mask": mask, "next_state": "parse_t"},
            {"value": "default", "mask": null, "next_state": "reject"}]},
        {"name": "parse_t", "id": 1, "parser_ops": [extract("t")], "transition_key": [],
         "transitions": [{"value": "default", "mask": null, "next_state": null}]}
    ]);
    load(&j)
}

/// Whether header `t` was extracted (None: the parser rejected the frame).
fn parsed_t(p: &mut Program, ethertype: u16) -> Option<bool> {
    let mut st = p.new_state();
    let errors = p.stats().parser_errors;
    p.ingress(&mut st, &frame(ethertype, &[0x42; 46]), 1, 0);
    let t = p.header_index("t").unwrap();
    (p.stats().parser_errors == errors).then(|| st.is_valid(t))
}

#[test]
fn select_on_a_value_set_follows_its_members() {
    let mut p = program(None);
    assert_eq!(parsed_t(&mut p, 0x88b5), None, "empty set: no match");
    p.value_set_add("pvs", &[0x88, 0xb5], None).unwrap();
    assert_eq!(parsed_t(&mut p, 0x88b5), Some(true));
    assert_eq!(
        parsed_t(&mut p, 0x0800),
        Some(false),
        "the constant case first"
    );
    p.value_set_add("pvs", &[0x88, 0xb6], None).unwrap();
    // the set holds 2 values; adding one already there changes nothing
    p.value_set_add("ParserImpl.pvs", &[0x88, 0xb6], None)
        .unwrap();
    assert!(p.value_set_add("pvs", &[0x88, 0xb7], None).is_err());
    assert_eq!(
        p.value_set_members("pvs").unwrap(),
        vec![
            (vec![0x88, 0xb5], vec![0xff, 0xff]),
            (vec![0x88, 0xb6], vec![0xff, 0xff])
        ]
    );
    p.value_set_remove("pvs", &[0x88, 0xb5], None).unwrap();
    assert_eq!(parsed_t(&mut p, 0x88b5), None);
    assert!(p.value_set_remove("pvs", &[0x88, 0xb5], None).is_err());
    assert!(p.value_set_add("pvs", &[1, 0, 0], None).is_err(), "17 bits");
    assert!(p.value_set_add("nope", &[1], None).is_err());
    p.value_set_clear("pvs").unwrap();
    assert_eq!(parsed_t(&mut p, 0x88b6), None);
    // a member with a mask matches every key it covers
    p.value_set_add("pvs", &[0x88, 0x00], Some(&[0xff, 0x00]))
        .unwrap();
    assert_eq!(parsed_t(&mut p, 0x88ee), Some(true));
}

#[test]
fn the_transition_mask_applies_before_the_lookup() {
    let mut p = program(Some("0xff00"));
    p.value_set_add("pvs", &[0x88, 0x00], None).unwrap();
    assert_eq!(parsed_t(&mut p, 0x8812), Some(true));
    assert_eq!(parsed_t(&mut p, 0x8912), None);
}

#[test]
fn unknown_value_sets_are_refused() {
    let mut j = skeleton(json!([]));
    j["parsers"][0]["parse_states"][0]["transition_key"] =
        json!([{"type": "field", "value": ["ethernet", "etherType"]}]);
    j["parsers"][0]["parse_states"][0]["transitions"] =
        json!([{"type": "parse_vset", "value": "missing", "mask": null, "next_state": null}]);
    let m = load_err(&j);
    assert!(m.contains("unknown value set \"missing\""), "{m}");
}

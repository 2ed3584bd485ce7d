//! Header stack elements chosen at run time (bmv2's `dereference_header_stack` with
//! `access_field`, `valid`, `assign_header`, `add_header`, `remove_header`), as p4c-bm2-ss
//! writes them for `hdr.s[hdr.ix.i]`. An index past the stack reads an invalid header of zeros
//! and writes nothing. Hand-written bmv2 JSON programs, frame in, frame out.

use lanes_p4::testprog::{load, run_action, skeleton};
use lanes_p4::Program;
use serde_json::{json, Value};

const ETH: [u8; 14] = [2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x12, 0x34];

/// ethernet, `ix` (bit<8> i, bit<8> r), then a stack `s` of three headers of one bit<8> `v`,
/// extracted while the stack has room; ingress runs `prims`.
fn program(prims: Value) -> Program {
    let mut j = skeleton(json!([]));
    let types = j["header_types"].as_array_mut().unwrap();
    types.push(json!({"name": "ix_t", "id": 3, "fields": [["i", 8, false], ["r", 8, false]]}));
    types.push(json!({"name": "e_t", "id": 4, "fields": [["v", 8, false]]}));
    let hs = j["headers"].as_array_mut().unwrap();
    hs.push(json!({"name": "ix", "id": 3, "header_type": "ix_t", "metadata": false}));
    for k in 0..3 {
        hs.push(json!({"name": format!("s[{k}]"), "id": 4 + k, "header_type": "e_t", "metadata": false}));
    }
    j["header_stacks"] =
        json!([{"name": "s", "id": 0, "header_type": "e_t", "size": 3, "header_ids": [4, 5, 6]}]);
    let ext = |h: &str| json!({"op": "extract", "parameters": [{"type": "regular", "value": h}]});
    let next = json!({"op": "extract", "parameters": [{"type": "stack", "value": "s"}]});
    j["parsers"][0]["parse_states"] = json!([{"name": "start", "id": 0,
        "parser_ops": [ext("ethernet"), ext("ix"), next.clone(), next.clone(), next],
        "transition_key": [],
        "transitions": [{"type": "default", "value": null, "mask": null, "next_state": null}]}]);
    j["deparsers"][0]["order"] = json!(["ethernet", "ix", "s[0]", "s[1]", "s[2]"]);
    run_action(
        &mut j,
        json!([{"name": "a", "id": 0, "runtime_data": [], "primitives": prims}]),
        0,
    );
    load(&j)
}

/// `s[ix.i]` as p4c writes it.
fn elem() -> Value {
    json!({"type": "expression", "value": {"op": "dereference_header_stack",
        "left": {"type": "header_stack", "value": "s"},
        "right": {"type": "field", "value": ["ix", "i"]}}})
}

/// `s[ix.i].v`.
fn elem_v() -> Value {
    json!({"type": "expression", "value": {"op": "access_field", "left": elem(), "right": 0}})
}

fn assign(dst: Value, src: Value) -> Value {
    json!({"op": "assign", "parameters": [dst, src]})
}

fn hex(v: &str) -> Value {
    json!({"type": "hexstr", "value": v})
}

fn r() -> Value {
    json!({"type": "field", "value": ["ix", "r"]})
}

/// A frame with index `i`, result byte `r` and stack elements `s`.
fn frame(i: u8, r: u8, s: [u8; 3]) -> Vec<u8> {
    let mut f = ETH.to_vec();
    f.extend_from_slice(&[i, r]);
    f.extend_from_slice(&s);
    f.extend_from_slice(&[0xee, 0xff]);
    f
}

fn run(p: &mut Program, f: &[u8]) -> Vec<u8> {
    let mut st = p.new_state();
    let mut out = Vec::new();
    let (ig, _) = p.process(&mut st, f, 1, 0, &mut out);
    assert!(ig.drop.is_none(), "dropped: {:?}", ig.drop);
    out
}

#[test]
fn write_goes_to_the_indexed_element() {
    // s[ix.i].v = 0x7f
    let mut p = program(json!([assign(elem_v(), hex("0x7f"))]));
    for i in 0..3u8 {
        let mut want = [1, 2, 3];
        want[i as usize] = 0x7f;
        assert_eq!(run(&mut p, &frame(i, 0, [1, 2, 3])), frame(i, 0, want));
    }
}

#[test]
fn write_past_the_stack_changes_nothing() {
    let mut p = program(json!([assign(elem_v(), hex("0x7f"))]));
    for i in [3u8, 4, 0xff] {
        let f = frame(i, 0, [1, 2, 3]);
        assert_eq!(run(&mut p, &f), f);
    }
}

#[test]
fn read_takes_the_indexed_element_and_zero_past_the_stack() {
    // ix.r = s[ix.i].v + 1 (masked to 8 bits as p4c does)
    let plus_one = json!({"type": "expression", "value": {"op": "&",
        "left": {"type": "expression", "value": {"op": "+", "left": elem_v(), "right": hex("0x01")}},
        "right": hex("0xff")}});
    let mut p = program(json!([assign(r(), plus_one)]));
    assert_eq!(
        run(&mut p, &frame(0, 0, [9, 20, 30])),
        frame(0, 10, [9, 20, 30])
    );
    assert_eq!(
        run(&mut p, &frame(2, 0, [9, 20, 0xff])),
        frame(2, 0, [9, 20, 0xff])
    );
    assert_eq!(
        run(&mut p, &frame(3, 0, [9, 20, 30])),
        frame(3, 1, [9, 20, 30])
    );
}

#[test]
fn element_validity_and_set_invalid() {
    // ix.r = s[ix.i].isValid() ? 1 : 2; s[ix.i].setInvalid()
    let valid = json!({"type": "expression", "value": {"op": "?", "left": hex("0x01"),
        "right": hex("0x02"),
        "cond": {"type": "expression", "value": {"op": "valid", "left": null, "right": elem()}}}});
    let remove = json!({"op": "remove_header", "parameters": [elem()]});
    let mut p = program(json!([assign(r(), valid), remove]));
    // element 1 is valid, then removed: the frame loses that byte
    let mut want = ETH.to_vec();
    want.extend_from_slice(&[1, 1, 7, 9, 0xee, 0xff]);
    assert_eq!(run(&mut p, &frame(1, 0, [7, 8, 9])), want);
    // past the stack: invalid, and nothing is removed
    assert_eq!(run(&mut p, &frame(5, 0, [7, 8, 9])), frame(5, 2, [7, 8, 9]));
}

#[test]
fn header_copy_from_and_to_an_element() {
    // s[0] = s[ix.i]
    let from = json!({"op": "assign_header", "parameters": [
        {"type": "header", "value": "s[0]"}, elem()]});
    let mut p = program(json!([from]));
    assert_eq!(run(&mut p, &frame(2, 0, [1, 2, 3])), frame(2, 0, [3, 2, 3]));
    // s[ix.i] = s[0]; past the stack nothing happens
    let to = json!({"op": "assign_header", "parameters": [
        elem(), {"type": "header", "value": "s[0]"}]});
    let mut p = program(json!([to]));
    assert_eq!(run(&mut p, &frame(1, 0, [1, 2, 3])), frame(1, 0, [1, 1, 3]));
    assert_eq!(run(&mut p, &frame(3, 0, [1, 2, 3])), frame(3, 0, [1, 2, 3]));
}

#[test]
fn a_signed_negative_index_is_past_the_stack() {
    // ix.i read as int<8>: 0xff is -1
    let signed_elem_v = json!({"type": "expression", "value": {"op": "access_field",
        "left": {"type": "expression", "value": {"op": "dereference_header_stack",
            "left": {"type": "header_stack", "value": "s"},
            "right": {"type": "expression", "value": {"op": "two_comp_mod",
                "left": {"type": "field", "value": ["ix", "i"]}, "right": hex("0x08")}}}},
        "right": 0}});
    let mut p = program(json!([assign(signed_elem_v, hex("0x7f"))]));
    let f = frame(0xff, 0, [1, 2, 3]);
    assert_eq!(run(&mut p, &f), f);
    assert_eq!(
        run(&mut p, &frame(1, 0, [1, 2, 3])),
        frame(1, 0, [1, 0x7f, 3])
    );
}

//! Header unions as bmv2 runs them: extracting or setValid-ing a member invalidates the other
//! members, `valid_union` is true iff one member is valid, `assign_union` copies member by
//! member, and the deparser emits only the valid member. Hand-written bmv2 JSON programs.

use lanes_p4::testprog::{load, load_err, run_action, skeleton};
use lanes_p4::{DropReason, ParserErrorPolicy, Program};
use serde_json::{json, Value};

const ETH: [u8; 12] = [2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2];

/// ethernet, then union `u` of `u.a` (bit<16> x) and `u.b` (bit<32> y) chosen by etherType
/// (0x1111: a, 0x2222: b, 0x3333: a then b), a second union `v` of the same type, and an
/// ingress action made of `prims`; `scalars.uv` is a bit<8> scratch field.
fn program(prims: Value) -> Program {
    let mut j = skeleton(json!([["uv", 8, false]]));
    let types = j["header_types"].as_array_mut().unwrap();
    types.push(json!({"name": "a_t", "id": 3, "fields": [["x", 16, false]]}));
    types.push(json!({"name": "b_t", "id": 4, "fields": [["y", 32, false]]}));
    let hs = j["headers"].as_array_mut().unwrap();
    for (id, name, t) in [
        (3, "u.a", "a_t"),
        (4, "u.b", "b_t"),
        (5, "v.a", "a_t"),
        (6, "v.b", "b_t"),
    ] {
        hs.push(json!({"name": name, "id": id, "header_type": t, "metadata": false}));
    }
    j["header_union_types"] = json!([{"name": "ab_t", "id": 0,
        "headers": [["a", "a_t"], ["b", "b_t"]]}]);
    j["header_unions"] = json!([
        {"name": "u", "id": 0, "union_type": "ab_t", "header_ids": [3, 4]},
        {"name": "v", "id": 1, "union_type": "ab_t", "header_ids": [5, 6]}]);
    let ext = |h: &str| json!({"op": "extract", "parameters": [{"type": "regular", "value": h}]});
    let state = |name: &str, id: u64, ops: Value| {
        json!({"name": name, "id": id, "parser_ops": ops, "transition_key": [],
            "transitions": [{"type": "default", "value": null, "mask": null, "next_state": null}]})
    };
    let go =
        |v: &str, s: &str| json!({"type": "hexstr", "value": v, "mask": null, "next_state": s});
    j["parsers"][0]["parse_states"] = json!([
        {"name": "start", "id": 0, "parser_ops": [ext("ethernet")],
         "transition_key": [{"type": "field", "value": ["ethernet", "etherType"]}],
         "transitions": [go("0x1111", "pa"), go("0x2222", "pb"), go("0x3333", "pab"),
            {"type": "default", "value": null, "mask": null, "next_state": null}]},
        state("pa", 1, json!([ext("u.a")])),
        state("pb", 2, json!([ext("u.b")])),
        state("pab", 3, json!([ext("u.a"), ext("u.b")]))
    ]);
    j["deparsers"][0]["order"] = json!(["ethernet", "u.a", "u.b", "v.a", "v.b"]);
    run_action(
        &mut j,
        json!([{"name": "a", "id": 0, "runtime_data": [], "primitives": prims}]),
        0,
    );
    let mut p = load(&j);
    p.set_parser_error_policy(ParserErrorPolicy::Drop);
    p
}

fn frame(ether_type: u16, rest: &[u8]) -> Vec<u8> {
    let mut f = ETH.to_vec();
    f.extend_from_slice(&ether_type.to_be_bytes());
    f.extend_from_slice(rest);
    f
}

/// `scalars.uv = u.isValid()` as p4c writes it.
fn record_union_valid() -> Value {
    json!({"op": "assign", "parameters": [{"type": "field", "value": ["scalars", "uv"]},
        {"type": "expression", "value": {"type": "expression", "value": {"op": "?",
            "left": {"type": "hexstr", "value": "0x01"}, "right": {"type": "hexstr", "value": "0x00"},
            "cond": {"type": "expression", "value": {"op": "valid_union", "left": null,
                "right": {"type": "header_union", "value": "u"}}}}}}]})
}

fn hdr(op: &str, h: &str) -> Value {
    json!({"op": op, "parameters": [{"type": "header", "value": h}]})
}

fn set_y(v: &str) -> Value {
    json!({"op": "assign", "parameters": [{"type": "field", "value": ["u.b", "y"]},
        {"type": "hexstr", "value": v}]})
}

/// Runs one frame: (output bytes, scalars.uv), or the drop reason.
fn run(p: &mut Program, f: &[u8]) -> Result<(Vec<u8>, u64), DropReason> {
    let mut st = p.new_state();
    let mut out = Vec::new();
    let (ig, eg) = p.process(&mut st, f, 1, 0, &mut out);
    if let Some(d) = ig.drop {
        return Err(d);
    }
    assert_eq!(eg.len, out.len());
    Ok((out, st.field(p.field("scalars", "uv").unwrap())))
}

#[test]
fn parsed_member_is_emitted_and_union_is_valid() {
    let mut p = program(json!([record_union_valid()]));
    let f = frame(0x1111, &[0xaa, 0xbb, 1, 2, 3]);
    assert_eq!(run(&mut p, &f), Ok((f.clone(), 1)));
    let f = frame(0x2222, &[0xde, 0xad, 0xbe, 0xef, 9]);
    assert_eq!(run(&mut p, &f), Ok((f.clone(), 1)));
    let f = frame(0x0800, &[1, 2, 3]);
    assert_eq!(
        run(&mut p, &f),
        Ok((f.clone(), 0)),
        "no member: union invalid"
    );
}

#[test]
fn extracting_a_second_member_invalidates_the_first() {
    let mut p = program(json!([record_union_valid()]));
    // a = aabb, then b = 01020304: only b is emitted, the a bytes are gone
    let f = frame(0x3333, &[0xaa, 0xbb, 1, 2, 3, 4, 7]);
    assert_eq!(run(&mut p, &f), Ok((frame(0x3333, &[1, 2, 3, 4, 7]), 1)));
}

#[test]
fn set_valid_on_a_member_replaces_the_other() {
    let mut p = program(json!([
        hdr("add_header", "u.b"),
        set_y("0xcafef00d"),
        record_union_valid()
    ]));
    let f = frame(0x1111, &[0xaa, 0xbb, 1, 2]);
    assert_eq!(
        run(&mut p, &f),
        Ok((frame(0x1111, &[0xca, 0xfe, 0xf0, 0x0d, 1, 2]), 1))
    );
    // setInvalid of the valid member leaves the union invalid
    let mut p = program(json!([hdr("remove_header", "u.a"), record_union_valid()]));
    assert_eq!(run(&mut p, &f), Ok((frame(0x1111, &[1, 2]), 0)));
}

#[test]
fn assign_union_copies_validity_and_fields() {
    let assign = json!({"op": "assign_union", "parameters": [
        {"type": "header_union", "value": "v"}, {"type": "header_union", "value": "u"}]});
    let mut p = program(json!([assign]));
    let f = frame(0x2222, &[1, 2, 3, 4, 5]);
    assert_eq!(
        run(&mut p, &f),
        Ok((frame(0x2222, &[1, 2, 3, 4, 1, 2, 3, 4, 5]), 0))
    );
    let f = frame(0x0800, &[5]);
    assert_eq!(
        run(&mut p, &f),
        Ok((f.clone(), 0)),
        "an invalid union copies as invalid"
    );
}

#[test]
fn truncated_frames_are_dropped_with_packet_too_short() {
    let mut p = program(json!([record_union_valid()]));
    let full = frame(0x3333, &[0xaa, 0xbb, 1, 2, 3, 4]);
    for n in 0..full.len() {
        match run(&mut p, &full[..n]) {
            Err(DropReason::ParserError(e)) => assert_eq!(p.error_name(e), Some("PacketTooShort")),
            other => panic!("{n} bytes: {other:?}"),
        }
    }
    assert!(run(&mut p, &full).is_ok());
}

#[test]
fn bad_unions_are_refused_in_one_line() {
    let mut j = skeleton(json!([["uv", 8, false]]));
    j["header_unions"] = json!([{"name": "u", "id": 0, "union_type": "t", "header_ids": [9]}]);
    assert!(
        load_err(&j).contains("unknown header id 9"),
        "{}",
        load_err(&j)
    );
    j["header_unions"] = json!([{"name": "u", "id": 0, "union_type": "t", "header_ids": [1]}]);
    assert!(load_err(&j).contains("metadata"), "{}", load_err(&j));
    j["header_unions"] = json!([]);
    j["header_union_stacks"] = json!([{"name": "s", "id": 0, "header_union_ids": [4]}]);
    assert!(
        load_err(&j).contains("unknown header union id 4"),
        "{}",
        load_err(&j)
    );
}

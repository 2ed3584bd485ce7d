//! Variable-length fields (`varbit<W>`) as bmv2 runs them: `extract_VL` takes the length from
//! an expression, the deparser emits the bytes extracted, `assign_VL` copies value and length,
//! `==` compares both, a checksum over the field covers its current bytes, and a length that
//! is not whole bytes, too long for the header or longer than the packet is the parser error
//! bmv2 raises. Hand-written bmv2 JSON programs, frame in and frame out.

use lanes_p4::testprog::{field, hex, load, load_err, run_action, skeleton};
use lanes_p4::{DropReason, ParserErrorPolicy, Program};
use serde_json::{json, Value};

const ETH: [u8; 14] = [2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x12, 0x34];

/// ethernet, then `a` and `b` of type `opt_t { bit<8> len; bit<16> ck; varbit<32> opts; }`
/// (max_length 7), each with `len` bits of options (read by lookahead before the extract, as
/// p4c's programs do); a metadata varbit `tmp` (as p4c makes a
/// local varbit: a `$varbit32` header); an ingress action of `prims`; `checksums` as given.
fn program(prims: Value, checksums: Value, calculations: Value) -> Program {
    let mut j = skeleton(json!([["r", 8, false]]));
    let types = j["header_types"].as_array_mut().unwrap();
    types.push(json!({"name": "opt_t", "id": 3, "max_length": 7,
        "fields": [["len", 8, false], ["ck", 16, false], ["opts", "*"]]}));
    types.push(json!({"name": "$varbit32", "id": 4, "max_length": 4, "fields": [["field", "*"]]}));
    let hs = j["headers"].as_array_mut().unwrap();
    hs.push(json!({"name": "a", "id": 3, "header_type": "opt_t", "metadata": false}));
    hs.push(json!({"name": "b", "id": 4, "header_type": "opt_t", "metadata": false}));
    hs.push(json!({"name": "tmp", "id": 5, "header_type": "$varbit32", "metadata": true}));
    j["errors"] = json!([
        ["NoError", 0],
        ["PacketTooShort", 1],
        ["NoMatch", 2],
        ["StackOutOfBounds", 3],
        ["HeaderTooShort", 4],
        ["ParserTimeout", 5],
        ["ParserInvalidArgument", 6]
    ]);
    let ext_vl = |h: &str| {
        json!({"op": "extract_VL", "parameters": [{"type": "regular", "value": h},
            {"type": "expression", "value": {"type": "expression", "value": {"op": "&",
                "left": {"type": "lookahead", "value": [0, 8]},
                "right": {"type": "hexstr", "value": "0xffffffff"}}}}]})
    };
    j["parsers"][0]["parse_states"] = json!([
        {"name": "start", "id": 0,
         "parser_ops": [{"op": "extract", "parameters": [{"type": "regular", "value": "ethernet"}]},
            {"op": "extract", "parameters": [{"type": "regular", "value": "a"}]}],
         "transition_key": [], "transitions": []}
    ]);
    // `extract` of a varbit header is refused: the state extracts the fixed part with
    // extract_VL, as p4c writes it
    j["parsers"][0]["parse_states"][0]["parser_ops"][1] = ext_vl("a");
    j["parsers"][0]["parse_states"][0]["parser_ops"]
        .as_array_mut()
        .unwrap()
        .push(ext_vl("b"));
    j["parsers"][0]["parse_states"][0]["transitions"] =
        json!([{"type": "default", "value": null, "mask": null, "next_state": null}]);
    j["deparsers"][0]["order"] = json!(["ethernet", "a", "b"]);
    j["calculations"] = calculations;
    j["checksums"] = checksums;
    run_action(
        &mut j,
        json!([{"name": "a", "id": 0, "runtime_data": [], "primitives": prims}]),
        0,
    );
    load(&j)
}

fn set_port(port: u64) -> Value {
    json!({"op": "assign", "parameters": [field("standard_metadata", "egress_spec"), hex(port)]})
}

fn run(p: &mut Program, rest: &[u8]) -> (Option<DropReason>, Vec<u8>, u64) {
    let mut f = ETH.to_vec();
    f.extend_from_slice(rest);
    let mut st = p.new_state();
    let mut out = Vec::new();
    let (_, eg) = p.process(&mut st, &f, 0, 0, &mut out);
    let perr = st.field(p.field("standard_metadata", "parser_error").unwrap());
    (eg.drop, out[ETH.len().min(out.len())..].to_vec(), perr)
}

#[test]
fn extract_and_emit_carry_the_bytes_of_each_length() {
    let mut p = program(json!([set_port(1)]), json!([]), json!([]));
    // a: 0 bits, b: 16 bits, then payload
    let rest = [0x00, 0xaa, 0xbb, 0x10, 0xcc, 0xdd, 0x01, 0x02, 0x99];
    assert_eq!(run(&mut p, &rest), (None, rest.to_vec(), 0));
    // a: 32 bits (the maximum), b: 8 bits
    let rest = [0x20, 0, 0, 1, 2, 3, 4, 0x08, 0, 0, 5, 0x77];
    assert_eq!(run(&mut p, &rest), (None, rest.to_vec(), 0));
}

#[test]
fn bad_lengths_are_the_parser_errors_bmv2_raises() {
    let mut p = program(json!([set_port(1)]), json!([]), json!([]));
    // not whole bytes: ParserInvalidArgument; a is not extracted, the rest is payload
    let rest = [0x0c, 0xaa, 0xbb, 1, 2, 3, 4, 5];
    assert_eq!(run(&mut p, &rest), (None, rest.to_vec(), 6));
    // 40 bits: more than max_length allows: HeaderTooShort
    let rest = [0x28, 0xaa, 0xbb, 1, 2, 3, 4, 5, 6, 7];
    assert_eq!(run(&mut p, &rest), (None, rest.to_vec(), 4));
    // a is fine, b wants 32 bits and 2 are left: PacketTooShort; a stays extracted
    let rest = [0x08, 0xaa, 0xbb, 0x42, 0x20, 0, 0, 1, 2];
    assert_eq!(run(&mut p, &rest), (None, rest.to_vec(), 1));
    // the packet-too-short check comes before the max_length one, as in bmv2
    let rest = [0x28, 0xaa, 0xbb, 1];
    assert_eq!(run(&mut p, &rest), (None, rest.to_vec(), 1));
    let before = p.stats().parser_errors;
    p.set_parser_error_policy(ParserErrorPolicy::Drop);
    let (drop, _, _) = run(&mut p, &[0x28, 0, 0, 1, 2, 3, 4, 5]);
    assert_eq!(drop, Some(DropReason::ParserError(4)));
    assert_eq!(p.stats().parser_errors, before + 1, "counted");
}

#[test]
fn assign_vl_swaps_value_and_length_through_a_metadata_varbit() {
    let vl = |d: &str, s: &str| {
        json!({"op": "assign_VL", "parameters": [field(d, if d == "tmp" { "field" } else { "opts" }),
            field(s, if s == "tmp" { "field" } else { "opts" })]})
    };
    let mut p = program(
        json!([set_port(1), vl("tmp", "a"), vl("a", "b"), vl("b", "tmp")]),
        json!([]),
        json!([]),
    );
    // a: 8 bits 0x11, b: 24 bits 0x223344; the fixed fields stay where they were
    let rest = [
        0x08, 0xa0, 0xa1, 0x11, 0x18, 0xb0, 0xb1, 0x22, 0x33, 0x44, 0xee,
    ];
    let want = [
        0x08, 0xa0, 0xa1, 0x22, 0x33, 0x44, 0x18, 0xb0, 0xb1, 0x11, 0xee,
    ];
    assert_eq!(run(&mut p, &rest), (None, want.to_vec(), 0));
}

#[test]
fn equality_compares_length_and_value() {
    let eq = json!({"op": "assign", "parameters": [field("standard_metadata", "egress_spec"),
        {"type": "expression", "value": {"op": "?",
            "cond": {"type": "expression", "value": {"op": "==",
                "left": field("a", "opts"), "right": field("b", "opts")}},
            "left": hex(1), "right": hex(2)}}]});
    let mut p = program(json!([eq]), json!([]), json!([]));
    let port = |p: &mut Program, rest: &[u8]| {
        let mut f = ETH.to_vec();
        f.extend_from_slice(rest);
        let mut st = p.new_state();
        p.ingress(&mut st, &f, 0, 0).egress_spec
    };
    assert_eq!(port(&mut p, &[0x10, 0, 0, 1, 2, 0x10, 0, 0, 1, 2]), 1);
    assert_eq!(port(&mut p, &[0x10, 0, 0, 1, 2, 0x10, 0, 0, 1, 3]), 2);
    // same value (0x0102), other length
    assert_eq!(port(&mut p, &[0x10, 0, 0, 1, 2, 0x18, 0, 0, 0, 1, 2]), 2);
    assert_eq!(port(&mut p, &[0x00, 0, 0, 0x00, 0, 0]), 1, "both empty");
}

#[test]
fn checksum_covers_the_current_bytes() {
    let calc = json!([{"name": "c", "id": 0, "algo": "csum16",
        "input": [field("a", "len"), field("a", "opts")]}]);
    let ck = json!([{"name": "ck", "id": 0, "target": ["a", "ck"], "type": "generic",
        "calculation": "c", "verify": false, "update": true, "if_cond": null}]);
    let mut p = program(json!([set_port(1)]), ck, calc);
    // 10 12 34 -> 0x1012 + 0x3400 = 0x4412 -> !0x4412 = 0xbbed
    let (_, out, _) = run(&mut p, &[0x10, 0, 0, 0x12, 0x34, 0x00, 0, 0]);
    assert_eq!(out, [0x10, 0xbb, 0xed, 0x12, 0x34, 0x00, 0, 0]);
    // 08 56 -> 0x0856 -> 0xf7a9
    let (_, out, _) = run(&mut p, &[0x08, 0, 0, 0x56, 0x00, 0, 0]);
    assert_eq!(out, [0x08, 0xf7, 0xa9, 0x56, 0x00, 0, 0]);
}

#[test]
fn varbit_constructs_the_pipeline_cannot_run_are_refused_by_name() {
    let mut j = skeleton(json!([]));
    j["header_types"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "v_t", "id": 3, "max_length": 4,
            "fields": [["opts", "*"], ["after", 8, false]]}));
    assert_eq!(
        load_err(&j),
        "header_types[3] \"v_t\": field \"after\" after varbit field \"opts\" not supported"
    );
    let mut j = skeleton(json!([]));
    j["header_types"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "v_t", "id": 3, "fields": [["opts", "*"]]}));
    assert_eq!(
        load_err(&j),
        "header_types[3] \"v_t\": varbit field \"opts\" needs the type's \"max_length\""
    );
    // a varbit header extracted without a length
    j["header_types"][3]["max_length"] = json!(4);
    j["headers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "v", "id": 3, "header_type": "v_t", "metadata": false}));
    j["parsers"][0]["parse_states"][0]["parser_ops"][0]["parameters"][0]["value"] = json!("v");
    assert_eq!(
        load_err(&j),
        "parsers[0] \"parser\" parse_states[0] \"start\" parser_ops[0] \"extract\": \"v\" has a varbit field: extract it with extract_VL"
    );
}

#[test]
fn removing_a_varbit_header_takes_its_current_bytes_off_the_length() {
    let rm = json!({"op": "remove_header", "parameters": [{"type": "header", "value": "a"}]});
    let mut p = program(json!([set_port(1), rm]), json!([]), json!([]));
    let mut f = ETH.to_vec();
    // a: 3 fixed bytes + 16 bits; b: 3 + 0; two payload bytes
    f.extend_from_slice(&[16, 0, 0, 1, 2, 0, 0, 0, 0xee, 0xef]);
    let mut st = p.new_state();
    let mut out = Vec::new();
    p.process(&mut st, &f, 0, 0, &mut out);
    let len = st.field(p.field("standard_metadata", "packet_length").unwrap());
    assert_eq!(len, (f.len() - 5) as u64);
    assert_eq!(out[ETH.len()..], [0, 0, 0, 0xee, 0xef]);
}

//! Unsupported or malformed JSON is refused at load time with one line naming the object.

mod common;
use lanes_p4::Program;
use serde_json::{json, Value};

/// tm_basic as it was written by hand in p4c's form (p4/tm_basic.json is now compiled by lanes
/// p4c, with other action and node numbering): the object paths below point into this one.
fn base() -> Value {
    serde_json::from_str(&common::program_text_in_tests("tm_basic_handwritten.json")).unwrap()
}

fn refuse(v: &Value) -> String {
    let e = Program::load(&v.to_string()).expect_err("should be refused");
    let s = e.to_string();
    assert!(!s.contains('\n'), "one line: {s}");
    s
}

#[test]
fn primitives_with_the_wrong_arity_are_refused() {
    let mut v = base();
    v["actions"][4]["primitives"][0] = json!({"op": "generate_digest", "parameters": []});
    assert_eq!(
        refuse(&v),
        "actions[4] \"MyIngress.ipv4_forward\" primitive 0 \"generate_digest\": expected 2 parameters, got 0"
    );
}

#[test]
fn resubmit_and_recirculate_name_a_known_field_list() {
    for op in ["recirculate", "resubmit"] {
        let mut v = base();
        v["actions"][4]["primitives"][0] =
            json!({"op": op, "parameters": [{"type": "hexstr", "value": "0x7"}]});
        assert_eq!(
            refuse(&v),
            format!("actions[4] \"MyIngress.ipv4_forward\" primitive 0 \"{op}\": unknown field list id 7")
        );
    }
}

#[test]
fn unknown_primitive_and_operator() {
    let mut v = base();
    v["actions"][5]["primitives"][1]["op"] = json!("bit_xor_magic");
    assert_eq!(
        refuse(&v),
        "actions[5] \"MyIngress.set_priority\" primitive 1 \"bit_xor_magic\": primitive \"bit_xor_magic\" not supported"
    );
    let mut v = base();
    v["pipelines"][0]["conditionals"][0]["expression"]["value"]["op"] =
        json!("access_union_header");
    assert_eq!(
        refuse(&v),
        "pipelines[0] \"ingress\" conditionals[0] \"node_2\": expression operator \"access_union_header\" not supported"
    );
}

#[test]
fn unknown_names() {
    let mut v = base();
    v["actions"][4]["primitives"][1]["parameters"][0]["value"] = json!(["ethernet", "nope"]);
    assert!(refuse(&v).ends_with("unknown field \"ethernet.nope\""));
    let mut v = base();
    v["pipelines"][0]["tables"][0]["next_tables"]["MyIngress.drop"] = json!("nowhere");
    assert_eq!(
        refuse(&v),
        "pipelines[0] \"ingress\" tables[0] \"MyIngress.src_ip_prio\": unknown next node \"nowhere\""
    );
    let mut v = base();
    v["parsers"][0]["parse_states"][1]["transitions"][0]["next_state"] = json!("parse_ipv9");
    assert_eq!(
        refuse(&v),
        "parsers[0] \"parser\" parse_states[1] \"parse_ethernet\": unknown parse state \"parse_ipv9\""
    );
    let mut v = base();
    v["pipelines"][0]["tables"][1]["action_ids"] = json!([4, 2, 99]);
    assert!(refuse(&v).ends_with("unknown action id 99"));
}

#[test]
fn unsupported_constructs() {
    let mut v = base();
    v["pipelines"][0]["tables"][1]["type"] = json!("indirect");
    assert_eq!(
        refuse(&v),
        "pipelines[0] \"ingress\" tables[1] \"MyIngress.ipv4_lpm\": missing \"action_profile\""
    );
    v["pipelines"][0]["tables"][1]["type"] = json!("indirect_wx");
    assert_eq!(
        refuse(&v),
        "pipelines[0] \"ingress\" tables[1] \"MyIngress.ipv4_lpm\": table type \"indirect_wx\" not supported"
    );
    let mut v = base();
    v["header_types"][3]["fields"][11] = json!(["options", "*"]);
    assert_eq!(
        refuse(&v),
        "header_types[3] \"ipv4_t\": varbit field \"options\" needs the type's \"max_length\""
    );
    let mut v = base();
    v["parse_vsets"] = json!([{"name": "pvs", "id": 0, "compressed_bitwidth": 0, "max_size": 4}]);
    assert_eq!(
        refuse(&v),
        "parse_vsets[0] \"pvs\": a value set of 0 bits not supported"
    );
    let mut v = base();
    v["header_types"][3]["fields"][11] = json!(["dstAddr", 200, true]);
    assert_eq!(
        refuse(&v),
        "header_types[3] \"ipv4_t\": signed field \"dstAddr\" of 200 bits not supported (2 to 128)"
    );
    let mut v = base();
    v["pipelines"][0]["tables"][1]["key"][0]["match_type"] = json!("selector");
    assert!(refuse(&v).ends_with("match type \"selector\" not supported"));
}

#[test]
fn wide_arithmetic_refused() {
    let mut v = base();
    v["header_types"][3]["fields"][11] = json!(["dstAddr", 256, false]);
    // ipv4_lpm's key is fine at 256 bits; arithmetic on it is not (expressions go to 128)
    assert!(Program::load(&v.to_string()).is_ok());
    v["actions"][5]["primitives"][1]["parameters"][1] = json!({"type": "expression", "value":
        {"op": "+", "left": {"type": "field", "value": ["ipv4", "dstAddr"]}, "right": {"type": "hexstr", "value": "0x1"}}});
    assert_eq!(
        refuse(&v),
        "actions[5] \"MyIngress.set_priority\" primitive 1 \"assign\": arithmetic on a 256-bit field not supported (max 128)"
    );
}

#[test]
fn loops_and_structure() {
    let mut v = base();
    v["pipelines"][0]["tables"][1]["next_tables"]["NoAction"] = json!("node_2");
    assert_eq!(
        refuse(&v),
        "pipelines[0] \"ingress\": control graph has a loop"
    );
    let mut v = base();
    v.as_object_mut().unwrap().remove("actions");
    assert_eq!(refuse(&v), "top level: missing \"actions\"");
    assert!(Program::load("{\"header_types\": [")
        .unwrap_err()
        .to_string()
        .starts_with("JSON: not valid JSON"));
    assert_eq!(
        Program::load("[]").unwrap_err().to_string(),
        "top level: expected a JSON object"
    );
    let mut v = base();
    v["pipelines"][1]["name"] = json!("egress2");
    assert!(refuse(&v).contains("unexpected pipeline \"egress2\""));
    let mut v = base();
    v["actions"][4]["primitives"]
        .as_array_mut()
        .unwrap()
        .insert(
            0,
            json!({"op": "_jump", "parameters": [{"type": "hexstr", "value": "0x0"}]}),
        );
    assert!(refuse(&v).ends_with("jump target 0 not supported"));
}

/// json_bytes fuzz finding: extracting metadata (which need not be whole bytes) read past the
/// frame. The loader refuses it, for a plain extract and for a stack of metadata.
#[test]
fn extracting_metadata_is_refused() {
    let mut v = base();
    v["parsers"][0]["parse_states"][1]["parser_ops"][0]["parameters"][0]["value"] =
        json!("standard_metadata");
    let e = refuse(&v);
    assert!(
        e.ends_with("\"standard_metadata\" is metadata, not a packet header"),
        "{e}"
    );
    let mut v = base();
    v["header_stacks"] = json!([{"name": "s", "id": 0, "header_type": "standard_metadata",
        "size": 1, "header_ids": [1]}]);
    let e = refuse(&v);
    assert!(e.contains("is metadata, not a packet header"), "{e}");
}

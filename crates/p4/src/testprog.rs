//! Hand-made minimal v1model programs for tests (this crate's and the switch's): a skeleton
//! (Ethernet parser, empty pipelines) whose top-level keys a test replaces to reproduce one
//! construct, and builders for the JSON pieces p4c emits.

use crate::Program;
use serde_json::{json, Value};

/// The skeleton: headers `scalars` (fields from `scalars`), `standard_metadata`, `ethernet`.
pub fn skeleton(scalars: Value) -> Value {
    json!({
        "header_types": [
            {"name": "scalars_0", "id": 0, "fields": scalars},
            {"name": "standard_metadata", "id": 1, "fields": [
                ["ingress_port", 9, false], ["egress_spec", 9, false], ["egress_port", 9, false],
                ["instance_type", 32, false], ["packet_length", 32, false],
                ["mcast_grp", 16, false], ["checksum_error", 1, false], ["parser_error", 32, false],
                ["priority", 3, false], ["ingress_global_timestamp", 48, false],
                ["_padding", 1, false]]},
            {"name": "ethernet_t", "id": 2, "fields": [
                ["dstAddr", 48, false], ["srcAddr", 48, false], ["etherType", 16, false]]}
        ],
        "headers": [
            {"name": "scalars", "id": 0, "header_type": "scalars_0", "metadata": true},
            {"name": "standard_metadata", "id": 1, "header_type": "standard_metadata", "metadata": true},
            {"name": "ethernet", "id": 2, "header_type": "ethernet_t", "metadata": false}
        ],
        "errors": [["NoError", 0], ["PacketTooShort", 1], ["NoMatch", 2]],
        "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
            {"name": "start", "id": 0,
             "parser_ops": [{"op": "extract", "parameters": [{"type": "regular", "value": "ethernet"}]}],
             "transition_key": [],
             "transitions": [{"type": "default", "value": null, "mask": null, "next_state": null}]}
        ]}],
        "deparsers": [{"name": "deparser", "id": 0, "order": ["ethernet"]}],
        "actions": [],
        "pipelines": [
            {"name": "ingress", "id": 0, "init_table": null, "tables": [], "conditionals": []},
            {"name": "egress", "id": 1, "init_table": null, "tables": [], "conditionals": []}
        ]
    })
}

/// An ingress pipeline of one keyless table that runs action `id` (given in `actions`).
pub fn run_action(j: &mut Value, actions: Value, id: u64) {
    j["actions"] = actions;
    j["pipelines"][0] = json!({"name": "ingress", "id": 0, "init_table": "t", "conditionals": [],
        "tables": [{"name": "t", "id": 0, "key": [], "type": "simple", "max_size": 1,
            "action_ids": [id], "actions": ["a"], "next_tables": {"a": null},
            "base_default_next": null,
            "default_entry": {"action_id": id, "action_const": true, "action_data": []}}]});
}

/// Loads a program, panicking with the loader's message.
pub fn load(j: &Value) -> Program {
    Program::load(&j.to_string()).unwrap_or_else(|e| panic!("{e}"))
}

/// The loader's message for a program it refuses.
pub fn load_err(j: &Value) -> String {
    Program::load(&j.to_string()).unwrap_err().to_string()
}

/// A 14-byte Ethernet header with this ethertype, then `rest`.
pub fn frame(ethertype: u16, rest: &[u8]) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1];
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(rest);
    f
}

/// A field operand.
pub fn field(header: &str, name: &str) -> Value {
    json!({"type": "field", "value": [header, name]})
}

/// A constant operand.
pub fn hex(v: u64) -> Value {
    json!({"type": "hexstr", "value": format!("{v:#x}")})
}

/// The `assign` primitive.
pub fn assign(dst: Value, src: Value) -> Value {
    json!({"op": "assign", "parameters": [dst, src]})
}

/// An action: its runtime data (parameters) and primitives.
pub fn action(id: u64, name: &str, params: Value, prims: Vec<Value>) -> Value {
    json!({"name": name, "id": id, "runtime_data": params, "primitives": prims})
}

/// A keyless table offering `actions` (id, name), `default` its default action; every action
/// ends the pipeline.
pub fn keyless(name: &str, id: u64, actions: &[(u64, &str)], default: u64) -> Value {
    let ids: Vec<u64> = actions.iter().map(|a| a.0).collect();
    let names: Vec<&str> = actions.iter().map(|a| a.1).collect();
    let next: serde_json::Map<String, Value> =
        names.iter().map(|n| (n.to_string(), Value::Null)).collect();
    json!({"name": name, "id": id, "key": [], "type": "simple", "max_size": 1,
           "action_ids": ids, "actions": names, "next_tables": next, "base_default_next": null,
           "default_entry": {"action_id": default, "action_const": false, "action_data": []}})
}

/// Ingress table `t` (exact on etherType) implemented by action profile `ingress.ap` (8
/// members; with a selector: identity over ethernet.srcAddr), actions `fwd(port)` and `drop`
/// (the default).
pub fn profile_program(with_selector: bool) -> Value {
    let mut j = skeleton(json!([]));
    j["actions"] = json!([
        action(
            0,
            "fwd",
            json!([{"name": "port", "bitwidth": 9}]),
            vec![assign(
                field("standard_metadata", "egress_spec"),
                json!({"type": "runtime_data", "value": 0})
            )]
        ),
        action(
            1,
            "drop",
            json!([]),
            vec![json!({"op": "mark_to_drop", "parameters": []})]
        ),
    ]);
    let mut prof = json!({"name": "ingress.ap", "id": 0, "max_size": 8});
    if with_selector {
        prof["selector"] = json!({"algo": "identity", "input": [field("ethernet", "srcAddr")]});
    }
    j["pipelines"][0] = json!({"name": "ingress", "id": 0, "init_table": "t",
        "conditionals": [], "action_profiles": [prof],
        "tables": [{"name": "t", "id": 0, "type": if with_selector { "indirect_ws" } else { "indirect" },
            "action_profile": "ingress.ap", "max_size": 16,
            "key": [{"match_type": "exact", "target": ["ethernet", "etherType"]}],
            "action_ids": [0, 1], "actions": ["fwd", "drop"],
            "next_tables": {"fwd": null, "drop": null}, "base_default_next": null,
            "default_entry": {"action_id": 1, "action_const": false, "action_data": []}}]});
    j
}

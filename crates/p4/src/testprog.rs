//! Hand-made minimal v1model programs for unit tests: a skeleton (Ethernet parser, empty
//! pipelines) whose top-level keys a test replaces to reproduce one construct.

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
                ["priority", 3, false], ["_padding", 1, false]]},
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

pub fn load(j: &Value) -> Program {
    Program::load(&j.to_string()).unwrap_or_else(|e| panic!("{e}"))
}

#[allow(dead_code)]
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

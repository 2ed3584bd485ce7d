//! The program described for control planes: one JSON document of names, indices, widths and
//! match kinds, built once per program and read by the P4Runtime and Thrift servers.

use serde_json::{json, Value};

use super::p4info::{ExternInfo, P4Names};
use crate::program::Program;

fn externs_json(list: &[ExternInfo]) -> Value {
    Value::Array(
        list.iter()
            .map(|x| json!({"name": x.name, "size": x.size, "bitwidth": x.bitwidth, "table": x.table}))
            .collect(),
    )
}

/// Each action profile: name, index, JSON id, size, selector, and the actions its members may
/// run (name, the switch's index).
fn profiles_json(p: &Program) -> Vec<Value> {
    p.profile_names()
        .iter()
        .filter_map(|name| {
            let id = p.profile_id(name)?;
            let info = p.profile_info(id).ok()?;
            let actions: Vec<Value> = p
                .profile_action_names(id)
                .into_iter()
                .map(|(a, n)| json!({"name": n, "index": a.0}))
                .collect();
            Some(json!({"name": info.name, "index": id.0, "id": info.id,
                        "max_size": info.max_size, "with_selector": info.with_selector,
                        "actions": actions}))
        })
        .collect()
}

impl Program {
    /// The program as its control planes see it (P4Runtime server, Thrift server): tables with
    /// their keys, actions, defaults, direct resources and profiles; actions with their
    /// parameters; action profiles, value sets, counters, meters, registers and learn lists.
    /// Indices are the program's own (TableId, ActionId, ProfileId).
    pub fn describe(&self) -> Value {
        describe(self)
    }
}

fn describe(p: &Program) -> Value {
    let n = P4Names::from_program(p);
    let tables: Vec<Value> = n
        .tables
        .iter()
        .map(|t| {
            let actions: Vec<Value> = n
                .actions
                .iter()
                .filter(|a| t.action_ids.contains(&a.id))
                .map(|a| {
                    let inst = p.action_id(t.table, &a.name).map(|x| x.0);
                    json!({"name": a.name, "index": inst})
                })
                .collect();
            let default = p.default_entry(t.table).ok().flatten();
            json!({
                "name": t.name,
                "index": t.table.0,
                "keys": t.keys.iter().map(|k| json!({"name": k.name, "bitwidth": k.bitwidth,
                         "match_kind": k.match_kind.name()})).collect::<Vec<_>>(),
                "actions": actions,
                "size": t.size,
                "const_entries": t.const_entries,
                "default_const": p.default_is_const(t.table).unwrap_or(false),
                "default": default.map(|(a, params)| json!({"index": a.0, "params": params})),
                "direct_counter": n.direct_counters.iter().find(|c| Some(c.id) == t.direct_counter)
                    .map(|c| c.name.clone()),
                "direct_meter": n.direct_meters.iter().find(|c| Some(c.id) == t.direct_meter)
                    .map(|c| c.name.clone()),
                "profile": p.table_profile(t.table).ok().flatten().map(|x| x.0),
                "support_timeout": p.supports_timeout(t.table).unwrap_or(false),
            })
        })
        .collect();
    let actions: Vec<Value> = n
        .actions
        .iter()
        .map(|a| {
            json!({"name": a.name, "params": a.params.iter()
                   .map(|q| json!({"name": q.name, "bitwidth": q.bitwidth})).collect::<Vec<_>>()})
        })
        .collect();
    let meter_units: Vec<Value> = n
        .meters
        .iter()
        .chain(&n.direct_meters)
        .map(|m| json!([m.name, p.meter_counts_packets(&m.name).unwrap_or(false)]))
        .collect();
    json!({
        "tables": tables,
        "actions": actions,
        "profiles": profiles_json(p),
        "value_sets": p.value_set_names().iter().filter_map(|n| {
            let (width, max_size) = p.value_set_info(n).ok()?;
            Some(json!({"name": n, "width": width, "max_size": max_size}))
        }).collect::<Vec<_>>(),
        "counters": externs_json(&n.counters),
        "direct_counters": externs_json(&n.direct_counters),
        "meters": externs_json(&n.meters),
        "direct_meters": externs_json(&n.direct_meters),
        "registers": externs_json(&n.registers),
        "meter_packets": meter_units,
        "learn_lists": p.learn_lists().iter()
            .map(|(name, widths)| json!({"name": name, "widths": widths}))
            .collect::<Vec<_>>(),
    })
}

//! bmv2 JSON for header unions: `header_union_types` (member name and header type) and
//! `header_unions` (the member header instances by id), as p4c's bmv2 backend writes them.

use crate::env::{Env, Ty};
use crate::lower::Lowerer;
use serde_json::{json, Value};

/// The union types that have an instance, in first-use order.
pub fn union_types(env: &Env, l: &Lowerer) -> Vec<Value> {
    let mut names: Vec<&str> = Vec::new();
    for u in &l.unions {
        if !names.contains(&u.utype.as_str()) {
            names.push(&u.utype);
        }
    }
    names
        .iter()
        .enumerate()
        .map(|(id, n)| {
            let members: Vec<Value> = env.structs[*n]
                .iter()
                .filter_map(|f| match &f.ty {
                    Ty::Header(h) => Some(json!([f.name, h])),
                    _ => None,
                })
                .collect();
            json!({"name": n, "id": id, "headers": members})
        })
        .collect()
}

/// The union instances; a member's id is its header instance index + 2 (after `scalars` and
/// `standard_metadata`), as in the `headers` list.
pub fn unions(l: &Lowerer) -> Vec<Value> {
    l.unions
        .iter()
        .enumerate()
        .map(|(id, u)| {
            let ids: Vec<usize> = u
                .members
                .iter()
                .filter_map(|m| l.header_insts.iter().position(|h| &h.name == m))
                .map(|p| p + 2)
                .collect();
            json!({"name": u.name, "id": id, "union_type": u.utype, "header_ids": ids, "pi_omit": true})
        })
        .collect()
}

//! The header unions and union stacks of the layout, read from the JSON (`header_unions`,
//! `header_union_stacks`). What they do to a packet is in crate::union and crate::union_stack.

use super::Layout;
use crate::json::{self, err, label, R};
use serde_json::Value;

#[derive(Debug, Clone)]
pub struct UnionInfo {
    pub name: String,
    /// Member headers, in declaration order.
    pub members: Vec<u32>,
}

/// Reads `header_unions` (each names its members by header id) into the layout, then
/// `header_union_stacks`.
pub fn load(root: &Value, l: &mut Layout) -> R<()> {
    let mut by_id = std::collections::HashMap::new();
    l.union_of = vec![None; l.headers.len()];
    for (i, u) in json::arr_or_empty(root, "header_unions", "top level")?
        .iter()
        .enumerate()
    {
        let ctx = label("header_unions", i, u);
        let name = json::str_(u, "name", &ctx)?;
        let idx = l.unions.len() as u32;
        if let Some(id) = u.get("id").and_then(Value::as_u64) {
            by_id.insert(id, idx);
        }
        let mut members = Vec::new();
        for id in json::arr(u, "header_ids", &ctx)? {
            let id = json::as_u64(id, &ctx)?;
            let Some(&h) = l.by_id.get(&id) else {
                return err(&ctx, format!("unknown header id {id}"));
            };
            if l.headers[h as usize].metadata {
                return err(
                    &ctx,
                    format!("header id {id} is metadata, not a packet header"),
                );
            }
            if l.union_of[h as usize].replace(idx).is_some() {
                return err(&ctx, format!("header id {id} is in two unions"));
            }
            members.push(h);
        }
        if l.union_by_name.insert(name.to_string(), idx).is_some() {
            return err(&ctx, "duplicate header union name");
        }
        l.unions.push(UnionInfo {
            name: name.to_string(),
            members,
        });
    }
    load_stacks(root, l, &by_id)
}

#[derive(Debug, Clone)]
pub struct UnionStackInfo {
    /// The element unions, in order.
    pub unions: Vec<u32>,
}

/// Reads `header_union_stacks` (each names its element unions by union id) into the layout.
fn load_stacks(
    root: &Value,
    l: &mut Layout,
    union_by_id: &std::collections::HashMap<u64, u32>,
) -> R<()> {
    for (i, s) in json::arr_or_empty(root, "header_union_stacks", "top level")?
        .iter()
        .enumerate()
    {
        let ctx = label("header_union_stacks", i, s);
        let name = json::str_(s, "name", &ctx)?;
        let mut unions = Vec::new();
        for id in json::arr(s, "header_union_ids", &ctx)? {
            let id = json::as_u64(id, &ctx)?;
            match union_by_id.get(&id) {
                Some(u) => unions.push(*u),
                None => return err(&ctx, format!("unknown header union id {id}")),
            }
        }
        if unions.is_empty() || unions.len() > 255 {
            return err(
                &ctx,
                format!(
                    "a header union stack of {} elements not supported (1 to 255)",
                    unions.len()
                ),
            );
        }
        let idx = l.union_stacks.len() as u32;
        if l.union_stack_by_name
            .insert(name.to_string(), idx)
            .is_some()
        {
            return err(&ctx, "duplicate header union stack name");
        }
        l.union_stacks.push(UnionStackInfo { unions });
    }
    Ok(())
}

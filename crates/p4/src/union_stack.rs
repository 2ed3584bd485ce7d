//! Header union stacks (bmv2's `header_union_stacks`): a stack whose elements are header unions.
//! The element unions are ordinary unions of the layout (crates/p4/src/union.rs); a union stack
//! adds only the order of its elements and a next index, kept after the header stacks' in
//! [`crate::PacketState`]'s next indexes, for `extract(u.next.member)` (bmv2's `extract` of
//! type `union_stack`, value `[stack, member]`).

use crate::json::{err, R};
use crate::layout::Layout;
use serde_json::Value;

/// A member header and its siblings with their wire bytes.
pub type MemberExtract = (u32, Box<[(u32, i32)]>);

/// `extract(u.next.member)`, compiled: the next-index slot and, per element, the member's
/// header and its siblings (with their wire bytes), which the extract makes invalid.
#[derive(Debug, Clone)]
pub struct Extract {
    pub slot: u32,
    pub members: Box<[MemberExtract]>,
}

/// Compiles the `[stack, member]` value of an `extract` of type `union_stack`.
pub fn extract(v: &Value, l: &Layout, ctx: &str) -> R<Extract> {
    let parts = v.as_array().map(Vec::as_slice).unwrap_or(&[]);
    let (Some(s), Some(m)) = (
        parts.first().and_then(Value::as_str),
        parts.get(1).and_then(Value::as_str),
    ) else {
        return err(ctx, "a union_stack extract needs [stack, member]");
    };
    let Some(&si) = l.union_stack_by_name.get(s) else {
        return err(ctx, format!("unknown header union stack \"{s}\""));
    };
    let mut members = Vec::new();
    for &u in &l.union_stacks[si as usize].unions {
        let union = &l.unions[u as usize];
        let want = format!("{}.{m}", union.name);
        let Some(&h) = union
            .members
            .iter()
            .find(|&&h| l.headers[h as usize].name == want)
        else {
            return err(
                ctx,
                format!("header union \"{}\" has no member \"{m}\"", union.name),
            );
        };
        let sib = crate::union::siblings(l, h).unwrap_or_default();
        members.push((h, sib));
    }
    Ok(Extract {
        slot: l.stacks.len() as u32 + si,
        members: members.into(),
    })
}

//! Whole-stack assignment (`h.h2 = h.h1`): bmv2's `assign_header_stack` and
//! `assign_union_stack`. Both stacks have the same size and element type; every element is
//! copied (validity and fields) and the destination takes the source's next index.

use crate::json::{self, err, R};
use crate::layout::Layout;
use crate::state::PacketState;
use serde_json::Value;

/// A compiled stack copy: the next-index slots and, per element, the member copies
/// (a header stack element is one header; a union stack element, its members).
#[derive(Debug, Clone)]
pub struct StackCopy {
    dst_slot: u32,
    src_slot: u32,
    members: Box<[crate::union::MemberCopy]>,
}

fn stack_operand<'a>(v: &'a Value, kind: &str, ctx: &str) -> R<&'a str> {
    if json::str_(v, "type", ctx)? != kind {
        return err(ctx, format!("expected a {kind} operand"));
    }
    json::as_str(json::get(v, "value", ctx)?, ctx)
}

/// A header's words (fields and a varbit's length word).
fn span(l: &Layout, h: u32) -> (u32, u32) {
    l.headers[h as usize].span()
}

/// `assign_header_stack dst src`.
pub fn header_stacks(dst: &Value, src: &Value, l: &Layout, ctx: &str) -> R<StackCopy> {
    let index = |v: &Value| -> R<u32> {
        let n = stack_operand(v, "header_stack", ctx)?;
        match l.stack_by_name.get(n) {
            Some(s) => Ok(*s),
            None => err(ctx, format!("unknown header stack \"{n}\"")),
        }
    };
    let (d, s) = (index(dst)?, index(src)?);
    let (dh, sh) = (&l.stacks[d as usize].headers, &l.stacks[s as usize].headers);
    if dh.len() != sh.len() {
        return err(ctx, "assign_header_stack between stacks of different sizes");
    }
    let mut members = Vec::with_capacity(dh.len());
    for (&a, &b) in dh.iter().zip(sh) {
        if l.headers[a as usize].type_name != l.headers[b as usize].type_name {
            return err(
                ctx,
                "assign_header_stack between stacks of different header types",
            );
        }
        let ((aw, n), (bw, _)) = (span(l, a), span(l, b));
        members.push((a, b, aw, bw, n));
    }
    Ok(StackCopy {
        dst_slot: d,
        src_slot: s,
        members: members.into(),
    })
}

/// `assign_union_stack dst src`.
pub fn union_stacks(dst: &Value, src: &Value, l: &Layout, ctx: &str) -> R<StackCopy> {
    let index = |v: &Value| -> R<u32> {
        let n = stack_operand(v, "header_union_stack", ctx)?;
        match l.union_stack_by_name.get(n) {
            Some(s) => Ok(*s),
            None => err(ctx, format!("unknown header union stack \"{n}\"")),
        }
    };
    let (d, s) = (index(dst)?, index(src)?);
    let (du, su) = (
        &l.union_stacks[d as usize].unions,
        &l.union_stacks[s as usize].unions,
    );
    if du.len() != su.len() {
        return err(ctx, "assign_union_stack between stacks of different sizes");
    }
    let mut members = Vec::new();
    for (&a, &b) in du.iter().zip(su) {
        members.extend(crate::union::assign_plan(l, a, b, ctx)?.iter().copied());
    }
    // union stacks' next indexes follow the header stacks'
    let base = l.stacks.len() as u32;
    Ok(StackCopy {
        dst_slot: base + d,
        src_slot: base + s,
        members: members.into(),
    })
}

pub fn run(st: &mut PacketState, c: &StackCopy) {
    if c.dst_slot == c.src_slot {
        return;
    }
    for &(dh, sh, dw, sw, n) in c.members.iter() {
        st.valid[dh as usize] = st.valid[sh as usize];
        let s = sw as usize;
        st.w.copy_within(s..s + n as usize, dw as usize);
    }
    st.stack_next[c.dst_slot as usize] = st.stack_next[c.src_slot as usize];
}

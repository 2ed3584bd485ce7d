//! Header unions (P4-16 `header_union`, bmv2's `header_unions`): at most one member is valid.
//! Members are ordinary headers in the layout; a union only ties their validity together, so
//! programs without unions run exactly the ops they ran before (the union ops are separate).

use crate::json::{self, err, R};
use crate::layout::Layout;
use crate::state::PacketState;
use serde_json::Value;

/// The union named by a `{"type": "header_union", "value": NAME}` operand.
pub fn operand(v: &Value, l: &Layout, ctx: &str) -> R<u32> {
    if json::str_(v, "type", ctx)? != "header_union" {
        return err(ctx, "expected a header_union operand");
    }
    let name = json::as_str(json::get(v, "value", ctx)?, ctx)?;
    match l.union_by_name.get(name) {
        Some(u) => Ok(*u),
        None => err(ctx, format!("unknown header union \"{name}\"")),
    }
}

/// The other members of `h`'s union with their wire bytes, or `None` when `h` is in no union.
pub fn siblings(l: &Layout, h: u32) -> Option<Box<[(u32, i32)]>> {
    let u = l.union_of.get(h as usize).copied().flatten()?;
    let others = l.unions[u as usize].members.iter().filter(|&&m| m != h);
    Some(others.map(|&m| (m, wire_bytes(l, m))).collect())
}

fn wire_bytes(l: &Layout, h: u32) -> i32 {
    (l.headers[h as usize].bits / 8) as i32
}

/// Makes a union member valid: as in bmv2 (and the P4-16 spec), its siblings become invalid.
pub fn make_valid(st: &mut PacketState, h: u32, bytes: i32, siblings: &[(u32, i32)]) {
    for &(m, b) in siblings {
        st.set_validity(m, false, b);
    }
    st.set_validity(h, true, bytes);
}

/// One member pair of a union assignment: (dst header, src header, dst word, src word, words).
pub type MemberCopy = (u32, u32, u32, u32, u32);

/// `assign_union dst src`: both unions of one type; each member takes the other's validity and
/// (when valid) its fields.
pub fn assign_plan(l: &Layout, dst: u32, src: u32, ctx: &str) -> R<Box<[MemberCopy]>> {
    let (d, s) = (&l.unions[dst as usize], &l.unions[src as usize]);
    if d.members.len() != s.members.len() {
        return err(
            ctx,
            format!("header unions \"{}\" and \"{}\" differ", d.name, s.name),
        );
    }
    let span = |h: u32| l.headers[h as usize].span();
    let mut plan = Vec::new();
    for (&dh, &sh) in d.members.iter().zip(&s.members) {
        if l.headers[dh as usize].type_name != l.headers[sh as usize].type_name {
            return err(
                ctx,
                format!("header unions \"{}\" and \"{}\" differ", d.name, s.name),
            );
        }
        let ((dw, n), (sw, _)) = (span(dh), span(sh));
        plan.push((dh, sh, dw, sw, n));
    }
    Ok(plan.into())
}

pub fn assign(st: &mut PacketState, plan: &[MemberCopy]) {
    for &(dh, sh, dw, sw, n) in plan {
        if dh == sh {
            continue;
        }
        let v = st.valid[sh as usize];
        st.valid[dh as usize] = v;
        if v {
            let s = sw as usize;
            st.w.copy_within(s..s + n as usize, dw as usize);
        }
    }
}

/// `u.isValid()`: whether any member is valid.
pub fn any_valid(valid: &[bool], members: &[u32]) -> bool {
    members.iter().any(|&m| valid[m as usize])
}

//! Whole-stack assignment (`h.h2 = h.h1`), as p4c-bm2-ss writes it: `assign_header_stack` (or
//! `assign_union_stack`) of the two stacks, which copies every element and the next index.

use crate::ast::Expr;
use crate::diag::{fail, Loc, Res};
use crate::lower::action::prim;
use crate::lower::expr::Ref;
use crate::lower::{Lowerer, Scope};
use serde_json::{json, Value};

/// A stack's kind, element type and size.
fn stack_of(r: &Ref) -> Option<(&'static str, &str, &str, u32)> {
    match r {
        Ref::Stack { name, htype, size } => Some(("header_stack", name, htype, *size)),
        Ref::UnionStack {
            name,
            utype,
            size,
            next: false,
        } => Some(("header_union_stack", name, utype, *size)),
        _ => None,
    }
}

impl Lowerer<'_> {
    /// `l = r` when `l` is a whole stack: the copy primitive (None when `l` is not a stack).
    pub fn stack_assign(&self, sc: &Scope, l: &Expr, r: &Expr, loc: Loc) -> Res<Option<Value>> {
        let dst = self.resolve(sc, l)?;
        let Some((kind, dname, dtype, dsize)) = stack_of(&dst) else {
            return Ok(None);
        };
        let src = self.resolve(sc, r)?;
        let Some((skind, sname, stype, ssize)) = stack_of(&src) else {
            return fail(
                r.loc(),
                format!("a stack {dtype}[{dsize}] must be assigned a stack"),
            );
        };
        if (kind, dtype, dsize) != (skind, stype, ssize) {
            return fail(
                loc,
                format!("stack type mismatch: {stype}[{ssize}] assigned to {dtype}[{dsize}]"),
            );
        }
        let op = if kind == "header_stack" {
            "assign_header_stack"
        } else {
            "assign_union_stack"
        };
        Ok(Some(prim(
            op,
            vec![
                json!({"type": kind, "value": dname}),
                json!({"type": kind, "value": sname}),
            ],
        )))
    }
}

//! Header union stacks (`U[n]` with `U` a header_union), laid out as p4c-bm2-ss lays them out:
//! element `u[i]` is a header union of that name whose members are the header instances
//! `u[i].m`, and `header_union_stacks` lists the element unions by id. A constant index names
//! the element union (`hdr.u[1].byte`); `extract(hdr.u.next.m)` is an `extract` of type
//! `union_stack` with the value `[stack, member]`.

use crate::ast::Expr;
use crate::diag::{fail, Loc, Res};
use crate::lower::expr::Ref;
use crate::lower::{Lowerer, StackInst};
use serde_json::{json, Value};

impl Lowerer<'_> {
    /// The element unions (and their member headers) of the union stack `path` of `n` `utype`s.
    pub fn union_stack_layout(
        &mut self,
        path: &str,
        utype: &str,
        n: u32,
        meta: bool,
        loc: Loc,
    ) -> Res<()> {
        for i in 0..n {
            self.struct_layout(utype, &format!("{path}[{i}]."), meta, loc)?;
        }
        self.union_stacks.push(StackInst {
            name: path.to_string(),
            htype: utype.to_string(),
            size: n,
        });
        Ok(())
    }

    /// `u[i]`: with `i` a constant, element union `u[i]`.
    pub fn union_stack_index(&self, name: &str, utype: &str, size: u32, i: &Expr) -> Res<Ref> {
        let Ok((idx, _)) = self.env.const_value(i) else {
            return fail(
                i.loc(),
                "a header union stack index must be a compile-time constant",
            );
        };
        if idx >= u128::from(size) {
            return fail(
                i.loc(),
                format!("index {idx} out of bounds of stack {name}[{size}]"),
            );
        }
        Ok(Ref::Struct {
            prefix: format!("{name}[{idx}]."),
            sname: utype.to_string(),
            meta: false,
        })
    }

    /// Member `m` of a union stack (`next`, `size`), or of its `next` element (a union member).
    pub fn union_stack_member(&self, base: Ref, m: &str, loc: Loc) -> Res<Ref> {
        match base {
            Ref::UnionStack {
                name,
                utype,
                size,
                next: false,
            } => match m {
                "next" => Ok(Ref::UnionStack {
                    name,
                    utype,
                    size,
                    next: true,
                }),
                "size" => Ok(Ref::Const(u128::from(size), crate::env::Ty::Bit(32))),
                _ => fail(
                    loc,
                    format!("header union stack {name} supports next and size here, not '{m}'"),
                ),
            },
            Ref::UnionStack {
                name,
                utype,
                next: true,
                ..
            } => {
                let fs = self
                    .env
                    .structs
                    .get(&utype)
                    .map(Vec::as_slice)
                    .unwrap_or(&[]);
                if !fs.iter().any(|f| f.name == m) {
                    return fail(loc, format!("header union {utype} has no member '{m}'"));
                }
                Ok(Ref::UnionStackNextMember {
                    stack: name,
                    member: m.to_string(),
                })
            }
            _ => fail(loc, format!("no member '{m}' here")),
        }
    }

    /// The deparser order of a whole union stack: each element's members in declaration order.
    pub fn union_stack_emit_order(
        &self,
        name: &str,
        utype: &str,
        size: u32,
        order: &mut Vec<String>,
    ) {
        let fs = self.env.structs.get(utype).cloned().unwrap_or_default();
        for i in 0..size {
            order.extend(fs.iter().map(|f| format!("{name}[{i}].{}", f.name)));
        }
    }
}

/// `extract(u.next.m)`.
pub fn extract_json(stack: &str, member: &str) -> Value {
    json!({"op": "extract", "parameters": [{"type": "union_stack", "value": [stack, member]}]})
}

/// The `header_union_stacks` list: each element union by its id in `header_unions`.
pub fn union_stacks_json(l: &Lowerer) -> Vec<Value> {
    l.union_stacks
        .iter()
        .enumerate()
        .map(|(id, s)| {
            let ids: Vec<usize> = (0..s.size)
                .filter_map(|k| l.unions.iter().position(|u| u.name == format!("{}[{k}]", s.name)))
                .collect();
            json!({"name": s.name, "id": id, "union_type": s.htype, "size": s.size, "header_union_ids": ids})
        })
        .collect()
}

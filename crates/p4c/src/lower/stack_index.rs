//! Header stack elements indexed at run time (`hdr.s[hdr.ix.i]`), written as p4c-bm2-ss writes
//! them: the element is a `dereference_header_stack` expression (the stack and the index), a
//! field of it an `access_field` of that expression with the field's position in the header.
//! The pipeline reads an index past the stack as an invalid header of zeros and ignores writes
//! to it (crates/p4/src/expr/stack_index.rs).

use crate::ast::Expr;
use crate::diag::{fail, Loc, Res};
use crate::env::Ty;
use crate::lower::expr::{two_comp, Ref};
use crate::lower::{un, Lowerer, Scope};
use serde_json::{json, Value};

/// The `dereference_header_stack` operand for `stack[index]`.
fn element_json(stack: &str, index: Value) -> Value {
    json!({"type": "expression", "value": {"op": "dereference_header_stack",
        "left": {"type": "header_stack", "value": stack}, "right": index}})
}

impl Lowerer<'_> {
    /// `stack[i]` with `i` not a constant: the element as a [`Ref::Element`].
    pub fn runtime_element(&self, sc: &Scope, stack: String, htype: String, i: &Expr) -> Res<Ref> {
        let (index, ty) = self.rvalue(sc, i)?;
        match ty {
            Ty::Bit(_) | Ty::Int(_) | Ty::SerEnum(..) => {}
            t => {
                return fail(
                    i.loc(),
                    format!(
                        "a header stack index must be a bit<W> or int<W> value, not {}",
                        t.describe()
                    ),
                )
            }
        }
        Ok(Ref::Element {
            elem: element_json(&stack, index),
            htype,
        })
    }

    /// Field `m` of a run-time element.
    pub fn element_member(&self, elem: Value, htype: &str, m: &str, loc: Loc) -> Res<Ref> {
        let fs = self.env.header_fields(htype);
        match fs.iter().position(|f| f.name == m) {
            Some(pos) => Ok(Ref::ElementField {
                elem,
                pos,
                ty: fs[pos].ty.clone(),
            }),
            None => fail(loc, format!("header {htype} has no field '{m}'")),
        }
    }
}

/// The `access_field` expression of a run-time element's field (an lvalue as is).
pub fn field_json(elem: Value, pos: usize) -> Value {
    json!({"type": "expression", "value": {"op": "access_field", "left": elem, "right": pos}})
}

/// The field read as a value of its type (`int<W>` sign-extended, `bool` as a boolean).
pub fn field_value(elem: Value, pos: usize, ty: &Ty) -> Value {
    let v = field_json(elem, pos);
    match ty {
        Ty::Int(w) => two_comp(v, *w),
        Ty::Bool => un("d2b", v),
        _ => v,
    }
}

/// `isValid()` of a run-time element.
pub fn valid_json(elem: Value) -> Value {
    json!({"type": "expression", "value": {"op": "valid", "left": null, "right": elem}})
}

/// A header operand of `assign_header`, `add_header` or `remove_header` (a header instance or
/// a run-time element) and its header type.
pub fn header_operand(r: Ref) -> Option<(Value, String)> {
    match r {
        Ref::Header { inst, htype } => Some((crate::lower::action::header(&inst), htype)),
        Ref::Element { elem, htype } => Some((elem, htype)),
        _ => None,
    }
}

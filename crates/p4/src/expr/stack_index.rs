//! Header stack elements chosen per packet: bmv2's `dereference_header_stack` (a stack and an
//! index expression), read through `access_field` (a field by its position in the header) or
//! `valid`, and written by `assign`, `assign_header`, `add_header` and `remove_header`.
//!
//! Each use is compiled into the list of candidates (one per element: the field's slot, or the
//! header) and the index expression; the packet only evaluates the index and picks. An index
//! past the stack reads as an invalid header whose fields are 0, and a write to it does
//! nothing. (bmv2 lets the C++ `std::out_of_range` of its element vector escape, which ends
//! simple_switch; p4c's own mid-end rewrite of such indexes into `if` chains behaves as here.)
//! Programs without run-time indexes never reach this file: the ops and expressions are their
//! own variants, boxed, so the fixed-header ops keep their size and their path.

use crate::bits::mask;
use crate::expr::{self, Env, Expr, Scope};
use crate::json::{self, err, R};
use crate::layout::{FieldRef, Layout};
use crate::state::PacketState;
use serde_json::Value;

/// A stack element named by an index computed per packet.
#[derive(Debug, Clone)]
pub struct Element {
    pub index: Expr,
    /// The stack's headers, in order.
    pub headers: Box<[u32]>,
}

impl Element {
    #[inline]
    fn pick(&self, env: &Env) -> Option<u32> {
        let i = usize::try_from(self.index.eval(env)).ok()?;
        self.headers.get(i).copied()
    }
}

/// One field of a run-time element: the field's slot in every element.
#[derive(Debug, Clone)]
pub struct ElementField {
    pub index: Expr,
    pub fields: Box<[FieldRef]>,
}

impl ElementField {
    #[inline]
    fn pick(&self, env: &Env) -> Option<FieldRef> {
        let i = usize::try_from(self.index.eval(env)).ok()?;
        self.fields.get(i).copied()
    }

    /// The field's value in the chosen element (0 past the stack), up to 128 bits.
    pub fn eval128(&self, env: &Env) -> u128 {
        let Some(f) = self.pick(env) else {
            return 0;
        };
        let w = f.word as usize;
        if f.width <= 64 {
            u128::from(env.w[w])
        } else {
            (u128::from(env.w[w]) << 64) | u128::from(env.w[w + 1])
        }
    }
}

/// What a run-time element does to the packet (an [`crate::action::Op::Element`]).
#[derive(Debug, Clone)]
pub enum ElementOp {
    /// A field of the chosen element takes a value (masked to its width).
    Set { dst: ElementField, src: Expr },
    /// `add_header` / `remove_header` of the chosen element; `bytes` its wire size.
    SetValidity {
        elem: Element,
        valid: bool,
        bytes: i32,
    },
    /// Header copy where either side may be a run-time element; `words` is the header's size
    /// in words and every header of the type spans as many consecutive words.
    CopyHeader {
        dst: HeaderSide,
        src: HeaderSide,
        words: u32,
    },
}

/// One side of a header copy.
#[derive(Debug, Clone)]
pub enum HeaderSide {
    /// A header and its first word.
    Fixed(u32, u32),
    /// A run-time element and the first word of each of the stack's headers.
    Element(Element, Box<[u32]>),
}

impl HeaderSide {
    /// The header and its first word (None past the stack).
    #[inline]
    fn pick(&self, env: &Env) -> Option<(u32, usize)> {
        match self {
            HeaderSide::Fixed(h, w) => Some((*h, *w as usize)),
            HeaderSide::Element(e, words) => {
                let i = usize::try_from(e.index.eval(env)).ok()?;
                Some((*e.headers.get(i)?, *words.get(i)? as usize))
            }
        }
    }
}

/// The `dereference_header_stack` expression inside `v` (either the `{"type": "expression",
/// "value": ...}` operand or the operator object itself), if it is one.
fn deref_op(v: &Value) -> Option<&Value> {
    let inner = if v.get("op").is_some() {
        v
    } else if v.get("type").and_then(Value::as_str) == Some("expression") {
        v.get("value")?
    } else {
        return None;
    };
    (inner.get("op").and_then(Value::as_str) == Some("dereference_header_stack")).then_some(inner)
}

/// Whether `v` is a run-time stack element (`dereference_header_stack`).
pub fn is_element(v: &Value) -> bool {
    deref_op(v).is_some()
}

/// Compiles a `dereference_header_stack` operand: the stack's headers and the index.
pub fn element(v: &Value, s: &Scope, ctx: &str) -> R<Element> {
    let Some(d) = deref_op(v) else {
        return err(
            ctx,
            "expected a header stack element (dereference_header_stack)",
        );
    };
    let stack = json::get(d, "left", ctx)?;
    if json::str_(stack, "type", ctx)? != "header_stack" {
        return err(
            ctx,
            "dereference_header_stack needs a header_stack on its left",
        );
    }
    let name = json::as_str(json::get(stack, "value", ctx)?, ctx)?;
    let Some(&si) = s.layout.stack_by_name.get(name) else {
        return err(ctx, format!("unknown header stack \"{name}\""));
    };
    let headers: Box<[u32]> = s.layout.stacks[si as usize].headers.clone().into();
    if headers.is_empty() {
        return err(ctx, format!("header stack \"{name}\" is empty"));
    }
    let index = expr::compile(json::get(d, "right", ctx)?, s, ctx)?;
    Ok(Element { index, headers })
}

/// `access_field` of a run-time element (the operator object: `left` the element, `right` the
/// field's position in the header type): the field of every element, and whether it is signed.
pub fn access_field(v: &Value, s: &Scope, ctx: &str) -> R<(ElementField, bool)> {
    let elem = element(json::get(v, "left", ctx)?, s, ctx)?;
    let pos = json::as_u64(json::get(v, "right", ctx)?, ctx)? as usize;
    let l = s.layout;
    let mut fields = Vec::with_capacity(elem.headers.len());
    let mut signed = false;
    for &h in elem.headers.iter() {
        let Some(fi) = l.headers[h as usize].fields.get(pos) else {
            return err(
                ctx,
                format!(
                    "access_field: header \"{}\" has no field {pos}",
                    l.headers[h as usize].name
                ),
            );
        };
        if fi.width > expr::MAX_BITS {
            return err(
                ctx,
                format!(
                    "a {}-bit field of a run-time stack element not supported (max {})",
                    fi.width,
                    expr::MAX_BITS
                ),
            );
        }
        signed = fi.signed;
        fields.push(FieldRef {
            word: fi.word,
            width: fi.width,
            header: h,
        });
    }
    Ok((
        ElementField {
            index: elem.index,
            fields: fields.into(),
        },
        signed,
    ))
}

/// The expression reading `access_field` (sign-extended for an `int<W>` field).
pub fn field_expr(v: &Value, s: &Scope, ctx: &str) -> R<Expr> {
    let (f, signed) = access_field(v, s, ctx)?;
    let width = f.fields[0].width;
    let e = Expr::ElementField(Box::new(f));
    Ok(if signed {
        Expr::Signed(Box::new(e), width)
    } else {
        e
    })
}

/// The expression `valid` of a run-time element (false past the stack).
pub fn valid_expr(v: &Value, s: &Scope, ctx: &str) -> R<Expr> {
    Ok(Expr::ElementValid(Box::new(element(v, s, ctx)?)))
}

/// Whether the element `e` picks is valid.
#[inline]
pub fn is_valid(e: &Element, env: &Env) -> bool {
    e.pick(env).is_some_and(|h| env.valid[h as usize])
}

/// `assign` to `access_field` of a run-time element (`dst` the `{"type": "expression"}`
/// operand).
pub fn compile_set(dst: &Value, src: &Value, s: &Scope, ctx: &str) -> R<ElementOp> {
    let inner = json::get(dst, "value", ctx)?;
    if inner.get("op").and_then(Value::as_str) != Some("access_field") {
        return err(
            ctx,
            "an expression assignment target must be a stack element's field (access_field)",
        );
    }
    let (dst, _) = access_field(inner, s, ctx)?;
    Ok(ElementOp::Set {
        dst,
        src: expr::compile(src, s, ctx)?,
    })
}

/// `add_header` / `remove_header` of a run-time element.
pub fn compile_validity(v: &Value, valid: bool, s: &Scope, ctx: &str) -> R<ElementOp> {
    let elem = element(v, s, ctx)?;
    let h = &s.layout.headers[elem.headers[0] as usize];
    let bytes = if h.metadata { 0 } else { (h.bits / 8) as i32 };
    Ok(ElementOp::SetValidity { elem, valid, bytes })
}

fn header_side(v: &Value, s: &Scope, ctx: &str) -> R<(HeaderSide, u32)> {
    let l = s.layout;
    if is_element(v) {
        let e = element(v, s, ctx)?;
        let h = e.headers[0];
        let words = e.headers.iter().map(|h| first_word(l, *h)).collect();
        return Ok((HeaderSide::Element(e, words), h));
    }
    if json::str_(v, "type", ctx)? != "header" {
        return err(ctx, "expected a header operand");
    }
    let h = l.header(json::as_str(json::get(v, "value", ctx)?, ctx)?, ctx)?;
    Ok((HeaderSide::Fixed(h, first_word(l, h)), h))
}

/// `assign_header` where either side is a run-time element.
pub fn compile_copy(dst: &Value, src: &Value, s: &Scope, ctx: &str) -> R<ElementOp> {
    let (dst, dh) = header_side(dst, s, ctx)?;
    let (src, sh) = header_side(src, s, ctx)?;
    let l: &Layout = s.layout;
    if l.headers[dh as usize].type_name != l.headers[sh as usize].type_name {
        return err(ctx, "header assignment between different header types");
    }
    // the span: fields and, for a header ending in a varbit, its length word
    let (_, words) = l.headers[dh as usize].span();
    Ok(ElementOp::CopyHeader { dst, src, words })
}

fn first_word(l: &Layout, h: u32) -> u32 {
    l.headers[h as usize].fields.first().map_or(0, |f| f.word)
}

/// Runs one op.
pub fn run(op: &ElementOp, params: &[u64], look: &[u8], st: &mut PacketState) {
    let env = Env {
        w: &st.w,
        valid: &st.valid,
        stack_next: &st.stack_next,
        params,
        look,
    };
    match op {
        ElementOp::Set { dst, src } => {
            let Some(f) = dst.pick(&env) else {
                return;
            };
            let d = f.word as usize;
            if f.width <= 64 {
                let v = src.eval(&env);
                st.w[d] = v & mask(f.width);
            } else {
                let v = src.eval128(&env);
                st.w[d] = (v >> 64) as u64 & mask(f.width - 64);
                st.w[d + 1] = v as u64;
            }
        }
        ElementOp::SetValidity { elem, valid, bytes } => {
            if let Some(h) = elem.pick(&env) {
                st.set_validity(h, *valid, *bytes);
            }
        }
        ElementOp::CopyHeader { dst, src, words } => {
            let (Some((d, dw)), Some((s, sw))) = (dst.pick(&env), src.pick(&env)) else {
                return;
            };
            st.valid[d as usize] = st.valid[s as usize];
            st.w.copy_within(sw..sw + *words as usize, dw);
        }
    }
}

//! Type checking of expressions and their bmv2 JSON (names are resolved in names.rs).
//! Arithmetic wraps at the operand width (results are masked, as p4c does); boolean values are
//! bmv2 booleans (`d2b` of a field, `b2d` when stored).

use crate::ast::*;
use crate::diag::{fail, Loc, Res};
use crate::env::{mask, Ty};
use crate::lower::{field, hexstr, op, signed_hexstr, un, Lowerer, Scope};
use serde_json::{json, Value};

pub use crate::lower::names::Ref;

impl Lowerer<'_> {
    /// The JSON of an lvalue field, and its type.
    pub fn lvalue(&self, sc: &Scope, e: &Expr) -> Res<(Value, Ty)> {
        match self.resolve(sc, e)? {
            Ref::Field { h, f, ty } => Ok((field(&h, &f), ty)),
            Ref::ElementField { elem, pos, ty } => {
                Ok((crate::lower::stack_index::field_json(elem, pos), ty))
            }
            Ref::Param(..) => fail(
                e.loc(),
                "action parameters without a direction are read-only",
            ),
            _ => fail(
                e.loc(),
                format!(
                    "cannot assign to {}",
                    e.path().unwrap_or_else(|| "this expression".into())
                ),
            ),
        }
    }

    /// An expression's JSON and type. Constant folding first, so constants take any width.
    pub fn rvalue(&self, sc: &Scope, e: &Expr) -> Res<(Value, Ty)> {
        match e {
            Expr::Int { .. }
            | Expr::Unary(..)
            | Expr::Binary(..)
            | Expr::Cast(..)
            | Expr::Mux(..)
            | Expr::Slice(..) => {
                if let Ok((v, t)) = self.env.const_value(e) {
                    return Ok((const_json(v, &t), t));
                }
            }
            _ => {}
        }
        match e {
            Expr::Bool(b, _) => Ok((json!({"type": "bool", "value": b}), Ty::Bool)),
            Expr::Int { loc, .. } => fail(*loc, "this literal is not a valid constant"),
            Expr::Str(_, loc) => fail(
                *loc,
                "strings are only allowed as annotation and log arguments",
            ),
            Expr::Member(b, m, loc) if matches!(&**b, Expr::Call { .. }) => {
                self.lookahead_field(sc, b, m, *loc)
            }
            Expr::Name(..) | Expr::Member(..) | Expr::Index(..) => match self.resolve(sc, e)? {
                Ref::Field { h, f, ty } => Ok(if ty == Ty::Bool {
                    (un("d2b", field(&h, &f)), Ty::Bool)
                } else {
                    (field(&h, &f), ty)
                }),
                Ref::Param(i, ty) => {
                    let v = json!({"type": "runtime_data", "value": i});
                    Ok(match ty {
                        Ty::Bool => (un("d2b", v), Ty::Bool),
                        // action data carries no sign: read it as int<W>
                        Ty::Int(w) => (two_comp(v, w), ty),
                        _ => (v, ty),
                    })
                }
                Ref::Const(v, t) => Ok((const_json(v, &t), t)),
                Ref::StackLastField { stack, f, ty } => {
                    let v = json!({"type": "stack_field", "value": [stack, f]});
                    Ok(match ty {
                        Ty::Int(w) => (two_comp(v, w), ty),
                        _ => (v, ty),
                    })
                }
                Ref::Value(v, t) => Ok((v, t)),
                Ref::ElementField { elem, pos, ty } => {
                    Ok((crate::lower::stack_index::field_value(elem, pos, &ty), ty))
                }
                _ => fail(
                    e.loc(),
                    format!("{} is not a value", e.path().unwrap_or_default()),
                ),
            },
            Expr::Call {
                func,
                type_args,
                args,
                loc,
            } => self.value_call(sc, func, type_args, args, *loc),
            Expr::Unary(o, x, loc) => {
                let (v, t) = self.rvalue(sc, x)?;
                match (*o, &t) {
                    ("!", Ty::Bool) => Ok((un("not", v), Ty::Bool)),
                    ("~", Ty::Bit(w)) => Ok((op("&", un("~", v), hexstr(mask(*w))), t.clone())),
                    ("-", Ty::Bit(w)) => {
                        Ok((op("&", op("-", hexstr(0), v), hexstr(mask(*w))), t.clone()))
                    }
                    // int<W> values are sign-extended: ~ keeps them so, - can overflow
                    ("~", Ty::Int(_)) => Ok((un("~", v), t.clone())),
                    ("-", Ty::Int(w)) => Ok((two_comp(op("-", hexstr(0), v), *w), t.clone())),
                    _ => fail(
                        *loc,
                        format!("operator {o} cannot be applied to {}", t.describe()),
                    ),
                }
            }
            Expr::Binary(o, a, b, loc) => self.binary(sc, o, a, b, *loc),
            Expr::Cast(t, x, loc) => {
                let to = self.env.resolve(t)?;
                let (v, from) = self.rvalue(sc, x)?;
                match (&from, &to) {
                    (Ty::Bit(a), Ty::Bit(b))
                    | (Ty::SerEnum(_, a), Ty::Bit(b))
                    | (Ty::Bit(a), Ty::SerEnum(_, b)) => Ok((
                        if b < a {
                            op("&", v, hexstr(mask(*b)))
                        } else {
                            v
                        },
                        to,
                    )),
                    (Ty::Bool, Ty::Bit(1)) => Ok((un("b2d", v), to)),
                    (Ty::Bit(1), Ty::Bool) => Ok((un("d2b", v), to)),
                    (Ty::InfInt, Ty::Bit(_)) => Ok((v, to)),
                    // P4-16: bit<W> <-> int<W> keep the bits; int<A> -> int<B> sign-extends
                    // or truncates (p4c-bm2-ss: two_comp_mod to int, & mask to bit)
                    (Ty::Bit(a) | Ty::Int(a), Ty::Int(b))
                        if a == b || matches!(from, Ty::Int(_)) =>
                    {
                        Ok((two_comp(v, *b), to))
                    }
                    (Ty::Int(a), Ty::Bit(b)) if a == b => Ok((op("&", v, hexstr(mask(*b))), to)),
                    (Ty::Bit(_), Ty::Int(b)) | (Ty::Int(_), Ty::Bit(b)) => fail(
                        *loc,
                        format!(
                            "cannot cast {} to {} directly: cast to {} first",
                            from.describe(),
                            to.describe(),
                            match from {
                                Ty::Int(_) => format!("int<{b}>"),
                                _ => format!("bit<{b}>"),
                            }
                        ),
                    ),
                    (a, b) if a == b => Ok((v, to)),
                    _ => fail(
                        *loc,
                        format!("cannot cast {} to {}", from.describe(), to.describe()),
                    ),
                }
            }
            Expr::Slice(x, h, l, loc) => {
                let (v, t) = self.rvalue(sc, x)?;
                let (hi, lo) = self.slice_bounds(h, l, &t, *loc)?;
                let shifted = if lo == 0 {
                    v
                } else {
                    op(">>", v, hexstr(u128::from(lo)))
                };
                Ok((
                    op("&", shifted, hexstr(mask(hi - lo + 1))),
                    Ty::Bit(hi - lo + 1),
                ))
            }
            Expr::Mux(c, a, b, loc) => {
                let (cv, ct) = self.rvalue(sc, c)?;
                if ct != Ty::Bool {
                    return fail(
                        c.loc(),
                        format!("condition must be bool, found {}", ct.describe()),
                    );
                }
                let (av, at) = self.rvalue(sc, a)?;
                let (bv, bt) = self.rvalue(sc, b)?;
                let t = unify(&at, &bt, "?:", *loc)?;
                Ok((
                    json!({"type": "expression", "value": {"op": "?", "left": av, "right": bv, "cond": cv}}),
                    t,
                ))
            }
            Expr::List(_, loc) => fail(*loc, "a list {...} is not a value here"),
            Expr::Mask(_, _, loc) | Expr::Range(_, _, loc) | Expr::Default(loc) => fail(
                *loc,
                "masks, ranges and default are only allowed in select cases and table entries",
            ),
        }
    }

    pub fn slice_bounds(&self, h: &Expr, l: &Expr, t: &Ty, loc: Loc) -> Res<(u32, u32)> {
        let (Ok((hi, _)), Ok((lo, _))) = (self.env.const_value(h), self.env.const_value(l)) else {
            return fail(loc, "slice bounds must be compile-time constants");
        };
        let Some(w) = t.width() else {
            return fail(loc, format!("cannot slice a {}", t.describe()));
        };
        if hi < lo || hi >= u128::from(w) {
            return fail(
                loc,
                format!("slice [{hi}:{lo}] out of range of {}", t.describe()),
            );
        }
        Ok((hi as u32, lo as u32))
    }

    fn binary(&self, sc: &Scope, o: &str, a: &Expr, b: &Expr, loc: Loc) -> Res<(Value, Ty)> {
        if let Some(v) = self.aggregate_equality(sc, o, a, b, loc)? {
            return Ok(v);
        }
        let (av, at) = self.rvalue(sc, a)?;
        let (bv, bt) = self.rvalue(sc, b)?;
        let loc = if loc == Loc::default() {
            a.start()
        } else {
            loc
        };
        if o == "&&" || o == "||" {
            if at != Ty::Bool || bt != Ty::Bool {
                return fail(
                    loc,
                    format!(
                        "{o} needs bool operands, found {} and {}",
                        at.describe(),
                        bt.describe()
                    ),
                );
            }
            return Ok((op(if o == "&&" { "and" } else { "or" }, av, bv), Ty::Bool));
        }
        if o == "++" {
            let (Some(wa), Some(wb)) = (known_width(&at), known_width(&bt)) else {
                return fail(
                    loc,
                    "++ needs operands of known width: cast the constant, e.g. (bit<8>)1",
                );
            };
            let t = Ty::Bit(wa + wb);
            return Ok((op("|", op("<<", av, hexstr(u128::from(wb))), bv), t));
        }
        if o == "<<" || o == ">>" {
            let Some(w) = known_width(&at).or(match at {
                Ty::Int(w) => Some(w),
                _ => None,
            }) else {
                return fail(
                    loc,
                    format!("the left side of {o} needs a width: cast it, e.g. (bit<32>)x"),
                );
            };
            let v = op(o, av, bv);
            return Ok((
                match (o, &at) {
                    ("<<", Ty::Int(_)) => two_comp(v, w),
                    ("<<", _) => op("&", v, hexstr(mask(w))),
                    // >> of an int<W> is arithmetic in the switch (its operand is signed)
                    _ => v,
                },
                at,
            ));
        }
        let t = unify(&at, &bt, o, loc)?;
        // an unsized constant must fit the other side's width (p4c refuses it too)
        let (mut av, mut bv) = (av, bv);
        for (v, ty, e) in [(&mut av, &at, a), (&mut bv, &bt, b)] {
            if *ty == Ty::InfInt && t != Ty::InfInt {
                *v = self.coerce(v.clone(), ty, &t, e.start(), "the comparison or operation")?;
            }
        }
        if o == "|+|" || o == "|-|" {
            // as p4c-bm2-ss: usat_cast(a + b, W) on bit<W>, sat_cast on int<W> (the sum or
            // difference unbounded, then clamped)
            let base = if o == "|+|" { "+" } else { "-" };
            let cast = match t {
                Ty::Bit(w) => ("usat_cast", w),
                Ty::Int(w) => ("sat_cast", w),
                _ => {
                    return fail(
                        loc,
                        format!("saturating {o} needs bit<W> or int<W> operands"),
                    )
                }
            };
            return Ok((op(cast.0, op(base, av, bv), hexstr(u128::from(cast.1))), t));
        }
        match o {
            "==" | "!=" | "<" | ">" | "<=" | ">=" => {
                if matches!(t, Ty::Bool | Ty::Varbit(_)) && o != "==" && o != "!=" {
                    return fail(loc, format!("{o} cannot compare {}s", t.describe()));
                }
                Ok((op(o, av, bv), Ty::Bool))
            }
            _ => {
                let Some(w) = t.width().filter(|_| t != Ty::Bool) else {
                    return fail(
                        loc,
                        format!(
                            "operator {o} needs bit<W> operands, found {} and {}",
                            at.describe(),
                            bt.describe()
                        ),
                    );
                };
                if matches!(t, Ty::Int(_)) && matches!(o, "/" | "%") {
                    return fail(
                        loc,
                        format!("operator {o} is not defined on {}", t.describe()),
                    );
                }
                let v = op(o, av, bv);
                Ok((
                    match (o, &t) {
                        ("+" | "-" | "*", Ty::Int(_)) => two_comp(v, w),
                        ("+" | "-" | "*", _) => op("&", v, hexstr(mask(w))),
                        _ => v,
                    },
                    t,
                ))
            }
        }
    }

    /// `packet.lookahead<H>().f`: the bits of field `f` where header H would start.
    fn lookahead_field(&self, sc: &Scope, call: &Expr, m: &str, loc: Loc) -> Res<(Value, Ty)> {
        let Expr::Call { type_args, .. } = call else {
            return fail(loc, "expected a call");
        };
        let (_, whole) = self.rvalue(sc, call)?;
        let Some(Type::Named(..)) = type_args.first() else {
            return fail(loc, format!("'{m}': only a lookahead<header>() has fields"));
        };
        let Ok(Ty::Header(h)) = self.env.resolve(&type_args[0]) else {
            return fail(loc, format!("'{m}': only a lookahead<header>() has fields"));
        };
        let mut off = 0;
        for f in self.env.header_fields(&h) {
            let w = f.ty.width().unwrap_or(0);
            if f.name == m {
                return Ok((
                    json!({"type": "lookahead", "value": [off, w]}),
                    f.ty.clone(),
                ));
            }
            off += w;
        }
        let _ = whole;
        fail(loc, format!("header {h} has no field '{m}'"))
    }

    /// Calls that yield a value: `h.isValid()`, `packet.lookahead<T>()`.
    fn value_call(
        &self,
        sc: &Scope,
        func: &Expr,
        type_args: &[Type],
        args: &[Expr],
        loc: Loc,
    ) -> Res<(Value, Ty)> {
        let Expr::Member(base, m, _) = func else {
            return fail(
                loc,
                "only isValid() and lookahead<T>() calls can be used as values",
            );
        };
        match (self.resolve(sc, base)?, m.as_str()) {
            (Ref::Header { inst, .. }, "isValid") => {
                if !args.is_empty() {
                    return fail(loc, "isValid() takes no arguments");
                }
                Ok((un("d2b", field(&inst, "$valid$")), Ty::Bool))
            }
            (Ref::Element { elem, .. }, "isValid") => {
                if !args.is_empty() {
                    return fail(loc, "isValid() takes no arguments");
                }
                Ok((crate::lower::stack_index::valid_json(elem), Ty::Bool))
            }
            (Ref::Struct { prefix, sname, .. }, "isValid") if self.env.unions.contains(&sname) => {
                if !args.is_empty() {
                    return fail(loc, "isValid() takes no arguments");
                }
                let u = json!({"type": "header_union", "value": prefix.trim_end_matches('.')});
                Ok((
                    json!({"type": "expression", "value": {"op": "valid_union", "left": null, "right": u}}),
                    Ty::Bool,
                ))
            }
            (Ref::Packet, "lookahead") => {
                if !sc.in_parser {
                    return fail(loc, "lookahead is only allowed in a parser");
                }
                let [t] = type_args else {
                    return fail(
                        loc,
                        "lookahead needs one type argument: lookahead<bit<N>>()",
                    );
                };
                let ty = self.env.resolve(t)?;
                let w = match &ty {
                    Ty::Bit(w) => *w,
                    Ty::Header(h) => self
                        .env
                        .header_fields(h)
                        .iter()
                        .map(|f| f.ty.width().unwrap_or(0))
                        .sum(),
                    _ => {
                        return fail(
                            loc,
                            format!("lookahead of {} is not supported", ty.describe()),
                        )
                    }
                };
                Ok((json!({"type": "lookahead", "value": [0, w]}), Ty::Bit(w)))
            }
            _ => fail(
                loc,
                format!("'{m}' cannot be used as a value (only isValid() and lookahead<T>())"),
            ),
        }
    }
}

fn known_width(t: &Ty) -> Option<u32> {
    match t {
        Ty::Bit(w) | Ty::SerEnum(_, w) => Some(*w),
        _ => None,
    }
}

/// The common type of two operands, or a width mismatch error.
fn unify(a: &Ty, b: &Ty, o: &str, loc: Loc) -> Res<Ty> {
    let bitlike = |t: &Ty| match t {
        Ty::SerEnum(_, w) => Ty::Bit(*w),
        t => t.clone(),
    };
    let (a2, b2) = (bitlike(a), bitlike(b));
    match (&a2, &b2) {
        (x, y) if x == y => Ok(a2),
        (Ty::InfInt, t) | (t, Ty::InfInt) if t.width().is_some() && *t != Ty::Bool => Ok(t.clone()),
        (Ty::Int(_), Ty::Bit(w)) | (Ty::Bit(w), Ty::Int(_)) => fail(
            loc,
            format!(
                "type mismatch: {} {o} {}; P4-16 does not mix int and bit: cast one side, e.g. (bit<{w}>) or (int<{w}>)",
                a.describe(),
                b.describe()
            ),
        ),
        (Ty::Bit(x), Ty::Bit(y)) => fail(
            loc,
            format!(
                "width mismatch: bit<{x}> {o} bit<{y}>; cast one side, e.g. (bit<{}>)",
                x.max(y)
            ),
        ),
        _ => fail(
            loc,
            format!("type mismatch: {} {o} {}", a.describe(), b.describe()),
        ),
    }
}

/// bmv2's `two_comp_mod(v, w)`: the low `w` bits of `v` read as a signed int<w>.
pub fn two_comp(v: Value, w: u32) -> Value {
    op("two_comp_mod", v, hexstr(u128::from(w)))
}

pub fn const_json(v: u128, t: &Ty) -> Value {
    match t {
        Ty::Bool => json!({"type": "bool", "value": v != 0}),
        Ty::Int(w) => signed_hexstr(v, *w),
        _ => hexstr(v),
    }
}

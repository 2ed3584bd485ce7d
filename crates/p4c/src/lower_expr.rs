//! Name resolution and type checking of expressions, and their bmv2 JSON. Arithmetic wraps at
//! the operand width (results are masked, as p4c does); boolean values are bmv2 booleans
//! (`d2b` of a field, `b2d` when stored).

use crate::ast::*;
use crate::diag::{fail, Loc, Res};
use crate::env::{fits_signed, mask, Ty};
use crate::lower::{field, hexstr, op, signed_hexstr, un, Binding, Lowerer, Scope};
use serde_json::{json, Value};

/// What an expression refers to.
#[derive(Debug, Clone)]
pub enum Ref {
    Field {
        h: String,
        f: String,
        ty: Ty,
    },
    Header {
        inst: String,
        htype: String,
    },
    Stack {
        name: String,
        htype: String,
        size: u32,
    },
    StackNext {
        name: String,
    },
    StackLast {
        name: String,
        htype: String,
    },
    StackLastField {
        stack: String,
        f: String,
        ty: Ty,
    },
    /// A header union stack, or its `next` element (crates/p4c/src/union_stack.rs).
    UnionStack {
        name: String,
        utype: String,
        size: u32,
        next: bool,
    },
    /// A member of a union stack's `next` element (an extract target).
    UnionStackNextMember {
        stack: String,
        member: String,
    },
    /// A stack element indexed at run time (crates/p4c/src/stack_index.rs): its
    /// `dereference_header_stack` JSON.
    Element {
        elem: Value,
        htype: String,
    },
    /// A field of such an element, by position in the header.
    ElementField {
        elem: Value,
        pos: usize,
        ty: Ty,
    },
    Struct {
        prefix: String,
        sname: String,
        meta: bool,
    },
    Std,
    Param(u32, Ty),
    Const(u128, Ty),
    Extern(String, String, u32),
    Table(String),
    Action(String),
    Packet,
    Value(Value, Ty),
    EnumType(String),
    ErrorNs,
    ExternFn(String),
}

fn names(fs: &[crate::env::FieldTy]) -> String {
    fs.iter()
        .map(|f| f.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

impl Lowerer<'_> {
    pub fn resolve(&self, sc: &Scope, e: &Expr) -> Res<Ref> {
        match e {
            Expr::Name(n, loc) => self.resolve_name(sc, n, *loc),
            Expr::Member(b, m, loc) => {
                let base = self.resolve(sc, b)?;
                self.member(base, m, *loc, b)
            }
            Expr::Index(b, i, loc) => {
                let base = self.resolve(sc, b)?;
                if let Ref::UnionStack {
                    name,
                    utype,
                    size,
                    next: false,
                } = &base
                {
                    return self.union_stack_index(name, utype, *size, i);
                }
                let Ref::Stack { name, htype, size } = base else {
                    return fail(*loc, "only header stacks can be indexed");
                };
                let idx = match self.env.const_value(i) {
                    Ok((v, _)) => v,
                    Err(_) => return self.runtime_element(sc, name, htype, i),
                };
                if idx >= u128::from(size) {
                    return fail(
                        i.loc(),
                        format!("index {idx} out of bounds of stack {name}[{size}]"),
                    );
                }
                Ok(Ref::Header {
                    inst: format!("{name}[{idx}]"),
                    htype,
                })
            }
            _ => fail(e.loc(), "expected a name, a field or a header here"),
        }
    }

    fn resolve_name(&self, sc: &Scope, n: &str, loc: Loc) -> Res<Ref> {
        if let Some(b) = sc.get(n) {
            return Ok(match b.clone() {
                Binding::Scalar(s, ty) => Ref::Field {
                    h: "scalars".into(),
                    f: s,
                    ty,
                },
                Binding::Param(i, t) => Ref::Param(i, t),
                Binding::Const(v, t) => Ref::Const(v, t),
                Binding::Headers(s) => Ref::Struct {
                    prefix: String::new(),
                    sname: s,
                    meta: false,
                },
                Binding::Meta(s) => Ref::Struct {
                    prefix: "userMetadata.".into(),
                    sname: s,
                    meta: true,
                },
                Binding::Std => Ref::Std,
                Binding::Packet => Ref::Packet,
                Binding::Extern(a, b, w) => Ref::Extern(a, b, w),
                Binding::Table(t) => Ref::Table(t),
                Binding::Action(a) => Ref::Action(a),
                Binding::Value(v, t) => Ref::Value(v, t),
                Binding::HeaderVar(inst, htype) => Ref::Header { inst, htype },
                Binding::StructVar(prefix, sname) => Ref::Struct {
                    prefix,
                    sname,
                    meta: true,
                },
                Binding::Alias(r) => *r,
            });
        }
        if self.env.enums.contains_key(n) {
            return Ok(Ref::EnumType(n.to_string()));
        }
        if n == "error" {
            return Ok(Ref::ErrorNs);
        }
        if self.env.extern_fns.contains_key(n) {
            return Ok(Ref::ExternFn(n.to_string()));
        }
        fail(loc, format!("'{n}' is not declared"))
    }

    fn member(&self, base: Ref, m: &str, loc: Loc, b: &Expr) -> Res<Ref> {
        let what = b.path().unwrap_or_else(|| "expression".into());
        match base {
            Ref::Struct { prefix, sname, meta } => {
                let fs = self.env.structs.get(&sname).map(Vec::as_slice).unwrap_or(&[]);
                let Some(f) = fs.iter().find(|f| f.name == m) else {
                    return fail(loc, format!("struct {sname} ({what}) has no field '{m}'; its fields: {}", names(fs)));
                };
                let path = format!("{prefix}{m}");
                Ok(match &f.ty {
                    Ty::Header(t) => Ref::Header { inst: path, htype: t.clone() },
                    Ty::Stack(t, n) => match &**t {
                        Ty::Header(t) => Ref::Stack { name: path, htype: t.clone(), size: *n },
                        Ty::Struct(u) => Ref::UnionStack { name: path, utype: u.clone(), size: *n, next: false },
                        _ => return fail(loc, "only header stacks are supported"),
                    },
                    Ty::Struct(t) => Ref::Struct { prefix: format!("{path}."), sname: t.clone(), meta },
                    t => Ref::Field {
                        h: "scalars".into(),
                        f: if meta { path } else { format!("_hdr.{path}") },
                        ty: t.clone(),
                    },
                })
            }
            Ref::Std => {
                let fs = self.env.structs.get("standard_metadata_t").map(Vec::as_slice).unwrap_or(&[]);
                match fs.iter().find(|f| f.name == m) {
                    Some(f) => Ok(Ref::Field { h: "standard_metadata".into(), f: m.into(), ty: f.ty.clone() }),
                    None => fail(loc, format!("standard_metadata_t has no field '{m}' in this v1model.p4")),
                }
            }
            Ref::Header { inst, htype } => {
                let fs = self.env.header_fields(&htype);
                match fs.iter().find(|f| f.name == m) {
                    Some(f) => Ok(Ref::Field { h: inst, f: m.into(), ty: f.ty.clone() }),
                    None => fail(loc, format!("header {htype} ({what}) has no field '{m}'; its fields: {}", names(fs))),
                }
            }
            Ref::Stack { name, htype, size } => match m {
                "next" => Ok(Ref::StackNext { name }),
                "last" => Ok(Ref::StackLast { name, htype }),
                "size" => Ok(Ref::Const(u128::from(size), Ty::Bit(32))),
                _ => fail(loc, format!("header stack {name} has no member '{m}' (next, last, size, push_front, pop_front)")),
            },
            Ref::Element { elem, htype } => self.element_member(elem, &htype, m, loc),
            r @ Ref::UnionStack { .. } => self.union_stack_member(r, m, loc),
            Ref::StackLast { name, htype } => {
                let fs = self.env.header_fields(&htype);
                match fs.iter().find(|f| f.name == m) {
                    Some(f) => Ok(Ref::StackLastField { stack: name, f: m.into(), ty: f.ty.clone() }),
                    None => fail(loc, format!("header {htype} has no field '{m}'; its fields: {}", names(fs))),
                }
            }
            Ref::EnumType(en) => {
                let info = &self.env.enums[&en];
                match info.members.iter().find(|x| x.0 == m) {
                    Some((_, v)) => Ok(Ref::Const(*v, info.width.map_or(Ty::Enum(en.clone()), |w| Ty::SerEnum(en.clone(), w)))),
                    None => fail(loc, format!("enum {en} has no member '{m}'")),
                }
            }
            Ref::ErrorNs => match self.env.errors.iter().position(|x| x == m) {
                Some(i) => Ok(Ref::Const(i as u128, Ty::Error)),
                None => fail(loc, format!("error '{m}' is not declared")),
            },
            _ => fail(loc, format!("{what} has no member '{m}'")),
        }
    }

    /// The JSON of an lvalue field, and its type.
    pub fn lvalue(&self, sc: &Scope, e: &Expr) -> Res<(Value, Ty)> {
        match self.resolve(sc, e)? {
            Ref::Field { h, f, ty } => Ok((field(&h, &f), ty)),
            Ref::ElementField { elem, pos, ty } => {
                Ok((crate::stack_index::field_json(elem, pos), ty))
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
                    Ok((crate::stack_index::field_value(elem, pos, &ty), ty))
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
                if t == Ty::Bool && o != "==" && o != "!=" {
                    return fail(loc, format!("{o} cannot compare bools"));
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
                Ok((crate::stack_index::valid_json(elem), Ty::Bool))
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

    /// `v` (of type `from`) converted for storing in a `to`.
    pub fn coerce(&self, v: Value, from: &Ty, to: &Ty, loc: Loc, what: &str) -> Res<Value> {
        match (from, to) {
            (Ty::Bool, Ty::Bool) => Ok(un("b2d", v)),
            (Ty::InfInt, Ty::Int(w)) => {
                if let Some(n) = v
                    .get("value")
                    .and_then(Value::as_str)
                    .and_then(parse_signed)
                {
                    if !fits_signed(n, *w) {
                        return fail(
                            loc,
                            format!("value {n} does not fit in {what} ({})", to.describe()),
                        );
                    }
                    if n < 0 {
                        return Ok(signed_hexstr(n as u128 & mask(*w), *w));
                    }
                }
                Ok(v)
            }
            (Ty::InfInt, t) if t.width().is_some() && *t != Ty::Bool => {
                if let Some(s) = v.get("value").and_then(Value::as_str) {
                    let n = u128::from_str_radix(s.trim_start_matches("0x"), 16).unwrap_or(0);
                    if n >> 127 != 0 && *t != Ty::Bool {
                        // a negative constant as bit<W>: its W-bit two's complement
                        return Ok(hexstr(n & mask(t.width().unwrap_or(128))));
                    }
                    if n > mask(t.width().unwrap_or(128)) {
                        // an unsized negative constant is its 128-bit two's complement
                        let shown = if n >> 127 != 0 {
                            (n as i128).to_string()
                        } else {
                            n.to_string()
                        };
                        return fail(
                            loc,
                            format!("value {shown} does not fit in {what} ({})", t.describe()),
                        );
                    }
                }
                Ok(v)
            }
            (a, b) if a == b => Ok(v),
            (Ty::SerEnum(_, a), Ty::Bit(b)) | (Ty::Bit(a), Ty::SerEnum(_, b)) if a == b => Ok(v),
            (Ty::Error, Ty::Error) => Ok(v),
            _ => fail(
                loc,
                format!(
                    "type mismatch: {} assigned to {what} of type {}; cast it with ({})",
                    from.describe(),
                    to.describe(),
                    to.describe()
                ),
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

/// A hexstr constant's value ("0x1f", "-0x1"); unsized negative constants are held as their
/// 128-bit two's complement, so a value with bit 127 set reads as negative.
fn parse_signed(s: &str) -> Option<i128> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s),
    };
    let n = u128::from_str_radix(digits.trim_start_matches("0x"), 16).ok()? as i128;
    Some(if neg { n.wrapping_neg() } else { n })
}

pub fn const_json(v: u128, t: &Ty) -> Value {
    match t {
        Ty::Bool => json!({"type": "bool", "value": v != 0}),
        Ty::Int(w) => signed_hexstr(v, *w),
        _ => hexstr(v),
    }
}

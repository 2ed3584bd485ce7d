//! Name resolution of expressions: what a name or a member access refers to (a field, a
//! header, a stack and its elements, a struct, a parameter, a constant, an extern, a table, ...).

use crate::ast::*;
use crate::diag::{fail, Loc, Res};
use crate::env::Ty;
use crate::lower::{Binding, Lowerer, Scope};
use serde_json::Value;

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
                if let Some(r) = self.header_struct_member(sc, b, m) {
                    return Ok(r);
                }
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
}

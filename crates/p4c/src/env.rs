//! The program's declarations by name, with types resolved: what name and type checking and
//! lowering look things up in.

use crate::ast::*;
use crate::diag::{fail, Loc, Res};
use std::collections::HashMap;

mod consts;
pub(crate) mod header_structs;

/// A resolved type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ty {
    Bit(u32),
    Int(u32),
    /// `varbit<W>`: a header's variable-length field (W its maximum width).
    Varbit(u32),
    Bool,
    /// An integer literal without width.
    InfInt,
    Header(String),
    Struct(String),
    Stack(Box<Ty>, u32),
    /// Plain enum (no representation), its name.
    Enum(String),
    /// Serializable enum: name, representation width.
    SerEnum(String, u32),
    Error,
    Str,
    Void,
    /// Instance of an extern, parser or control type.
    Object(String),
    /// A list `{a, b}` (arguments of hash, checksums).
    List,
}

impl Ty {
    pub fn describe(&self) -> String {
        match self {
            Ty::Bit(w) => format!("bit<{w}>"),
            Ty::Int(w) => format!("int<{w}>"),
            Ty::Varbit(w) => format!("varbit<{w}>"),
            Ty::Bool => "bool".into(),
            Ty::InfInt => "int".into(),
            Ty::Header(n) | Ty::Struct(n) | Ty::Enum(n) | Ty::SerEnum(n, _) | Ty::Object(n) => {
                n.clone()
            }
            Ty::Stack(t, n) => format!("{}[{n}]", t.describe()),
            Ty::Error => "error".into(),
            Ty::Str => "string".into(),
            Ty::Void => "void".into(),
            Ty::List => "list".into(),
        }
    }

    /// Width of a bit-string-like type.
    pub fn width(&self) -> Option<u32> {
        match self {
            Ty::Bit(w) | Ty::Int(w) | Ty::SerEnum(_, w) => Some(*w),
            Ty::Bool => Some(1),
            Ty::Error => Some(32),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct FieldTy {
    pub name: String,
    pub ty: Ty,
    pub loc: Loc,
    /// The `type` it was declared with, if a new type (P4Info's `type_name`).
    pub type_name: Option<String>,
    pub annotations: Vec<Annotation>,
}

/// A `type` declaration: its width, and `@p4runtime_translation(uri, bits)` if given.
#[derive(Debug, Clone)]
pub struct NewType {
    pub width: u32,
    pub translation: Option<(String, u32)>,
}

#[derive(Debug, Clone)]
pub struct EnumInfo {
    pub members: Vec<(String, u128)>,
    pub width: Option<u32>,
}

#[derive(Default)]
pub struct Env {
    pub typedefs: HashMap<String, Ty>,
    pub new_types: HashMap<String, NewType>,
    pub headers: HashMap<String, Vec<FieldTy>>,
    pub header_order: Vec<String>,
    pub header_annotations: HashMap<String, Vec<Annotation>>,
    pub structs: HashMap<String, Vec<FieldTy>>,
    /// Header union types: also in `structs` (their members are headers), laid out as one.
    pub unions: std::collections::HashSet<String>,
    pub enums: HashMap<String, EnumInfo>,
    pub consts: HashMap<String, (u128, Ty)>,
    pub errors: Vec<String>,
    pub match_kinds: Vec<String>,
    /// Extern object types: methods (name, arity).
    pub externs: HashMap<String, Vec<(String, usize)>>,
    /// Extern functions: arity.
    pub extern_fns: HashMap<String, usize>,
    pub actions: Vec<ActionDecl>,
    pub instances: Vec<Instance>,
    pub parsers: HashMap<String, ParserDecl>,
    pub controls: HashMap<String, ControlDecl>,
}

/// `v`, the `w`-bit two's complement of a signed value, as that value.
pub fn sext(v: u128, w: u32) -> i128 {
    if w >= 128 {
        v as i128
    } else {
        ((v << (128 - w)) as i128) >> (128 - w)
    }
}

/// Whether `s` is in the range of int<w>.
pub fn fits_signed(s: i128, w: u32) -> bool {
    w >= 128 || (s >= -(1i128 << (w - 1)) && s < (1i128 << (w - 1)))
}

pub fn mask(w: u32) -> u128 {
    if w >= 128 {
        u128::MAX
    } else {
        (1u128 << w) - 1
    }
}

impl Env {
    pub fn build(decls: Vec<Decl>) -> Res<Env> {
        let mut e = Env {
            errors: [
                "NoError",
                "PacketTooShort",
                "NoMatch",
                "StackOutOfBounds",
                "HeaderTooShort",
                "ParserTimeout",
                "ParserInvalidArgument",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            ..Env::default()
        };
        for d in decls {
            match d {
                Decl::Const {
                    ty,
                    name,
                    value,
                    loc,
                } => {
                    let t = e.resolve(&ty)?;
                    let (v, vt) = e.const_value(&value)?;
                    let v = e.coerce_const(v, &vt, &t, loc)?;
                    e.consts.insert(name, (v, t));
                }
                Decl::Typedef {
                    name,
                    ty,
                    loc,
                    new_type,
                    annotations,
                } => {
                    e.fresh_type(&name, loc)?;
                    let t = e.resolve(&ty)?;
                    if new_type {
                        let translation =
                            annotation(&annotations, "p4runtime_translation").map(|a| {
                                let mut parts = a.body.splitn(2, ',');
                                let uri = parts
                                    .next()
                                    .unwrap_or("")
                                    .trim()
                                    .trim_matches('"')
                                    .to_string();
                                let bits = parts
                                    .next()
                                    .and_then(|b| b.trim().parse().ok())
                                    .unwrap_or(0);
                                (uri, bits)
                            });
                        e.new_types.insert(
                            name.clone(),
                            NewType {
                                width: t.width().unwrap_or(0),
                                translation,
                            },
                        );
                    }
                    e.typedefs.insert(name, t);
                }
                Decl::Header {
                    name,
                    fields,
                    annotations,
                    loc,
                } => {
                    e.fresh_type(&name, loc)?;
                    let fs = e.fields(&fields, true)?;
                    e.header_order.push(name.clone());
                    e.header_annotations.insert(name.clone(), annotations);
                    e.headers.insert(name, fs);
                }
                Decl::Struct { name, fields, loc } => {
                    e.fresh_type(&name, loc)?;
                    let fs = e.fields(&fields, false)?;
                    e.structs.insert(name, fs);
                }
                Decl::HeaderUnion { loc, name, fields } => {
                    e.fresh_type(&name, loc)?;
                    let fs = e.fields(&fields, false)?;
                    if let Some(f) = fs.iter().find(|f| !matches!(f.ty, Ty::Header(_))) {
                        let t = f.ty.describe();
                        return fail(
                            loc,
                            format!(
                                "header union '{name}': member '{}' is {t}, not a header",
                                f.name
                            ),
                        );
                    }
                    e.unions.insert(name.clone());
                    e.structs.insert(name, fs);
                }
                Decl::Enum {
                    name,
                    repr,
                    members,
                    loc,
                } => {
                    let width = match &repr {
                        Some(t) => match e.resolve(t)? {
                            Ty::Bit(w) => Some(w),
                            _ => {
                                return fail(
                                    loc,
                                    "a serializable enum needs a bit<W> representation",
                                )
                            }
                        },
                        None => None,
                    };
                    let mut ms = Vec::new();
                    for (i, (m, v, mloc)) in members.into_iter().enumerate() {
                        let val = match (&v, width) {
                            (Some(x), Some(w)) => {
                                let (c, ct) = e.const_value(x)?;
                                e.coerce_const(c, &ct, &Ty::Bit(w), mloc)?
                            }
                            (None, Some(_)) => {
                                return fail(
                                    mloc,
                                    format!(
                                        "member '{m}' of serializable enum '{name}' needs a value"
                                    ),
                                )
                            }
                            _ => i as u128,
                        };
                        ms.push((m, val));
                    }
                    e.enums.insert(name, EnumInfo { members: ms, width });
                }
                Decl::Error { members } => {
                    for (m, _) in members {
                        if !e.errors.contains(&m) {
                            e.errors.push(m);
                        }
                    }
                }
                Decl::MatchKind { members } => {
                    e.match_kinds.extend(members.into_iter().map(|m| m.0))
                }
                Decl::Extern {
                    name,
                    methods,
                    is_function,
                    ..
                } => {
                    if is_function {
                        e.extern_fns.insert(name, methods[0].1);
                    } else {
                        e.externs.insert(name, methods);
                    }
                }
                Decl::Parser(p) => {
                    e.parsers.insert(p.name.clone(), *p);
                }
                Decl::Control(c) => {
                    e.controls.insert(c.name.clone(), *c);
                }
                Decl::Action(a) => e.actions.push(a),
                Decl::Instance(i) => e.instances.push(i),
                Decl::Signature | Decl::Function(_) => {}
                Decl::ValueSet { loc, .. } => {
                    return fail(loc, "parser value sets (value_set) are not supported")
                }
            }
        }
        Ok(e)
    }

    /// The name of the `type` a declaration uses, if it is a new type.
    pub fn new_type_name(&self, t: &Type) -> Option<String> {
        match t {
            Type::Named(n, _, _) if self.new_types.contains_key(n) => Some(n.clone()),
            _ => None,
        }
    }

    /// Refuses a second declaration of a type name.
    fn fresh_type(&self, name: &str, loc: Loc) -> Res<()> {
        if self.typedefs.contains_key(name)
            || self.headers.contains_key(name)
            || self.structs.contains_key(name)
        {
            return fail(loc, format!("type '{name}' is declared twice"));
        }
        Ok(())
    }

    fn fields(&self, fields: &[Field], header: bool) -> Res<Vec<FieldTy>> {
        let mut out: Vec<FieldTy> = Vec::new();
        for f in fields {
            let ty = self.resolve(&f.ty)?;
            if out.iter().any(|o| o.name == f.name) {
                return fail(f.loc, format!("duplicate field '{}'", f.name));
            }
            if let (true, Ty::Struct(s)) = (header, &ty) {
                header_structs::expand(self, f, s, &mut out)?;
                continue;
            }
            if let Some(v) = out.iter().find(|o| matches!(o.ty, Ty::Varbit(_))) {
                // the switch lays a varbit out after the header's fixed fields
                return fail(
                    f.loc,
                    format!(
                        "field '{}' follows varbit field '{}': a varbit must be its header's last field",
                        f.name, v.name
                    ),
                );
            }
            if header {
                match ty {
                    Ty::Bit(_) | Ty::Int(_) | Ty::SerEnum(..) | Ty::Bool | Ty::Varbit(_) => {}
                    _ => {
                        return fail(
                            f.loc,
                            format!(
                                "header field '{}' must be bit<W>, int<W> or varbit<W>, found {}",
                                f.name,
                                ty.describe()
                            ),
                        )
                    }
                }
            }
            out.push(FieldTy {
                name: f.name.clone(),
                ty,
                loc: f.loc,
                type_name: self.new_type_name(&f.ty),
                annotations: f.annotations.clone(),
            });
        }
        Ok(out)
    }

    pub fn resolve(&self, t: &Type) -> Res<Ty> {
        Ok(match t {
            Type::Bit(w) => Ty::Bit(self.width(w)?),
            Type::Int(w) => Ty::Int(self.width(w)?),
            Type::Varbit(w) => Ty::Varbit(self.width(w)?),
            Type::Bool => Ty::Bool,
            Type::Void => Ty::Void,
            Type::Error => Ty::Error,
            Type::Str => Ty::Str,
            Type::DontCare => Ty::List,
            Type::UnsizedInt => Ty::InfInt,
            Type::Infer => {
                return fail(
                    Loc::default(),
                    "a temporary's type is known only from its initialiser",
                )
            }
            Type::Tuple(ts) => {
                for t in ts {
                    self.resolve(t)?;
                }
                Ty::List
            }
            Type::Stack(t, n) => {
                let et = self.resolve(t)?;
                let union = matches!(&et, Ty::Struct(s) if self.unions.contains(s));
                if !matches!(et, Ty::Header(_)) && !union {
                    return fail(
                        n.loc(),
                        "only header stacks are supported (T[n] with T a header or header_union)",
                    );
                }
                Ty::Stack(Box::new(et), self.width(n)?)
            }
            Type::Named(n, _, loc) => {
                if let Some(t) = self.typedefs.get(n) {
                    t.clone()
                } else if self.headers.contains_key(n) {
                    Ty::Header(n.clone())
                } else if self.structs.contains_key(n) {
                    Ty::Struct(n.clone())
                } else if let Some(e) = self.enums.get(n) {
                    match e.width {
                        Some(w) => Ty::SerEnum(n.clone(), w),
                        None => Ty::Enum(n.clone()),
                    }
                } else if self.externs.contains_key(n)
                    || matches!(n.as_str(), "packet_in" | "packet_out")
                {
                    Ty::Object(n.clone())
                } else if n.len() == 1 || n == "H" || n == "M" {
                    Ty::List // a type parameter of a prototype
                } else {
                    return fail(*loc, format!("unknown type '{n}'"));
                }
            }
        })
    }

    fn width(&self, e: &Expr) -> Res<u32> {
        let (v, _) = self.const_value(e)?;
        if v == 0 || v > 4096 {
            return fail(e.loc(), format!("width {v} out of range"));
        }
        Ok(v as u32)
    }

    pub fn header_fields(&self, h: &str) -> &[FieldTy] {
        self.headers.get(h).map(Vec::as_slice).unwrap_or(&[])
    }
}

//! Lowering to bmv2 JSON: the program's layout (header types, header instances, stacks, the
//! scalars of metadata and locals), the name scopes lowering resolves in, and the driver that
//! lowers each block of `V1Switch(...) main`.

pub(crate) mod action;
mod calc;
mod coerce;
mod control;
mod equality;
pub(crate) mod expr;
mod externs;
mod for_loop;
mod header_structs;
mod names;
mod parser;
mod profile;
mod psa_extern;
pub(crate) mod stack_index;
mod table;
pub(crate) mod union_stack;

use crate::ast::*;
use crate::diag::{fail, Loc, Res};
use crate::env::{Env, Ty};
use crate::lower::expr::Ref;
use serde_json::{json, Value};
use std::collections::HashMap;

/// What a name stands for while lowering.
#[derive(Debug, Clone)]
pub enum Binding {
    /// A field of the `scalars` header (metadata fields and local variables).
    Scalar(String, Ty),
    /// An action parameter (runtime data index).
    Param(u32, Ty),
    /// A constant.
    Const(u128, Ty),
    /// The block parameter of type H (headers), M (metadata), standard_metadata_t or a packet.
    Headers(String),
    Meta(String),
    Std,
    Packet,
    /// An extern instance: its JSON name, extern type, element width (registers).
    Extern(String, String, u32),
    Table(String),
    Action(String),
    /// A directly used value (a table-less action's argument bound at call time).
    Value(Value, Ty),
    /// A header-typed local variable: its header instance and type.
    HeaderVar(String, String),
    /// A struct-typed local variable: the prefix of its fields' names and the struct type.
    StructVar(String, String),
    /// A parameter standing for its argument (an out / inout argument not copied).
    Alias(Box<crate::lower::expr::Ref>),
}

#[derive(Default, Clone)]
pub struct Scope {
    pub frames: Vec<HashMap<String, Binding>>,
    /// Qualified name of the enclosing control or parser, e.g. "MyIngress".
    pub block: String,
    /// True inside a parser (lookahead allowed, `set` instead of `assign`).
    pub in_parser: bool,
}

impl Scope {
    pub fn get(&self, n: &str) -> Option<&Binding> {
        self.frames.iter().rev().find_map(|f| f.get(n))
    }
    pub fn push(&mut self) {
        self.frames.push(HashMap::new());
    }
    pub fn pop(&mut self) {
        self.frames.pop();
    }
    pub fn bind(&mut self, n: &str, b: Binding) {
        if self.frames.is_empty() {
            self.push();
        }
        if let Some(f) = self.frames.last_mut() {
            f.insert(n.to_string(), b);
        }
    }
}

/// A header instance of the JSON `headers` list.
pub struct HeaderInst {
    pub name: String,
    pub htype: String,
    /// A local `varbit<W>` variable: a metadata instance of `$varbitW` (one field, "field"),
    /// as p4c makes one, since a header holds at most one varbit.
    pub metadata: bool,
}

/// A header union instance: its path and member header instances, in declaration order.
pub struct UnionInst {
    pub name: String,
    pub utype: String,
    pub members: Vec<String>,
}

pub struct StackInst {
    pub name: String,
    pub htype: String,
    pub size: u32,
}

pub struct Lowerer<'e> {
    pub env: &'e Env,
    pub file_name: String,
    /// Each source file's name and lines, by `Loc::file`: where primitives' `source_info`
    /// fragments come from (empty when the caller gave none).
    pub sources: Vec<(String, Vec<String>)>,
    /// Name, width and signedness (int<W>) of each scalar.
    pub scalars: Vec<(String, u32, bool)>,
    pub header_insts: Vec<HeaderInst>,
    pub stacks: Vec<StackInst>,
    pub unions: Vec<UnionInst>,
    /// Header union stacks (`htype`: the union type), crates/p4c/src/union_stack.rs.
    pub union_stacks: Vec<StackInst>,
    pub actions: Vec<Value>,
    /// Qualified action name -> JSON id of its one copy.
    pub action_ids: HashMap<String, u64>,
    pub calculations: Vec<Value>,
    pub checksums: Vec<Value>,
    pub counters: Vec<Value>,
    pub meters: Vec<Value>,
    pub registers: Vec<Value>,
    /// Tables of the pipeline being lowered.
    pub tables: Vec<Value>,
    pub conditionals: Vec<Value>,
    /// Names already used for synthesized nodes.
    pub used_names: HashMap<String, u32>,
    /// User tables (for P4Info): qualified name, JSON of the table, annotations.
    pub p4_tables: Vec<crate::lower::table::TableInfo>,
    /// Names bound at the top level besides constants and actions (extern instances).
    pub globals: Vec<(String, Binding)>,
    /// Scalars declared with a new type (`type`): scalar name -> type name.
    pub scalar_types: HashMap<String, String>,
    /// Per action (qualified name): the new type of each parameter, if any.
    pub action_param_types: HashMap<String, Vec<Option<String>>>,
    /// Annotations of extern instances by JSON name (for @id).
    pub extern_annotations: HashMap<String, Vec<Annotation>>,
    /// PSA `Hash` instances: the algorithm each was constructed with.
    pub hash_algos: HashMap<String, Expr>,
    /// PSA `InternetChecksum` instances: the scalar holding each one's running sum.
    pub csum_states: HashMap<String, String>,
    /// Actions declared by the program with their annotations (qualified name -> annotations).
    pub action_annotations: HashMap<String, Vec<Annotation>>,
    /// Actions called directly (inlined where called), by qualified name: P4Info lists them.
    pub called_actions: Vec<(String, crate::ast::ActionDecl)>,
    /// How many action bodies are being lowered (an action called from another is not listed).
    pub action_depth: u32,
    /// Per action body being lowered (innermost last): where its `return`s jump from.
    pub return_jumps: Vec<Vec<usize>>,
    /// The JSON `field_lists` (metadata a clone, resubmit or recirculation keeps).
    pub field_lists: Vec<Value>,
    /// The JSON `learn_lists` (what a digest carries).
    pub learn_lists: Vec<Value>,
    /// Digests for P4Info, one per struct type.
    pub digests: Vec<crate::lower::externs::DigestInfo>,
    /// Action profiles and selectors of the pipeline being lowered (JSON).
    pub action_profiles: Vec<Value>,
    /// Every action profile and selector (for P4Info).
    pub profiles: Vec<crate::lower::profile::ProfileInfo>,
    /// The pipeline being lowered: "ingress", "egress", or empty.
    pub pipeline: String,
    /// Names of the profiles written in a table's `implementation`, by (control, table).
    pub anonymous_profiles: HashMap<(String, String), String>,
    /// The JSON `parse_vsets` (parser value sets).
    pub value_sets: Vec<Value>,
    /// Per `for` loop being lowered (innermost last): its `break`s and `continue`s.
    pub loops: Vec<crate::lower::for_loop::LoopJumps>,
}

pub fn field(h: &str, f: &str) -> Value {
    json!({"type": "field", "value": [h, f]})
}

pub fn hexstr(v: u128) -> Value {
    json!({"type": "hexstr", "value": format!("{v:#x}")})
}

/// A constant of int<w> (`v` its w-bit two's complement): negative values as "-0x..", as p4c.
pub fn signed_hexstr(v: u128, w: u32) -> Value {
    let s = crate::env::sext(v, w);
    let text = if s < 0 {
        format!("-{:#x}", s.unsigned_abs())
    } else {
        format!("{s:#x}")
    };
    json!({"type": "hexstr", "value": text})
}

pub fn op(o: &str, l: Value, r: Value) -> Value {
    json!({"type": "expression", "value": {"op": o, "left": l, "right": r}})
}

pub fn un(o: &str, r: Value) -> Value {
    json!({"type": "expression", "value": {"op": o, "left": null, "right": r}})
}

impl<'e> Lowerer<'e> {
    pub fn new(env: &'e Env, file_name: String) -> Self {
        Lowerer {
            env,
            file_name,
            sources: Vec::new(),
            scalars: Vec::new(),
            header_insts: Vec::new(),
            stacks: Vec::new(),
            union_stacks: Vec::new(),
            unions: Vec::new(),
            actions: Vec::new(),
            action_ids: HashMap::new(),
            calculations: Vec::new(),
            checksums: Vec::new(),
            counters: Vec::new(),
            meters: Vec::new(),
            registers: Vec::new(),
            tables: Vec::new(),
            conditionals: Vec::new(),
            used_names: HashMap::new(),
            p4_tables: Vec::new(),
            globals: Vec::new(),
            scalar_types: HashMap::new(),
            action_param_types: HashMap::new(),
            extern_annotations: HashMap::new(),
            hash_algos: HashMap::new(),
            csum_states: HashMap::new(),
            action_annotations: HashMap::new(),
            called_actions: Vec::new(),
            action_depth: 0,
            return_jumps: Vec::new(),
            field_lists: Vec::new(),
            learn_lists: Vec::new(),
            digests: Vec::new(),
            action_profiles: Vec::new(),
            profiles: Vec::new(),
            pipeline: String::new(),
            anonymous_profiles: HashMap::new(),
            value_sets: Vec::new(),
            loops: Vec::new(),
        }
    }

    /// A fresh name from `base`: `base`, then `base_0`, `base_1`, ...
    pub fn fresh(&mut self, base: &str) -> String {
        let n = self.used_names.entry(base.to_string()).or_insert(0);
        let name = if *n == 0 {
            base.to_string()
        } else {
            format!("{base}_{}", *n - 1)
        };
        *n += 1;
        name
    }

    /// Adds a scalar field; its JSON reference is `["scalars", name]`.
    pub fn add_scalar(&mut self, name: &str, ty: &Ty, loc: Loc) -> Res<String> {
        let w = match ty {
            Ty::Bit(w) | Ty::Int(w) | Ty::SerEnum(_, w) => *w,
            Ty::Bool => 1,
            // a plain enum is a 32-bit number in bmv2, as p4c lowers it
            Ty::Error | Ty::Enum(_) => 32,
            t => {
                return fail(
                    loc,
                    format!("variables of type {} are not supported here", t.describe()),
                )
            }
        };
        let name = self.fresh(name);
        self.scalars
            .push((name.clone(), w, matches!(ty, Ty::Int(_))));
        Ok(name)
    }

    /// Header instances and scalars of the headers struct `h` and the metadata struct `m`.
    pub fn layout(&mut self, h: &str, m: &str, loc: Loc) -> Res<()> {
        self.struct_layout(h, "", false, loc)?;
        self.struct_layout(m, "userMetadata.", true, loc)
    }

    pub fn struct_layout(&mut self, s: &str, prefix: &str, meta: bool, loc: Loc) -> Res<()> {
        let Some(fields) = self.env.structs.get(s).cloned() else {
            return fail(loc, format!("'{s}' must be a struct"));
        };
        if self.env.unions.contains(s) {
            self.unions.push(UnionInst {
                name: prefix.trim_end_matches('.').to_string(),
                utype: s.to_string(),
                members: fields
                    .iter()
                    .map(|f| format!("{prefix}{}", f.name))
                    .collect(),
            });
        }
        for f in fields {
            let path = format!("{prefix}{}", f.name);
            match &f.ty {
                Ty::Header(t) => self.header_insts.push(HeaderInst {
                    name: path,
                    htype: t.clone(),
                    metadata: false,
                }),
                Ty::Stack(t, n) => {
                    let Ty::Header(t) = &**t else {
                        if let Ty::Struct(u) = &**t {
                            self.union_stack_layout(&path, u, *n, meta, f.loc)?;
                        }
                        continue;
                    };
                    for i in 0..*n {
                        self.header_insts.push(HeaderInst {
                            name: format!("{path}[{i}]"),
                            htype: t.clone(),
                            metadata: false,
                        });
                    }
                    self.stacks.push(StackInst {
                        name: path,
                        htype: t.clone(),
                        size: *n,
                    });
                }
                Ty::Struct(t) => self.struct_layout(t, &format!("{path}."), meta, f.loc)?,
                t => {
                    let name = if meta { path } else { format!("_hdr.{path}") };
                    let s = self.add_scalar(&name, t, f.loc)?;
                    if let Some(n) = &f.type_name {
                        self.scalar_types.insert(s, n.clone());
                    }
                }
            }
        }
        Ok(())
    }

    /// Declares a local variable `name` (`full`: its qualified name): a scalar; a header
    /// instance for a header type; the fields (scalars, headers) of a struct type, as p4c does.
    pub fn declare_var(
        &mut self,
        sc: &mut Scope,
        full: &str,
        name: &str,
        ty: &Type,
        init: Option<&Expr>,
        loc: Loc,
    ) -> Res<()> {
        let t = match (ty, init) {
            (Type::Infer, Some(e)) => match self.rvalue(sc, e) {
                Ok((_, Ty::InfInt)) => Ty::Bit(128),
                Ok((_, t)) => t,
                // a temporary holding a header, stack or struct (a list element kept in order)
                Err(err) => match self.resolve(sc, e) {
                    Ok(Ref::Header { htype, .. }) => Ty::Header(htype),
                    Ok(Ref::Struct { sname, .. }) => Ty::Struct(sname),
                    Ok(Ref::Stack { htype, size, .. }) => {
                        Ty::Stack(Box::new(Ty::Header(htype)), size)
                    }
                    _ => return Err(err),
                },
            },
            _ => self.env.resolve(ty)?,
        };
        match &t {
            Ty::Header(h) => {
                let inst = self.fresh(full);
                self.header_insts.push(HeaderInst {
                    name: inst.clone(),
                    htype: h.clone(),
                    metadata: false,
                });
                sc.bind(name, Binding::HeaderVar(inst, h.clone()));
            }
            Ty::Stack(elem, size) if matches!(&**elem, Ty::Header(_)) => {
                let Ty::Header(h) = &**elem else {
                    return Ok(());
                };
                let stack = self.fresh(full);
                for i in 0..*size {
                    self.header_insts.push(HeaderInst {
                        name: format!("{stack}[{i}]"),
                        htype: h.clone(),
                        metadata: false,
                    });
                }
                self.stacks.push(StackInst {
                    name: stack.clone(),
                    htype: h.clone(),
                    size: *size,
                });
                let r = Ref::Stack {
                    name: stack,
                    htype: h.clone(),
                    size: *size,
                };
                sc.bind(name, Binding::Alias(Box::new(r)));
            }
            Ty::Varbit(w) => {
                let inst = self.fresh(full);
                self.header_insts.push(HeaderInst {
                    name: inst.clone(),
                    htype: format!("$varbit{w}"),
                    metadata: true,
                });
                let r = crate::lower::expr::Ref::Field {
                    h: inst,
                    f: "field".into(),
                    ty: t.clone(),
                };
                sc.bind(name, Binding::Alias(Box::new(r)));
            }
            Ty::Struct(s) => {
                let prefix = format!("{}.", self.fresh(full));
                self.struct_layout(s, &prefix, true, loc)?;
                sc.bind(name, Binding::StructVar(prefix, s.clone()));
            }
            _ => {
                let f = self.add_scalar(full, &t, loc)?;
                if let Some(n) = self.env.new_type_name(ty) {
                    self.scalar_types.insert(f.clone(), n);
                }
                sc.bind(name, Binding::Scalar(f, t));
            }
        }
        Ok(())
    }

    pub fn action_id(&self, name: &str) -> Option<u64> {
        self.action_ids.get(name).copied()
    }

    /// The top-level scope: constants, extern instances, actions declared outside controls.
    pub fn global_scope(&self) -> Scope {
        let mut sc = Scope::default();
        sc.push();
        for (n, (v, t)) in &self.env.consts {
            sc.bind(n, Binding::Const(*v, t.clone()));
        }
        for a in &self.env.actions {
            sc.bind(&a.name, Binding::Action(a.name.clone()));
        }
        for (n, b) in &self.globals {
            sc.bind(n, b.clone());
        }
        sc
    }

    /// JSON object with the standard `source_info`.
    pub fn source_info(&self, loc: Loc, fragment: &str) -> Value {
        json!({"filename": self.file_name, "line": loc.line, "column": loc.col, "source_fragment": fragment})
    }

    /// Gives the primitives one statement became its `source_info` (bmv2's trace prints it
    /// before each primitive); a primitive that has one already keeps it.
    pub(crate) fn tag_source(&self, prims: &mut [Value], loc: Loc) {
        let Some(si) = self.statement_source(loc) else {
            return;
        };
        for p in prims.iter_mut() {
            if let Some(o) = p.as_object_mut() {
                o.entry("source_info").or_insert_with(|| si.clone());
            }
        }
    }

    /// A statement's `source_info` as p4c writes it on a primitive: its file, line and column,
    /// and its text up to the `;` on that line. None when the source is not known.
    pub fn statement_source(&self, loc: Loc) -> Option<Value> {
        let (name, lines) = self.sources.get(loc.file as usize)?;
        let line = lines.get((loc.line as usize).checked_sub(1)?)?;
        let from: String = line
            .chars()
            .skip((loc.col as usize).saturating_sub(1))
            .collect();
        let text = from.split(';').next().unwrap_or("").trim();
        if text.is_empty() {
            return None;
        }
        let name = if loc.file == 0 { &self.file_name } else { name };
        Some(
            json!({"filename": name, "line": loc.line, "column": loc.col, "source_fragment": text}),
        )
    }
}

/// Binds a block's parameters (hdr, meta, standard_metadata, packet) by their types.
pub fn bind_params(
    env: &Env,
    sc: &mut Scope,
    params: &[Param],
    hdr_struct: &str,
    meta_struct: &str,
) -> Res<()> {
    for p in params {
        let b = match &p.ty {
            Type::Named(n, _, _) if n == "packet_in" || n == "packet_out" => Binding::Packet,
            Type::Named(n, _, _) if n == "standard_metadata_t" => Binding::Std,
            t => match env.resolve(t)? {
                Ty::Struct(s) if s == hdr_struct => Binding::Headers(s),
                Ty::Struct(s) if s == meta_struct => Binding::Meta(s),
                Ty::Struct(s) if crate::arch::psa_prefix(&s).is_some() => {
                    let prefix = crate::arch::psa_prefix(&s).unwrap_or_default();
                    Binding::StructVar(prefix, s)
                }
                // PSA's resubmit, recirculate, clone and normal metadata: lanes carries none
                Ty::Struct(s) if env.structs.contains_key("psa_ingress_output_metadata_t") => {
                    if env.structs.get(&s).is_some_and(|f| !f.is_empty()) {
                        return fail(p.loc, format!("parameter '{}': PSA {s} with fields is not supported (lanes carries no resubmit, recirculate, clone or normal metadata between blocks: declare it as an empty struct)", p.name));
                    }
                    Binding::StructVar(format!("{}.", p.name), s)
                }
                other => {
                    return fail(p.loc, format!("parameter '{}' of type {} is not one of v1model's (headers, metadata, standard_metadata_t)", p.name, other.describe()))
                }
            },
        };
        sc.bind(&p.name, b);
    }
    Ok(())
}

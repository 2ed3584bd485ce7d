//! v1model's extern functions called in actions (drop, clone and its field-list forms, resubmit,
//! recirculate, digest, random, hash, truncate, log_msg), and the field lists and learn lists
//! they need, numbered as p4c numbers them: field lists from 1 in one sequence, the
//! `field_listN` lists of user metadata fields annotated `@field_list(N)` first (built before
//! anything else), then an empty list `fl` per `clone` and one per older-form call; learn lists
//! from 1, one per `digest` call, named after the digest's struct type.

use crate::ast::*;
use crate::diag::{fail, Loc, Res};
use crate::env::Ty;
use crate::lower::action::{header, prim};
use crate::lower::expr::Ref;
use crate::lower::{field, hexstr, Lowerer, Scope};
use serde_json::{json, Value};

/// A digest for P4Info: the struct type it carries and its members.
#[derive(Debug, Clone)]
pub struct DigestInfo {
    pub name: String,
    pub members: Vec<(String, Ty)>,
}

/// One field of the data a field list or learn list names: member name, JSON field, type.
type DataField = (String, Value, Ty);

impl Lowerer<'_> {
    /// The `field_listN` lists: user metadata fields annotated `@field_list(N, ...)`, in
    /// declaration order (p4c builds them before lowering the parser).
    pub fn annotated_field_lists(&mut self, meta: &str) -> Res<()> {
        let fields = self.env.structs.get(meta).cloned().unwrap_or_default();
        let mut by_index: Vec<(u128, usize)> = Vec::new();
        for f in &fields {
            let Some(a) = annotation(&f.annotations, "field_list") else {
                continue;
            };
            if !matches!(f.ty, Ty::Bit(_) | Ty::Bool | Ty::SerEnum(..)) {
                return fail(
                    a.loc,
                    format!(
                        "@field_list on '{}' of type {}: only bit<W>, bool and enum fields of the user metadata can be preserved",
                        f.name,
                        f.ty.describe()
                    ),
                );
            }
            let scalar = format!("userMetadata.{}", f.name);
            for e in crate::parse::annotation_exprs(a)? {
                let (index, _) = self.env.const_value(&e)?;
                let pos = match by_index.iter().find(|x| x.0 == index) {
                    Some(x) => x.1,
                    None => {
                        self.new_field_list(format!("field_list{index}"), Vec::new());
                        by_index.push((index, self.field_lists.len() - 1));
                        self.field_lists.len() - 1
                    }
                };
                if let Some(els) = self.field_lists[pos]["elements"].as_array_mut() {
                    els.push(field("scalars", &scalar));
                }
            }
        }
        Ok(())
    }

    fn new_field_list(&mut self, name: String, elements: Vec<Value>) -> u64 {
        let id = self.field_lists.len() as u64 + 1;
        self.field_lists
            .push(json!({"id": id, "name": name, "elements": elements}));
        id
    }

    /// The id of list `field_listN` for the constant index argument `e`; an empty list when no
    /// field carries that index (p4c warns and does the same).
    fn field_list_for_index(&mut self, sc: &Scope, e: &Expr) -> Res<u64> {
        let index = self.const_arg(sc, e, "the field list index")?;
        let name = format!("field_list{index}");
        if let Some(l) = self.field_lists.iter().find(|l| l["name"] == name.as_str()) {
            return Ok(l["id"].as_u64().unwrap_or(0));
        }
        let empty = self.fresh("empty");
        Ok(self.new_field_list(empty, Vec::new()))
    }

    fn const_arg(&self, sc: &Scope, e: &Expr, what: &str) -> Res<u128> {
        if let Ok((v, _)) = self.env.const_value(e) {
            return Ok(v);
        }
        match self.resolve(sc, e) {
            Ok(Ref::Const(v, _)) => Ok(v),
            _ => fail(e.loc(), format!("{what} must be a compile-time constant")),
        }
    }

    /// The fields `e` names, in order: a field, every field of a struct or header (nested
    /// structs flattened), or a list of these. Other values are copied into scalars first when
    /// `pre` is given (the statements of an action), as p4c does for digest data.
    fn data_fields(
        &mut self,
        sc: &Scope,
        e: &Expr,
        name: &str,
        pre: &mut Option<&mut Vec<Value>>,
        out: &mut Vec<DataField>,
    ) -> Res<()> {
        if let Expr::List(items, _) = e {
            for (i, it) in items.iter().enumerate() {
                let n = it.path().map_or(format!("field_{i}"), |p| last(&p));
                self.data_fields(sc, it, &n, pre, out)?;
            }
            return Ok(());
        }
        let member_names: Option<Vec<String>> = match self.resolve(sc, e) {
            Ok(Ref::Field { h, f, ty }) => {
                out.push((name.to_string(), field(&h, &f), ty));
                return Ok(());
            }
            Ok(Ref::Struct { sname, .. }) => self.env.structs.get(&sname).map(|fs| names(fs)),
            Ok(Ref::Std) => self
                .env
                .structs
                .get("standard_metadata_t")
                .map(|fs| names(fs)),
            Ok(Ref::Header { htype, .. }) => Some(names(self.env.header_fields(&htype))),
            _ => None,
        };
        match member_names {
            Some(ms) => {
                for m in ms {
                    let me = Expr::Member(Box::new(e.clone()), m.clone(), e.loc());
                    self.data_fields(sc, &me, &m, pre, out)?;
                }
            }
            None => {
                let Some(stmts) = pre.as_deref_mut() else {
                    return fail(e.loc(), "a field list holds fields, headers or structs");
                };
                let (v, t) = self.rvalue(sc, e)?;
                let t = match t {
                    Ty::InfInt => {
                        return fail(e.loc(), "a constant in digest data needs a width, e.g. 8w0")
                    }
                    t => t,
                };
                let tmp = self.add_scalar("tmp", &t, e.loc())?;
                let v = if t == Ty::Bool {
                    crate::lower::un("b2d", v)
                } else {
                    v
                };
                stmts.push(prim("assign", vec![field("scalars", &tmp), v]));
                out.push((name.to_string(), field("scalars", &tmp), t));
            }
        }
        Ok(())
    }

    fn only_in(&self, loc: Loc, f: &str, pipeline: &str) -> Res<()> {
        if self.pipeline != pipeline {
            return fail(
                loc,
                format!(
                    "{f} can only be called in {pipeline} (v1model), here it is in an action of {}",
                    if self.pipeline.is_empty() {
                        "neither pipeline"
                    } else {
                        &self.pipeline
                    }
                ),
            );
        }
        Ok(())
    }

    /// `clone_ingress_pkt_to_egress` or `clone_egress_pkt_to_egress` from a CloneType argument.
    fn clone_prim(&self, sc: &Scope, f: &str, kind: &Expr) -> Res<&'static str> {
        match self.resolve(sc, kind)? {
            Ref::Const(0, Ty::Enum(e)) if e == "CloneType" => {
                self.only_in(kind.loc(), &format!("{f}(CloneType.I2E, ...)"), "ingress")?;
                Ok("clone_ingress_pkt_to_egress")
            }
            Ref::Const(_, Ty::Enum(e)) if e == "CloneType" => {
                self.only_in(kind.loc(), &format!("{f}(CloneType.E2E, ...)"), "egress")?;
                Ok("clone_egress_pkt_to_egress")
            }
            _ => fail(
                kind.loc(),
                format!("{f}'s first argument must be CloneType.I2E or CloneType.E2E"),
            ),
        }
    }

    /// A field list holding the fields `data` names (the older clone3 / resubmit / recirculate).
    fn data_field_list(&mut self, sc: &Scope, data: &Expr, name: String) -> Res<u64> {
        let mut fields = Vec::new();
        self.data_fields(sc, data, "", &mut None, &mut fields)?;
        let elements = fields.into_iter().map(|f| f.1).collect();
        Ok(self.new_field_list(name, elements))
    }

    pub fn extern_fn(
        &mut self,
        sc: &Scope,
        f: &str,
        args: &[Expr],
        type_args: &[Type],
        loc: Loc,
        out: &mut Vec<Value>,
    ) -> Res<()> {
        match f {
            "mark_to_drop" => {
                // `mark_to_drop()` is the v1model of 2018, before it took standard_metadata
                if !args.is_empty() {
                    self.arity(loc, f, args, 1)?;
                }
                out.push(prim("mark_to_drop", vec![header("standard_metadata")]));
            }
            "clone" => {
                self.arity(loc, f, args, 2)?;
                let o = self.clone_prim(sc, f, &args[0])?;
                let session = self.arg(sc, &args[1], 32, "the clone session")?;
                // p4c gives a plain clone an empty field list of its own
                let name = self.fresh("fl");
                let id = self.new_field_list(name, Vec::new());
                out.push(prim(o, vec![session, hexstr(u128::from(id))]));
            }
            "clone_preserving_field_list" => {
                self.arity(loc, f, args, 3)?;
                let o = self.clone_prim(sc, f, &args[0])?;
                let session = self.arg(sc, &args[1], 32, "the clone session")?;
                let id = self.field_list_for_index(sc, &args[2])?;
                out.push(prim(o, vec![session, hexstr(u128::from(id))]));
            }
            "clone3" => {
                self.arity(loc, f, args, 3)?;
                let o = self.clone_prim(sc, f, &args[0])?;
                let session = self.arg(sc, &args[1], 32, "the clone session")?;
                let name = self.fresh("fl");
                let id = self.data_field_list(sc, &args[2], name)?;
                out.push(prim(o, vec![session, hexstr(u128::from(id))]));
            }
            "resubmit_preserving_field_list" | "recirculate_preserving_field_list" => {
                self.arity(loc, f, args, 1)?;
                let (o, pipe) = if f.starts_with("resubmit") {
                    ("resubmit", "ingress")
                } else {
                    ("recirculate", "egress")
                };
                self.only_in(loc, f, pipe)?;
                let id = self.field_list_for_index(sc, &args[0])?;
                out.push(prim(o, vec![hexstr(u128::from(id))]));
            }
            "resubmit" | "recirculate" => {
                self.arity(loc, f, args, 1)?;
                self.only_in(loc, f, if f == "resubmit" { "ingress" } else { "egress" })?;
                // older p4c named these lists after the data's expression
                let name = args[0].path().unwrap_or_else(|| self.fresh("fl"));
                let id = self.data_field_list(sc, &args[0], name)?;
                out.push(prim(f, vec![hexstr(u128::from(id))]));
            }
            "digest" => {
                self.arity(loc, f, args, 2)?;
                let receiver = self.arg(sc, &args[0], 32, "the digest receiver")?;
                let sname = match (type_args.first(), self.resolve(sc, &args[1])) {
                    (Some(t), _) => match self.env.resolve(t)? {
                        Ty::Struct(s) => Some(s),
                        other => {
                            return fail(
                                loc,
                                format!(
                                    "digest's type argument must be a struct, found {}",
                                    other.describe()
                                ),
                            )
                        }
                    },
                    (None, Ok(Ref::Struct { sname, .. })) => Some(sname),
                    _ => None,
                };
                let mut fields = Vec::new();
                self.data_fields(sc, &args[1], "", &mut Some(&mut *out), &mut fields)?;
                if let Some(s) = &sname {
                    let want = self.env.structs.get(s).map_or(0, Vec::len);
                    if matches!(args[1], Expr::List(..)) && fields.len() != want {
                        return fail(
                            args[1].loc(),
                            format!(
                                "digest data has {} fields, struct {s} has {want}",
                                fields.len()
                            ),
                        );
                    }
                    if !self.digests.iter().any(|d| &d.name == s) {
                        let members = self.env.structs[s]
                            .iter()
                            .zip(&fields)
                            .map(|(m, f)| (m.name.clone(), f.2.clone()))
                            .collect();
                        self.digests.push(DigestInfo {
                            name: s.clone(),
                            members,
                        });
                    }
                }
                let id = self.learn_lists.len() as u64 + 1;
                let elements: Vec<Value> = fields.into_iter().map(|f| f.1).collect();
                let name = sname.unwrap_or_else(|| "digest".into());
                self.learn_lists
                    .push(json!({"id": id, "name": name, "elements": elements}));
                out.push(prim(
                    "generate_digest",
                    vec![receiver, hexstr(u128::from(id))],
                ));
            }
            "random" => {
                self.arity(loc, f, args, 3)?;
                let (dst, dt) = self.lvalue(sc, &args[0])?;
                let Some(w) = dt.width().filter(|_| dt != Ty::Bool) else {
                    return fail(
                        args[0].loc(),
                        format!("random's result must be bit<W>, found {}", dt.describe()),
                    );
                };
                let lo = self.arg(sc, &args[1], w, "random's lower bound")?;
                let hi = self.arg(sc, &args[2], w, "random's upper bound")?;
                out.push(prim("modify_field_rng_uniform", vec![dst, lo, hi]));
            }
            "truncate" => {
                self.arity(loc, f, args, 1)?;
                out.push(prim(
                    "truncate",
                    vec![self.arg(sc, &args[0], 32, "the length")?],
                ));
            }
            "hash" => {
                self.arity(loc, f, args, 5)?;
                let (dst, dt) = self.lvalue(sc, &args[0])?;
                let calc = self.calculation(sc, &args[1], &args[3], Some(out))?;
                let w = dt.width().unwrap_or(32);
                let base = self.arg(sc, &args[2], w, "the hash base")?;
                let max = self.arg(sc, &args[4], w.max(32), "the hash range")?;
                out.push(prim(
                    "modify_field_with_hash_based_offset",
                    vec![
                        dst,
                        base,
                        json!({"type": "calculation", "value": calc}),
                        max,
                    ],
                ));
            }
            "log_msg" => out.push(self.log_msg(sc, args, loc)?),
            "verify_checksum"
            | "update_checksum"
            | "verify_checksum_with_payload"
            | "update_checksum_with_payload" => {
                return fail(
                    loc,
                    format!("{f} is only allowed in the checksum controls' apply block"),
                )
            }
            other => {
                return fail(
                    loc,
                    format!("extern function '{other}' is not supported by the switch"),
                )
            }
        }
        Ok(())
    }

    /// `log_msg("text")` or `log_msg("x={}", {x})`: the string and the values as p4c writes them.
    fn log_msg(&mut self, sc: &Scope, args: &[Expr], loc: Loc) -> Res<Value> {
        let (Some(Expr::Str(msg, _)), 1..=2) = (args.first(), args.len()) else {
            return fail(
                loc,
                "log_msg takes a string and optionally a list of values",
            );
        };
        let values = match args.get(1) {
            None => json!({}),
            Some(e) => {
                let items = match e {
                    Expr::List(items, _) => items.clone(),
                    e => vec![e.clone()],
                };
                let mut vs = Vec::new();
                for it in &items {
                    let (v, t) = self.rvalue(sc, it)?;
                    vs.push(match t {
                        Ty::Bool => crate::lower::un("b2d", v),
                        Ty::InfInt => {
                            self.coerce(v, &t, &Ty::Bit(32), it.loc(), "a logged value")?
                        }
                        _ => v,
                    });
                }
                Value::Array(vs)
            }
        };
        Ok(prim(
            "log_msg",
            vec![
                json!({"type": "string", "value": msg}),
                json!({"type": "parameters_vector", "value": values}),
            ],
        ))
    }
}

fn names(fs: &[crate::env::FieldTy]) -> Vec<String> {
    fs.iter().map(|f| f.name.clone()).collect()
}

/// The last component of a dotted path.
fn last(p: &str) -> String {
    p.rsplit('.').next().unwrap_or(p).to_string()
}

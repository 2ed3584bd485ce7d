//! Tables: keys, actions, default action, const entries, size, direct counters and meters.

use crate::ast::*;
use crate::diag::{fail, Res};
use crate::env::{mask, Ty};
use crate::lower::expr::Ref;
use crate::lower::{Lowerer, Scope};
use serde_json::{json, Value};

/// Where a table goes after it ran.
pub enum Next {
    All(Option<String>),
    HitMiss(Option<String>, Option<String>),
    /// Per action (qualified name), and for the others.
    ByAction(Vec<(String, Option<String>)>, Option<String>),
}

/// What P4Info needs of a user table.
#[derive(Debug, Clone)]
pub struct TableInfo {
    pub name: String,
    pub annotations: Vec<Annotation>,
    /// name, bitwidth, match kind
    /// name, bitwidth, match kind, the key's `type` if a new type
    pub keys: Vec<(String, u32, String, Option<String>)>,
    /// qualified action name, annotations of the reference (@defaultonly / @tableonly)
    pub actions: Vec<(String, Vec<Annotation>)>,
    pub const_default: Option<String>,
    /// The default action a table starts with and its arguments (hex, as in action_data).
    pub initial_default: Option<(String, Vec<Value>)>,
    pub size: u64,
    pub is_const: bool,
    pub direct_counter: Option<String>,
    pub direct_meter: Option<String>,
    /// The action profile or selector (`implementation`).
    pub implementation: Option<String>,
    /// Serializable enums the keys are of (P4Info lists them in `type_info`).
    pub ser_enums: Vec<String>,
}

/// Hex string of `v` in `w` bits.
fn hex_w(v: u128, w: u32) -> String {
    let digits = w.div_ceil(4).max(1) as usize;
    format!("0x{v:0digits$x}")
}

pub fn qualified(block: &str, name: &str, anns: &[Annotation]) -> String {
    match annotation(anns, "name") {
        Some(a) => {
            let n = a.body.trim_matches('"');
            match n.strip_prefix('.') {
                Some(abs) => abs.to_string(),
                None => format!("{block}.{n}"),
            }
        }
        None => format!("{block}.{name}"),
    }
}

impl Lowerer<'_> {
    /// Qualified name of the action `r` names, lowering it on first use.
    pub fn action_ref(
        &mut self,
        sc: &Scope,
        name: &str,
        loc: crate::diag::Loc,
    ) -> Res<(String, u64, ActionDecl)> {
        let Some(crate::lower::Binding::Action(q)) = sc.get(name).cloned() else {
            return fail(loc, format!("'{name}' is not an action"));
        };
        let Some(decl) = self.find_action(sc, &q) else {
            return fail(loc, format!("action '{name}' not found"));
        };
        let id = self.lower_action(sc, &decl, &q)?;
        Ok((q, id, decl))
    }

    /// Constant action data for `args` of action `decl`.
    pub fn action_data(
        &self,
        decl: &ActionDecl,
        args: &[Expr],
        loc: crate::diag::Loc,
    ) -> Res<Vec<Value>> {
        if args.len() != decl.params.len() {
            return fail(
                loc,
                format!(
                    "action {} takes {} argument(s), {} given",
                    decl.name,
                    decl.params.len(),
                    args.len()
                ),
            );
        }
        let mut out = Vec::new();
        for (p, a) in decl.params.iter().zip(args) {
            let t = self.env.resolve(&p.ty)?;
            let (v, vt) = match self.env.const_value(a) {
                Ok(x) => x,
                Err(_) => return fail(a.loc(), "action data here must be a compile-time constant"),
            };
            let v = self.env.coerce_const(v, &vt, &t, a.loc())?;
            out.push(Value::String(hex_w(v, t.width().unwrap_or(1))));
        }
        Ok(out)
    }

    pub fn lower_table(&mut self, sc: &Scope, t: &TableDecl, next: Next) -> Res<String> {
        let name = qualified(&sc.block, &t.name, &t.annotations);
        if self.tables.iter().any(|x| x["name"] == name.as_str()) {
            return fail(
                t.loc,
                format!(
                    "table {} is applied twice: bmv2 tables run once per pipeline",
                    t.name
                ),
            );
        }
        let mut info = TableInfo {
            name: name.clone(),
            annotations: t.annotations.clone(),
            keys: Vec::new(),
            actions: Vec::new(),
            const_default: None,
            initial_default: None,
            size: 1024,
            is_const: t.entries.is_some(),
            direct_counter: None,
            direct_meter: None,
            implementation: None,
            ser_enums: Vec::new(),
        };
        let mut keys = Vec::new();
        let mut widths = Vec::new();
        let mut signs = Vec::new();
        let mut kinds = Vec::new();
        let mut selector_input = Vec::new();
        for k in &t.keys {
            let mk = k.match_kind.as_str();
            if mk == "selector" {
                // the selector's hash input, not part of the match key (p4c)
                let (target, _, key_mask, _) = self.key_target(sc, &k.expr)?;
                if !key_mask.is_null() || target[1] == "$valid$" {
                    return fail(k.loc, "a selector key must be a field");
                }
                selector_input.push(json!({"type": "field", "value": target}));
                continue;
            }
            if !matches!(mk, "exact" | "lpm" | "ternary" | "range" | "optional") {
                return fail(
                    k.loc,
                    format!(
                        "match kind '{mk}' is not supported (exact, lpm, ternary, range, optional)"
                    ),
                );
            }
            let (target, width, key_mask, text) = self.key_target(sc, &k.expr)?;
            let type_name = if key_mask.is_null() {
                self.declared_type(&target)
            } else {
                None
            };
            let kname = match annotation(&k.annotations, "name") {
                Some(a) => a.body.trim_matches('"').to_string(),
                None => text,
            };
            // an optional key is a ternary one in bmv2 JSON, as p4c writes it (bmv2's CLI
            // knows no "optional"); the P4Info keeps OPTIONAL
            let json_kind = if mk == "optional" { "ternary" } else { mk };
            keys.push(
                json!({"match_type": json_kind, "name": kname, "target": target, "mask": key_mask}),
            );
            info.keys.push((kname, width, mk.to_string(), type_name));
            widths.push(width);
            // entries of an int<W> field key are int<W> constants (their bits matched)
            let key_ty = match self.resolve(sc, &k.expr) {
                Ok(Ref::Field { ty, .. }) => Some(ty),
                _ => None,
            };
            if let Some(Ty::SerEnum(n, _)) = &key_ty {
                info.ser_enums.push(n.clone());
            }
            let signed = matches!(key_ty, Some(Ty::Int(_)));
            if signed && mk == "range" {
                return fail(k.loc, "a range key on an int<W> field is not supported");
            }
            signs.push(signed);
            kinds.push(mk);
        }
        let table_kind = ["range", "ternary", "optional", "lpm"]
            .iter()
            .find(|k| kinds.contains(k))
            .map(|k| if *k == "optional" { "ternary" } else { *k })
            .unwrap_or("exact");
        if kinds.iter().filter(|k| **k == "lpm").count() > 1 {
            return fail(t.loc, "a table can have at most one lpm key");
        }
        let mut action_ids = Vec::new();
        let mut action_names = Vec::new();
        let mut decls = Vec::new();
        // no default_action: NoAction, added to the list as @defaultonly when missing (as p4c)
        let mut listed = t.actions.clone();
        if t.default_action.is_none() && !listed.iter().any(|a| a.name == "NoAction") {
            listed.push(ActionRef {
                name: "NoAction".into(),
                args: Vec::new(),
                loc: t.loc,
                annotations: vec![Annotation {
                    name: "defaultonly".into(),
                    body: String::new(),
                    loc: t.loc,
                }],
            });
        }
        let mut bound = Vec::new();
        for a in &listed {
            let o = self.offered_action(sc, &name, a)?;
            action_ids.push(o.id);
            action_names.push(o.qualified.clone());
            info.actions.push((o.qualified, a.annotations.clone()));
            decls.push(o.decl);
            bound.push(o.bound);
        }
        // a default or entry repeats the arguments the actions list binds: the rest are data
        let data_args = |pos: usize, args: &[Expr]| args[bound[pos].min(args.len())..].to_vec();
        let mut default_entry = Value::Null;
        let default = match &t.default_action {
            Some(d) => Some(d.clone()),
            None => listed
                .iter()
                .find(|a| a.name == "NoAction")
                .map(|a| (a.clone(), false)),
        };
        if let Some((d, is_const)) = default {
            let Some(pos) = listed.iter().position(|a| a.name == d.name) else {
                return fail(
                    d.loc,
                    format!(
                        "default action '{}' is not in the table's actions list",
                        d.name
                    ),
                );
            };
            let data = self.action_data(&decls[pos], &data_args(pos, &d.args), d.loc)?;
            info.initial_default = Some((action_names[pos].clone(), data.clone()));
            default_entry = json!({"action_id": action_ids[pos], "action_const": is_const, "action_data": data, "action_entry_const": is_const});
            if is_const {
                info.const_default = Some(action_names[pos].clone());
            }
        }
        if let Some(s) = &t.size {
            match self.env.const_value(s) {
                Ok((v, _)) if v > 0 => info.size = v as u64,
                _ => return fail(s.loc(), "size must be a positive constant"),
            }
        }
        let mut entries = Vec::new();
        for (i, e) in t.entries.iter().flatten().enumerate() {
            if e.keys.len() != t.keys.len() {
                return fail(
                    e.loc,
                    format!(
                        "entry has {} key values, the table has {} keys",
                        e.keys.len(),
                        t.keys.len()
                    ),
                );
            }
            let mut mk = Vec::new();
            for (((v, kind), w), s) in e.keys.iter().zip(&kinds).zip(&widths).zip(&signs) {
                mk.push(self.entry_key(v, kind, *w, *s)?);
            }
            let Some(pos) = t.actions.iter().position(|a| a.name == e.action.name) else {
                return fail(
                    e.action.loc,
                    format!("'{}' is not one of the table's actions", e.action.name),
                );
            };
            let data =
                self.action_data(&decls[pos], &data_args(pos, &e.action.args), e.action.loc)?;
            let prio = match &e.priority {
                Some(p) => self.env.const_value(p)?.0 as u64,
                None => i as u64 + 1,
            };
            entries.push(json!({"match_key": mk, "action_entry": {"action_id": action_ids[pos], "action_data": data}, "priority": prio}));
        }
        let mut with_counters = false;
        let mut direct_meters = Value::Null;
        let mut implementation = None;
        for (p, e, loc) in &t.props {
            match p.as_str() {
                "counters" | "meters" => {
                    let Ok(Ref::Extern(n, ty, _)) = self.resolve(sc, e) else {
                        return fail(
                            *loc,
                            format!("{p} must name a direct_counter or direct_meter instance"),
                        );
                    };
                    let list = if p == "counters" {
                        &mut self.counters
                    } else {
                        &mut self.meters
                    };
                    let want = if p == "counters" {
                        "direct_counter"
                    } else {
                        "direct_meter"
                    };
                    if ty != want {
                        return fail(*loc, format!("{p} must name a {want}, '{n}' is a {ty}"));
                    }
                    if let Some(x) = list.iter_mut().find(|x| x["name"] == n.as_str()) {
                        x["binding"] = Value::String(name.clone());
                        if p == "meters" {
                            x["size"] = json!(info.size);
                        }
                    }
                    if p == "counters" {
                        with_counters = true;
                        info.direct_counter = Some(n);
                    } else {
                        direct_meters = Value::String(n.clone());
                        info.direct_meter = Some(n);
                    }
                }
                "support_timeout" => {}
                "implementation" => {
                    implementation =
                        Some(self.table_implementation(sc, t, &name, e, &selector_input)?)
                }
                other => return fail(*loc, format!("table property '{other}' is not supported")),
            }
        }
        let (next_tables, base_default) = match next {
            Next::All(n) => (
                action_names.iter().map(|a| (a.clone(), json!(n))).collect(),
                n,
            ),
            Next::HitMiss(h, m) => {
                let mut map = serde_json::Map::new();
                map.insert("__HIT__".into(), json!(h));
                map.insert("__MISS__".into(), json!(m));
                (map, m)
            }
            Next::ByAction(per, other) => {
                let mut map = serde_json::Map::new();
                for a in &action_names {
                    let n = per
                        .iter()
                        .find(|p| &p.0 == a)
                        .map_or(other.clone(), |p| p.1.clone());
                    map.insert(a.clone(), json!(n));
                }
                (map, other)
            }
        };
        let id = self.tables.len();
        let mut tj = json!({
            "name": name, "id": id, "source_info": self.source_info(t.loc, &t.name),
            "key": keys, "match_type": table_kind, "type": "simple", "max_size": info.size,
            "with_counters": with_counters, "support_timeout": false, "direct_meters": direct_meters,
            "action_ids": action_ids, "actions": action_names, "base_default_next": base_default,
            "next_tables": next_tables,
        });
        match &implementation {
            Some((profile, with_selector)) => {
                if t.entries.is_some() {
                    return fail(t.loc, format!("table {}: const entries are not allowed in a table with an action profile", t.name));
                }
                // p4c writes no default entry for these (the default comes from the profile)
                tj["type"] = json!(if *with_selector {
                    "indirect_ws"
                } else {
                    "indirect"
                });
                tj["action_profile"] = json!(profile);
                info.implementation = Some(profile.clone());
            }
            None if !selector_input.is_empty() => {
                return fail(
                    t.loc,
                    format!(
                        "table {} has `selector` keys but no implementation = action_selector(...)",
                        t.name
                    ),
                );
            }
            None if !default_entry.is_null() => tj["default_entry"] = default_entry,
            None => {}
        }
        if t.entries.is_some() {
            tj["entries"] = Value::Array(entries);
        }
        self.tables.push(tj);
        self.p4_tables.push(info);
        Ok(name)
    }

    /// A key expression: its JSON target, width, mask and text.
    /// The new type (`type`) a field target was declared with.
    fn declared_type(&self, target: &Value) -> Option<String> {
        let (h, f) = (target[0].as_str()?, target[1].as_str()?);
        if h == "scalars" {
            return self.scalar_types.get(f).cloned();
        }
        let inst = self.header_insts.iter().find(|i| i.name == h)?;
        let ft = self
            .env
            .header_fields(&inst.htype)
            .iter()
            .find(|x| x.name == f)?;
        ft.type_name.clone()
    }

    fn key_target(&self, sc: &Scope, e: &Expr) -> Res<(Value, u32, Value, String)> {
        let text = e.path().unwrap_or_default();
        if let Expr::Call { func, args, .. } = e {
            if let Expr::Member(b, m, _) = &**func {
                if m == "isValid" && args.is_empty() {
                    if let Ref::Header { inst, .. } = self.resolve(sc, b)? {
                        return Ok((
                            json!([inst, "$valid$"]),
                            1,
                            Value::Null,
                            format!("{}.$valid$", b.path().unwrap_or_default()),
                        ));
                    }
                }
            }
        }
        if let Expr::Binary("&", a, m, _) = e {
            // `(bit<W>) f & mask` with the cast not narrowing is `f & mask`
            let a = match &**a {
                Expr::Cast(t, x, _) => match (self.env.resolve(t), self.resolve(sc, x)) {
                    (Ok(ct), Ok(Ref::Field { ty, .. }))
                        if ct.width().is_some() && ct.width() == ty.width() =>
                    {
                        x
                    }
                    _ => a,
                },
                _ => a,
            };
            if let (Ok(Ref::Field { h, f, ty }), Ok((mv, _))) =
                (self.resolve(sc, a), self.env.const_value(m))
            {
                let w = ty.width().unwrap_or(0);
                let text = format!("{} & {mv:#x}", a.path().unwrap_or_default());
                return Ok((
                    json!([h, f]),
                    w,
                    Value::String(hex_w(mv & mask(w), w)),
                    text,
                ));
            }
        }
        match self.resolve(sc, e) {
            Ok(Ref::Field { h, f, ty }) => {
                let Some(w) = ty.width() else {
                    return fail(
                        e.loc(),
                        format!("a key must be a bit<W> field, found {}", ty.describe()),
                    );
                };
                Ok((json!([h, f]), w, Value::Null, text))
            }
            Ok(_) => fail(
                e.loc(),
                "a table key must be a field, field & mask, or h.isValid()",
            ),
            Err(err) => Err(err),
        }
    }

    fn entry_key(&self, v: &Expr, kind: &str, w: u32, signed: bool) -> Res<Value> {
        let konst = |e: &Expr, to: &Ty| -> Res<u128> {
            let (x, t) = match self.env.const_value(e) {
                Ok(x) => x,
                Err(_) => return fail(e.loc(), "entry keys must be compile-time constants"),
            };
            // an isValid() key is bool in P4 and one bit in bmv2 JSON
            if t == Ty::Bool && *to == Ty::Bit(1) {
                return Ok(x);
            }
            self.env.coerce_const(x, &t, to, e.loc())
        };
        let c = |e: &Expr| konst(e, &if signed { Ty::Int(w) } else { Ty::Bit(w) });
        // masks and prefixes are bits whatever the key's type
        let cm = |e: &Expr| konst(e, &Ty::Bit(w));
        let hx = |x: u128| Value::String(hex_w(x, w));
        // optional keys are ternary in bmv2 JSON
        let ternary = "ternary";
        Ok(match (kind, v) {
            ("exact", e) => json!({"match_type": "exact", "key": hx(c(e)?)}),
            ("lpm", Expr::Mask(a, m, _)) => {
                let m = cm(m)?;
                let len = m.count_ones();
                json!({"match_type": "lpm", "key": hx(c(a)?), "prefix_length": len})
            }
            ("lpm", Expr::Default(_)) => {
                json!({"match_type": "lpm", "key": hx(0), "prefix_length": 0})
            }
            ("lpm", e) => json!({"match_type": "lpm", "key": hx(c(e)?), "prefix_length": w}),
            ("ternary" | "optional", Expr::Mask(a, m, _)) => {
                let m = cm(m)?;
                json!({"match_type": ternary, "key": hx(c(a)? & m), "mask": hx(m)})
            }
            ("ternary" | "optional", Expr::Default(_)) => {
                json!({"match_type": ternary, "key": hx(0), "mask": hx(0)})
            }
            ("ternary" | "optional", e) => {
                json!({"match_type": ternary, "key": hx(c(e)?), "mask": hx(mask(w))})
            }
            ("range", Expr::Range(a, b, _)) => {
                json!({"match_type": "range", "start": hx(c(a)?), "end": hx(c(b)?)})
            }
            ("range", Expr::Default(_)) => {
                json!({"match_type": "range", "start": hx(0), "end": hx(mask(w))})
            }
            ("range", e) => {
                let x = c(e)?;
                json!({"match_type": "range", "start": hx(x), "end": hx(x)})
            }
            (k, e) => return fail(e.loc(), format!("this key value does not fit a {k} key")),
        })
    }
}

//! The parser (states, extract, lookahead, select with masks, ranges and default, verify), the
//! deparser (emit order) and the checksum controls (verify_checksum / update_checksum).

use crate::ast::*;
use crate::diag::{fail, Res};
use crate::env::{mask, Ty};
use crate::lower::expr::Ref;
use crate::lower::{field, Binding, Lowerer};
use serde_json::{json, Value};

/// Largest range in a select case that is expanded into single values.
const MAX_RANGE_EXPANSION: u128 = 256;

impl Lowerer<'_> {
    pub fn lower_parser(&mut self, p: &ParserDecl, hdr: &str, meta: &str) -> Res<Value> {
        let mut sc = self.global_scope();
        sc.block = p.name.clone();
        sc.in_parser = true;
        sc.push();
        crate::lower::bind_params(self.env, &mut sc, &p.params, hdr, meta)?;
        sc.push();
        let mut init_ops = Vec::new();
        for l in &p.locals {
            match l {
                Local::Var { .. } | Local::Const { .. } => {
                    self.bind_value_local(&mut sc, &p.name, l, &mut init_ops)?
                }
                Local::Instance(i) => self.instance(&mut sc, i, Some(&p.name))?,
                Local::Action(a) => return fail(a.loc, "actions cannot be declared in a parser"),
                Local::Table(t) => return fail(t.loc, "tables cannot be declared in a parser"),
            }
        }
        let all_states = crate::parser_ifs::split_ifs(&p.states);
        let p_states = &all_states;
        if !p_states.iter().any(|s| s.name == "start") {
            return fail(p.loc, format!("parser {} has no 'start' state", p.name));
        }
        let names: Vec<&str> = p_states.iter().map(|s| s.name.as_str()).collect();
        let target = |n: &str, loc| -> Res<Value> {
            match n {
                "accept" => Ok(Value::Null),
                "reject" => Ok(json!("reject")),
                _ if names.contains(&n) => Ok(json!(n)),
                _ => fail(
                    loc,
                    format!("state '{n}' is not declared in parser {}", p.name),
                ),
            }
        };
        for (i, s) in p_states.iter().enumerate() {
            if p_states[..i].iter().any(|o| o.name == s.name) {
                return fail(s.loc, format!("state '{}' is declared twice", s.name));
            }
        }
        let mut states = Vec::new();
        for (id, s) in p_states.iter().enumerate() {
            let mut ops = Vec::new();
            if s.name == "start" {
                self.parser_stmts(&mut sc, &init_ops, &mut ops)?;
            }
            self.parser_stmts(&mut sc, &s.body, &mut ops)?;
            let (key, transitions) = match &s.transition {
                Transition::Goto(n, loc) => (
                    vec![],
                    vec![
                        json!({"type": "default", "value": null, "mask": null, "next_state": target(n, *loc)?}),
                    ],
                ),
                Transition::Select { keys, cases, loc } => {
                    if cases.is_empty() {
                        return fail(*loc, "select has no cases");
                    }
                    let mut kj = Vec::new();
                    let mut widths = Vec::new();
                    let mut case_tys = Vec::new();
                    for k in keys {
                        let (j, w, ty) = self.select_key(&mut sc, k, &mut ops)?;
                        kj.push(j);
                        widths.push(w);
                        case_tys.push(ty);
                    }
                    let mut tr = Vec::new();
                    for c in cases {
                        let next = target(&c.next, c.loc)?;
                        // a parser value set: the key is looked up in it at run time
                        if let [Expr::Name(n, nloc)] = c.values.as_slice() {
                            if let Some(Binding::Extern(vs, kind, w)) = sc.get(n) {
                                if kind == "value_set" {
                                    if widths.iter().sum::<u32>() != *w {
                                        return fail(*nloc, format!("value set {n} holds bit<{w}> values, the select key has {} bits", widths.iter().sum::<u32>()));
                                    }
                                    tr.push(json!({"type": "parse_vset", "value": vs, "mask": null, "next_state": next}));
                                    continue;
                                }
                            }
                        }
                        // `default` / `_` alone stands for every key
                        let all_default;
                        let values = if c.values.len() == 1
                            && widths.len() > 1
                            && matches!(c.values[0], Expr::Default(_))
                        {
                            all_default = vec![c.values[0].clone(); widths.len()];
                            &all_default
                        } else {
                            &c.values
                        };
                        if values.len() != widths.len() {
                            return fail(
                                c.loc,
                                format!(
                                    "select has {} keys, this case {} values",
                                    widths.len(),
                                    c.values.len()
                                ),
                            );
                        }
                        for (v, m) in self.case_values(&sc, values, &case_tys)? {
                            tr.push(match (v, m) {
                                (None, _) => json!({"type": "default", "value": null, "mask": null, "next_state": next}),
                                (Some(v), m) => json!({"type": "hexstr", "value": v, "mask": m, "next_state": next}),
                            });
                        }
                    }
                    if !tr.iter().any(|t| t["type"] == "default") {
                        tr.push(json!({"type": "default", "value": null, "mask": null, "next_state": "reject"}));
                    }
                    (kj, tr)
                }
            };
            states.push(json!({"name": s.name, "id": id, "parser_ops": ops, "transitions": transitions, "transition_key": key}));
        }
        Ok(json!({"name": "parser", "id": 0, "init_state": "start", "parse_states": states}))
    }

    fn parser_stmts(
        &mut self,
        sc: &mut crate::lower::Scope,
        stmts: &[Stmt],
        ops: &mut Vec<Value>,
    ) -> Res<()> {
        for s in stmts {
            match s {
                Stmt::Call(
                    Expr::Call {
                        func, args, loc, ..
                    },
                    _,
                ) => {
                    if let Expr::Member(b, m, _) = &**func {
                        if let Ok(Ref::Packet) = self.resolve(sc, b) {
                            ops.push(self.packet_op(sc, m, args, *loc)?);
                            continue;
                        }
                    }
                    if let Expr::Name(n, _) = &**func {
                        if n == "verify" {
                            if args.len() != 2 {
                                return fail(*loc, "verify takes 2 arguments (condition, error)");
                            }
                            let (c, ct) = self.rvalue(sc, &args[0])?;
                            let (e, et) = self.rvalue(sc, &args[1])?;
                            if ct != Ty::Bool || et != Ty::Error {
                                return fail(*loc, "verify needs (bool, error.X)");
                            }
                            ops.push(json!({"op": "verify", "parameters": [c, e]}));
                            continue;
                        }
                    }
                    let mut prims = Vec::new();
                    self.stmts_to_prims(sc, std::slice::from_ref(s), &mut prims, true)?;
                    ops.extend(
                        prims
                            .into_iter()
                            .map(|p| json!({"op": "primitive", "parameters": [p]})),
                    );
                }
                Stmt::Assign(..)
                | Stmt::Var { .. }
                | Stmt::Const { .. }
                | Stmt::Empty
                | Stmt::Block(_) => {
                    let mut prims = Vec::new();
                    self.stmts_to_prims(sc, std::slice::from_ref(s), &mut prims, true)?;
                    ops.extend(prims);
                }
                Stmt::If(_, _, _, loc) => return fail(
                    *loc,
                    "an if inside a block of a parser state is not supported: write it at the state's top level",
                ),
                other => {
                    let loc = match other {
                        Stmt::Exit(l) | Stmt::Return(l) | Stmt::Switch(_, _, l) => *l,
                        _ => crate::diag::Loc::default(),
                    };
                    return fail(loc, "this statement is not allowed in a parser state");
                }
            }
        }
        Ok(())
    }

    fn packet_op(
        &mut self,
        sc: &crate::lower::Scope,
        m: &str,
        args: &[Expr],
        loc: crate::diag::Loc,
    ) -> Res<Value> {
        match m {
            "extract" => {
                let (a, len) = match args {
                    [a] => (a, None),
                    [a, len] => (a, Some(len)),
                    _ => return fail(loc, "extract takes a header and, for a header with a varbit field, its length in bits"),
                };
                let (kind, name, htype) = match self.resolve(sc, a)? {
                    Ref::Header { inst, htype } => ("regular", inst, htype),
                    Ref::StackNext { name } => {
                        let htype = self
                            .stacks
                            .iter()
                            .find(|s| s.name == name)
                            .map(|s| s.htype.clone());
                        ("stack", name, htype.unwrap_or_default())
                    }
                    Ref::UnionStackNextMember { stack, member } if len.is_none() => {
                        return Ok(crate::lower::union_stack::extract_json(&stack, &member));
                    }
                    _ => return fail(a.loc(), "extract needs a header (hdr.x or hdr.stack.next)"),
                };
                let target = json!({"type": kind, "value": name});
                let has_varbit = self
                    .env
                    .header_fields(&htype)
                    .iter()
                    .any(|f| matches!(f.ty, Ty::Varbit(_)));
                match (len, has_varbit) {
                    (None, false) => Ok(json!({"op": "extract", "parameters": [target]})),
                    (Some(len), true) => {
                        let (v, t) = self.rvalue(sc, len)?;
                        let v = self.coerce(v, &t, &Ty::Bit(32), len.start(), "the varbit length")?;
                        Ok(json!({"op": "extract_VL", "parameters": [
                            target, {"type": "expression", "value": v}]}))
                    }
                    (None, true) => fail(a.loc(), format!("header {htype} has a varbit field: extract it with its length in bits, extract(hdr, len)")),
                    (Some(len), false) => fail(len.loc(), format!("header {htype} has no varbit field: extract it without a length")),
                }
            }
            "advance" => {
                let [a] = args else {
                    return fail(loc, "advance takes 1 argument (bits)");
                };
                let (v, _) = self.rvalue(sc, a)?;
                Ok(json!({"op": "advance", "parameters": [v]}))
            }
            "lookahead" => fail(
                loc,
                "lookahead's value must be used (in select or an assignment)",
            ),
            other => fail(
                loc,
                format!("packet_in has no method '{other}' (extract, lookahead, advance)"),
            ),
        }
    }

    /// A select key: a field, a stack's `last` field or a lookahead as is, any other expression
    /// through a scalar set just before the select.
    fn select_key(
        &mut self,
        sc: &mut crate::lower::Scope,
        k: &Expr,
        ops: &mut Vec<Value>,
    ) -> Res<(Value, u32, Ty)> {
        let (v, t) = self.rvalue(sc, k)?;
        let w = match t.width() {
            Some(w) if t != Ty::Bool => w,
            _ => {
                return fail(
                    k.loc(),
                    format!("a select key must be bit<W>, found {}", t.describe()),
                )
            }
        };
        if w > 64 {
            return fail(
                k.loc(),
                "select keys wider than 64 bits are not supported by the switch",
            );
        }
        // case values of an int<W> key are int<W> constants (their bits matched)
        let case_ty = match t {
            Ty::Int(_) => Ty::Int(w),
            _ => Ty::Bit(w),
        };
        match v["type"].as_str() {
            Some("field" | "lookahead" | "stack_field") => Ok((v, w, case_ty)),
            _ => {
                let f = self.add_scalar("select_key", &Ty::Bit(w), k.loc())?;
                ops.push(json!({"op": "set", "parameters": [field("scalars", &f), v]}));
                Ok((field("scalars", &f), w, case_ty))
            }
        }
    }

    /// The (value, mask) hex strings of one select case (several when it has small ranges),
    /// `None` value for default.
    fn case_values(
        &self,
        sc: &crate::lower::Scope,
        vals: &[Expr],
        tys: &[Ty],
    ) -> Res<Vec<(Option<String>, Value)>> {
        if vals.iter().all(|v| matches!(v, Expr::Default(_))) {
            return Ok(vec![(None, Value::Null)]);
        }
        // each key: list of (value, mask) alternatives
        let mut parts: Vec<Vec<(u128, u128)>> = Vec::new();
        let widths: Vec<u32> = tys.iter().map(|t| t.width().unwrap_or(0)).collect();
        for ((v, w), ty) in vals.iter().zip(&widths).zip(tys) {
            let full = mask(*w);
            let konst = |e: &Expr, to: &Ty| -> Res<u128> {
                // a global constant, or one of the parser's own
                let (x, t) =
                    match (self.env.const_value(e), self.resolve(sc, e)) {
                        (Ok(x), _) => x,
                        (_, Ok(Ref::Const(v, t))) => (v, t),
                        _ => return fail(
                            e.loc(),
                            "select case values must be compile-time constants or one value set",
                        ),
                    };
                self.env.coerce_const(x, &t, to, e.loc())
            };
            let c = |e: &Expr| konst(e, ty);
            // masks are bits whatever the key's type
            let cm = |e: &Expr| konst(e, &Ty::Bit(*w));
            parts.push(match v {
                Expr::Default(_) => vec![(0, 0)],
                Expr::Mask(a, m, _) => {
                    let m = cm(m)?;
                    vec![(c(a)? & m, m)]
                }
                Expr::Range(_, _, loc) if matches!(ty, Ty::Int(_)) => {
                    return fail(*loc, "select ranges on an int<W> key are not supported")
                }
                Expr::Range(a, b, loc) => {
                    let (lo, hi) = (c(a)?, c(b)?);
                    if hi < lo || hi - lo >= MAX_RANGE_EXPANSION {
                        return fail(*loc, format!("select ranges are expanded into values: at most {MAX_RANGE_EXPANSION} values"));
                    }
                    (lo..=hi).map(|x| (x, full)).collect()
                }
                e => vec![(c(e)?, full)],
            });
        }
        let mut combos: Vec<Vec<(u128, u128)>> = vec![vec![]];
        for p in &parts {
            let mut next = Vec::new();
            for c in &combos {
                for alt in p {
                    let mut c2 = c.clone();
                    c2.push(*alt);
                    next.push(c2);
                }
            }
            combos = next;
        }
        let masked = parts
            .iter()
            .zip(&widths)
            .any(|(p, w)| p.iter().any(|(_, m)| *m != mask(*w)));
        Ok(combos
            .into_iter()
            .map(|c| {
                let mut v = String::from("0x");
                let mut m = String::from("0x");
                for ((x, mk), w) in c.iter().zip(&widths) {
                    let digits = (w.div_ceil(8) * 2) as usize;
                    v.push_str(&format!("{x:0digits$x}"));
                    m.push_str(&format!("{mk:0digits$x}"));
                }
                (
                    Some(v),
                    if masked {
                        Value::String(m)
                    } else {
                        Value::Null
                    },
                )
            })
            .collect())
    }

    pub fn lower_deparser(&mut self, c: &ControlDecl, hdr: &str, meta: &str) -> Res<Value> {
        let (mut sc, init) = self.control_scope(c, hdr, meta)?;
        let mut order = Vec::new();
        // an inlined control (`CommonDeparser() cp; cp.apply(packet, hdr);`) leaves a block
        fn flat<'s>(stmts: &'s [Stmt], out: &mut Vec<&'s Stmt>) {
            for s in stmts {
                match s {
                    Stmt::Block(b) => flat(b, out),
                    Stmt::Empty => {}
                    s => out.push(s),
                }
            }
        }
        let mut stmts = Vec::new();
        flat(&c.apply, &mut stmts);
        // PSA deparsers may compute (an InternetChecksum) before they emit: bmv2's deparser
        // primitives, run before the headers are emitted
        let computes = crate::arch::is_psa(self.env);
        let mut pre: Vec<Stmt> = init;
        for s in stmts {
            let emit = match s {
                Stmt::Call(
                    Expr::Call {
                        func, args, loc, ..
                    },
                    _,
                ) => match &**func {
                    Expr::Member(b, m, _)
                        if m == "emit" && matches!(self.resolve(&sc, b)?, Ref::Packet) =>
                    {
                        Some((args, *loc))
                    }
                    _ => None,
                },
                _ => None,
            };
            let Some((args, loc)) = emit else {
                if computes && order.is_empty() {
                    pre.push(s.clone());
                    continue;
                }
                let what = if computes {
                    "the deparser may only call packet.emit(...) after its first emit"
                } else {
                    "the deparser may only call packet.emit(...)"
                };
                return fail(deparser_loc(s, c.loc), what);
            };
            let [a] = args.as_slice() else {
                return fail(loc, "emit takes 1 argument");
            };
            self.emit_order(&sc, a, &mut order)?;
        }
        let mut prims = Vec::new();
        self.stmts_to_prims(&mut sc, &pre, &mut prims, false)?;
        Ok(
            json!({"name": "deparser", "id": 0, "source_info": self.source_info(c.loc, &c.name), "order": order, "primitives": prims}),
        )
    }

    fn emit_order(&self, sc: &crate::lower::Scope, a: &Expr, order: &mut Vec<String>) -> Res<()> {
        match self.resolve(sc, a)? {
            Ref::Header { inst, .. } => order.push(inst),
            Ref::Stack { name, size, .. } => {
                order.extend((0..size).map(|i| format!("{name}[{i}]")))
            }
            Ref::Struct {
                prefix,
                sname,
                meta,
            } => {
                for f in self.env.structs.get(&sname).cloned().unwrap_or_default() {
                    let m = Expr::Member(Box::new(a.clone()), f.name.clone(), a.loc());
                    let _ = (&prefix, meta);
                    self.emit_order(sc, &m, order)?;
                }
            }
            Ref::UnionStack {
                name,
                utype,
                size,
                next: false,
            } => self.union_stack_emit_order(&name, &utype, size, order),
            Ref::Field { .. } => {}
            _ => {
                return fail(
                    a.loc(),
                    "emit needs a header, a header stack or a struct of headers",
                )
            }
        }
        Ok(())
    }

    /// verify_checksum / update_checksum calls of a checksum control.
    pub fn lower_checksums(
        &mut self,
        c: &ControlDecl,
        hdr: &str,
        meta: &str,
        verify: bool,
    ) -> Res<()> {
        let (sc, _) = self.control_scope(c, hdr, meta)?;
        for s in &c.apply {
            let Stmt::Call(
                Expr::Call {
                    func, args, loc, ..
                },
                _,
            ) = s
            else {
                return fail(
                    deparser_loc(s, c.loc),
                    "checksum controls may only call verify_checksum / update_checksum",
                );
            };
            let Expr::Name(n, _) = &**func else {
                return fail(
                    *loc,
                    "checksum controls may only call verify_checksum / update_checksum",
                );
            };
            let want = if verify {
                "verify_checksum"
            } else {
                "update_checksum"
            };
            let with_payload = n.strip_suffix("_with_payload") == Some(want);
            if n != want && !with_payload {
                return fail(
                    *loc,
                    format!("{} may only call {want}, found '{n}'", c.name),
                );
            }
            if args.len() != 4 {
                return fail(*loc, format!("{n} takes 4 arguments (condition, {{fields}}, checksum field, algorithm), {} given", args.len()));
            }
            let (cond, ct) = self.rvalue(&sc, &args[0])?;
            if ct != Ty::Bool {
                return fail(args[0].loc(), "the first argument must be a bool condition");
            }
            let (target, _) = self.lvalue(&sc, &args[2])?;
            let calc = self.calculation(&sc, &args[3], &args[1], None)?;
            if with_payload {
                // as p4c-bm2-ss: the payload is the calculation's last input
                if let Some(c) = self.calculations.last_mut() {
                    if let Some(input) = c["input"].as_array_mut() {
                        input.push(json!({"type": "payload", "value": null}));
                    }
                }
            }
            let id = self.checksums.len();
            self.checksums.push(json!({
                "name": format!("cksum_{id}"), "id": id, "source_info": self.source_info(*loc, n),
                "target": target["value"], "type": "generic", "calculation": calc,
                "verify": verify, "update": !verify, "if_cond": cond,
            }));
        }
        Ok(())
    }
}

fn deparser_loc(s: &Stmt, fallback: crate::diag::Loc) -> crate::diag::Loc {
    match s {
        Stmt::Assign(_, _, l) | Stmt::Call(_, l) | Stmt::If(_, _, _, l) | Stmt::Switch(_, _, l) => {
            *l
        }
        Stmt::Var { loc, .. } | Stmt::Const { loc, .. } => *loc,
        Stmt::Exit(l) | Stmt::Return(l) => *l,
        _ => fallback,
    }
}

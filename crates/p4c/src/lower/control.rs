//! Controls: local declarations and extern instances, and the `apply` block as bmv2's graph of
//! tables and conditionals (statements outside tables go into synthesized keyless tables, as
//! p4c does: `tbl_<action>` for a direct action call, `tbl_act*` for other statements).

use crate::ast::*;
use crate::diag::{fail, Loc, Res};
use crate::env::Ty;
use crate::lower::expr::Ref;
use crate::lower::table::{qualified, Next};
use crate::lower::{Binding, Lowerer, Scope};
use serde_json::{json, Value};

impl Lowerer<'_> {
    /// An extern instance (`register<bit<32>>(1024) r;`): its JSON array entry and binding.
    pub fn instance(&mut self, sc: &mut Scope, inst: &Instance, prefix: Option<&str>) -> Res<()> {
        let Type::Named(ty, targs, tloc) = &inst.ty else {
            return fail(inst.loc, "expected an extern instance");
        };
        let name = match prefix {
            Some(p) => qualified(p, &inst.name, &inst.annotations),
            None => inst.name.clone(),
        };
        let size = |l: &Lowerer, i: usize| -> Res<u64> {
            match inst.args.get(i).map(|a| l.env.const_value(a)) {
                Some(Ok((v, _))) => Ok(v as u64),
                _ => fail(inst.loc, format!("{ty} needs a constant size argument")),
            }
        };
        let enum_member = |i: usize| -> Option<String> {
            match inst.args.get(i) {
                Some(Expr::Member(_, m, _)) => Some(m.clone()),
                _ => None,
            }
        };
        let mut width = 0;
        match ty.as_str() {
            "counter" => {
                let id = self.counters.len();
                let n = size(self, 0)?;
                self.counters.push(json!({"name": name, "id": id, "is_direct": false, "size": n, "unit": enum_member(1)}));
            }
            // PSA's Counter<W, S>(n, PSA_CounterType_t.PACKETS): v1model's counter with S indices
            "Counter" => {
                let id = self.counters.len();
                let n = size(self, 0)?;
                let unit = enum_member(1).map(|u| u.to_lowercase());
                self.counters.push(json!({"name": name, "id": id, "is_direct": false, "size": n, "unit": unit}));
            }
            "direct_counter" => {
                let id = self.counters.len();
                self.counters.push(json!({"name": name, "id": id, "is_direct": true, "binding": null, "unit": enum_member(0)}));
            }
            "meter" => {
                let id = self.meters.len();
                let n = size(self, 0)?;
                let unit = if enum_member(1).as_deref() == Some("packets") { "packets" } else { "bytes" };
                self.meters.push(json!({"name": name, "id": id, "is_direct": false, "rate_count": 2, "type": unit, "size": n}));
            }
            // PSA's Meter<S>(n, PSA_MeterType_t.PACKETS)
            "Meter" => {
                let id = self.meters.len();
                let n = size(self, 0)?;
                let unit = if enum_member(1).as_deref() == Some("PACKETS") { "packets" } else { "bytes" };
                self.meters.push(json!({"name": name, "id": id, "is_direct": false, "rate_count": 2, "type": unit, "size": n}));
            }
            // PSA's InternetChecksum: its running one's complement sum is a 16-bit scalar
            "InternetChecksum" => {
                let state = self.add_scalar(&format!("{name}.state"), &Ty::Bit(16), inst.loc)?;
                self.csum_states.insert(name.clone(), state);
                width = 16;
            }
            // PSA's Hash<O>(algorithm): no state, a calculation at each get_hash
            "Hash" => {
                let (Some(t), Some(algo)) = (targs.first(), inst.args.first()) else {
                    return fail(inst.loc, "Hash needs its output type and algorithm: Hash<bit<W>>(PSA_HashAlgorithm_t.CRC16)");
                };
                width = self.env.resolve(t)?.width().unwrap_or(0);
                self.hash_algos.insert(name.clone(), algo.clone());
            }
            "direct_meter" => {
                let id = self.meters.len();
                let unit = if enum_member(0).as_deref() == Some("packets") { "packets" } else { "bytes" };
                // bmv2 writes a direct meter's colour somewhere: a scalar of its own until the
                // program reads it with `read(...)`
                let color = self.add_scalar(&format!("{name}.color"), &Ty::Bit(32), inst.loc)?;
                self.meters.push(json!({"name": name, "id": id, "is_direct": true, "rate_count": 2, "type": unit, "size": 1024, "binding": null, "result_target": ["scalars", color]}));
            }
            "register" | "Register" => {
                if ty == "Register" && inst.args.len() > 1 {
                    return fail(inst.loc, "Register with an initial value is not supported: the switch starts registers at 0");
                }
                let Some(t) = targs.first() else {
                    return fail(*tloc, "register needs its cell type: register<bit<W>>(size)");
                };
                width = match self.env.resolve(t)? {
                    Ty::Bit(w) => w,
                    other => return fail(*tloc, format!("register cells must be bit<W>, found {}", other.describe())),
                };
                let id = self.registers.len();
                let n = size(self, 0)?;
                let mut r = json!({"name": name, "id": id, "size": n, "bitwidth": width});
                // PSA's Register<T, S>: a new type S is the P4Info's index_type_name
                if let Some(s) = targs.get(1).filter(|_| ty == "Register").and_then(|t| self.env.new_type_name(t)) {
                    r["index_type"] = json!(s);
                }
                self.registers.push(r);
            }
            "value_set" => {
                let Some(t) = targs.first() else {
                    return fail(*tloc, "value_set needs its value type: value_set<bit<W>>(size)");
                };
                width = match self.env.resolve(t)? {
                    Ty::Bit(w) if w <= 128 => w,
                    other => return fail(*tloc, format!("value set values must be bit<W> (W <= 128), found {}", other.describe())),
                };
                let id = self.value_sets.len();
                let n = size(self, 0)?;
                self.value_sets.push(json!({"name": name, "id": id, "compressed_bitwidth": width, "max_size": n}));
            }
            "action_profile" | "action_selector" => {
                self.declare_profile(&name, ty, &inst.args, &inst.annotations, inst.loc)?
            }
            // PSA's names for them (same arguments)
            "ActionProfile" => {
                self.declare_profile(&name, "action_profile", &inst.args, &inst.annotations, inst.loc)?
            }
            other if self.env.parsers.contains_key(other) || self.env.controls.contains_key(other) => {
                return fail(inst.loc, format!("instantiating {other} inside another block is not supported: write its states or tables inline"))
            }
            other => return fail(inst.loc, format!("extern '{other}' is not supported by the switch")),
        }
        self.extern_annotations
            .insert(name.clone(), inst.annotations.clone());
        sc.bind(&inst.name, Binding::Extern(name, ty.clone(), width));
        Ok(())
    }

    /// A variable or constant declared in a parser or control `block`: a variable becomes a
    /// scalar (its initialiser an assignment appended to `init`), a constant a binding.
    pub fn bind_value_local(
        &mut self,
        sc: &mut Scope,
        block: &str,
        l: &Local,
        init: &mut Vec<Stmt>,
    ) -> Res<()> {
        match l {
            Local::Var {
                ty,
                name,
                init: i,
                loc,
            } => {
                self.declare_var(sc, &format!("{block}.{name}"), name, ty, i.as_ref(), *loc)?;
                if let Some(e) = i {
                    init.push(Stmt::Assign(
                        Expr::Name(name.clone(), *loc),
                        e.clone(),
                        *loc,
                    ));
                }
            }
            Local::Const {
                ty,
                name,
                value,
                loc,
            } => {
                let t = self.env.resolve(ty)?;
                let (v, vt) = self.env.const_value(value)?;
                let v = self.env.coerce_const(v, &vt, &t, *loc)?;
                sc.bind(name, Binding::Const(v, t));
            }
            _ => {}
        }
        Ok(())
    }

    /// The scope of a control: its locals bound (actions and tables lowered on use).
    pub fn control_scope(
        &mut self,
        c: &ControlDecl,
        hdr: &str,
        meta: &str,
    ) -> Res<(Scope, Vec<Stmt>)> {
        let mut sc = self.global_scope();
        sc.block = c.name.clone();
        sc.push();
        crate::lower::bind_params(self.env, &mut sc, &c.params, hdr, meta)?;
        sc.push();
        let mut init = Vec::new();
        for l in &c.locals {
            match l {
                Local::Action(a) => sc.bind(
                    &a.name,
                    Binding::Action(qualified(&c.name, &a.name, &a.annotations)),
                ),
                Local::Table(t) => {
                    self.name_anonymous_profile(&c.name, t);
                    sc.bind(&t.name, Binding::Table(t.name.clone()))
                }
                Local::Instance(i) => self.instance(&mut sc, i, Some(&c.name))?,
                Local::Var { .. } | Local::Const { .. } => {
                    self.bind_value_local(&mut sc, &c.name, l, &mut init)?
                }
            }
        }
        Ok((sc, init))
    }

    /// Lowers a control into a pipeline named `pname`.
    pub fn lower_pipeline(
        &mut self,
        c: &ControlDecl,
        pname: &str,
        id: usize,
        hdr: &str,
        meta: &str,
    ) -> Res<Value> {
        let (mut sc, mut body) = self.control_scope(c, hdr, meta)?;
        body.extend(crate::hoist_apply::Hoister::default().stmts(&c.apply));
        self.hoist_vars(&mut sc, &body)?;
        self.tables.clear();
        self.conditionals.clear();
        self.pipeline = pname.to_string();
        let init = self.seq(&mut sc, c, &body, None)?;
        self.pipeline.clear();
        self.order_profiles();
        Ok(json!({
            "name": pname, "id": id, "source_info": self.source_info(c.loc, &c.name),
            "init_table": init, "tables": std::mem::take(&mut self.tables),
            "action_profiles": std::mem::take(&mut self.action_profiles),
            "conditionals": std::mem::take(&mut self.conditionals),
        }))
    }

    /// Declares every variable of an apply block up front (the graph is built back to front).
    fn hoist_vars(&mut self, sc: &mut Scope, stmts: &[Stmt]) -> Res<()> {
        for s in stmts {
            match s {
                Stmt::Var {
                    ty,
                    name,
                    init,
                    loc,
                } => {
                    let full = format!("{}.{name}", sc.block);
                    self.declare_var(sc, &full, name, ty, init.as_ref(), *loc)?;
                }
                Stmt::Const {
                    ty,
                    name,
                    value,
                    loc,
                } => {
                    let t = self.env.resolve(ty)?;
                    let (v, vt) = self.env.const_value(value)?;
                    let v = self.env.coerce_const(v, &vt, &t, *loc)?;
                    sc.bind(name, Binding::Const(v, t));
                }
                Stmt::Block(b) => self.hoist_vars(sc, b)?,
                Stmt::If(_, a, b, _) => {
                    self.hoist_vars(sc, a)?;
                    self.hoist_vars(sc, b)?;
                }
                Stmt::Switch(_, cases, _) => {
                    for c in cases {
                        if let Some(b) = &c.body {
                            self.hoist_vars(sc, b)?;
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// `t.apply()` (possibly inside `.hit`, `.miss`, `.action_run`): the table's declaration.
    fn applied_table(&self, sc: &Scope, c: &ControlDecl, e: &Expr) -> Option<TableDecl> {
        let Expr::Call { func, args, .. } = e else {
            return None;
        };
        let Expr::Member(b, m, _) = &**func else {
            return None;
        };
        if m != "apply" || !args.is_empty() {
            return None;
        }
        let Ok(Ref::Table(t)) = self.resolve(sc, b) else {
            return None;
        };
        c.locals.iter().find_map(|l| match l {
            Local::Table(x) if x.name == t => Some(x.clone()),
            _ => None,
        })
    }

    /// `t.apply().hit` / `.miss` / `!...`: the table and whether the condition means hit.
    fn hit_test(&self, sc: &Scope, c: &ControlDecl, e: &Expr) -> Option<(TableDecl, bool)> {
        match e {
            Expr::Unary("!", x, _) => self.hit_test(sc, c, x).map(|(t, h)| (t, !h)),
            Expr::Member(x, m, _) if m == "hit" || m == "miss" => {
                self.applied_table(sc, c, x).map(|t| (t, m == "hit"))
            }
            _ => None,
        }
    }

    fn is_simple(&self, sc: &Scope, c: &ControlDecl, s: &Stmt) -> bool {
        match s {
            Stmt::Assign(..) => true,
            // a loop runs in a synthesized action; one applying a table is refused in `seq`
            Stmt::For(f) => !crate::lower::for_loop::applies(&f.body),
            Stmt::Call(e, _) => {
                self.applied_table(sc, c, e).is_none() && self.direct_action(sc, e).is_none()
            }
            _ => false,
        }
    }

    /// A direct call of an action with constant arguments.
    fn direct_action(&self, sc: &Scope, e: &Expr) -> Option<(String, Vec<Expr>, Loc)> {
        let Expr::Call { func, args, .. } = e else {
            return None;
        };
        let Expr::Name(n, loc) = &**func else {
            return None;
        };
        let Some(Binding::Action(q)) = sc.get(n) else {
            return None;
        };
        let directed = self
            .find_action(sc, q)
            .is_some_and(|d| d.params.iter().any(|p| p.dir != crate::ast::Dir::None));
        if directed {
            return None; // its in/out/inout arguments are bound by inlining it
        }
        if args.iter().any(|a| self.env.const_value(a).is_err()) {
            return None; // inlined into a synthesized action instead
        }
        Some((n.clone(), args.clone(), *loc))
    }

    /// A keyless table running `action` with `data`, then `next`.
    fn keyless(
        &mut self,
        base: &str,
        action: &str,
        id: u64,
        data: Vec<Value>,
        next: Option<String>,
        loc: Loc,
    ) -> String {
        let name = self.fresh(&format!("tbl_{base}"));
        let tid = self.tables.len();
        self.tables.push(json!({
            "name": name, "id": tid, "source_info": self.source_info(loc, base),
            "key": [], "match_type": "exact", "type": "simple", "max_size": 1024,
            "with_counters": false, "support_timeout": false, "direct_meters": null,
            "action_ids": [id], "actions": [action], "base_default_next": next,
            "next_tables": {action: next},
            "default_entry": {"action_id": id, "action_const": true, "action_data": data, "action_entry_const": true},
        }));
        name
    }

    /// The graph of `stmts` followed by `next`; returns its first node.
    fn seq(
        &mut self,
        sc: &mut Scope,
        c: &ControlDecl,
        stmts: &[Stmt],
        next: Option<String>,
    ) -> Res<Option<String>> {
        // a switch on a value is the if-else chain p4c makes of it
        let stmts = &stmts
            .iter()
            .map(|s| match s {
                Stmt::Switch(e, cases, loc)
                    if !matches!(e, Expr::Member(_, m, _) if m == "action_run") =>
                {
                    switch_as_ifs(e, cases, *loc)
                }
                s => Ok(s.clone()),
            })
            .collect::<Res<Vec<Stmt>>>()?;
        let mut next = next;
        let mut i = stmts.len();
        while i > 0 {
            if self.is_simple(sc, c, &stmts[i - 1]) {
                let mut j = i - 1;
                while j > 0 && self.is_simple(sc, c, &stmts[j - 1]) {
                    j -= 1;
                }
                let mut prims = Vec::new();
                self.stmts_to_prims(sc, &stmts[j..i], &mut prims, false)?;
                let loc = stmt_loc(&stmts[j]);
                // named as p4c names them, file and line (`enumbmv2l31`): a name ending in a
                // digit is no suffix of a user table's (p4c's STF driver finds tables by suffix)
                let stem = self.file_name.trim_end_matches(".p4");
                let stem: String = stem.chars().filter(char::is_ascii_alphanumeric).collect();
                let aname = self.fresh(&format!("{stem}l{}", loc.line));
                let id = self.actions.len() as u64;
                self.actions.push(
                    json!({"name": aname, "id": id, "runtime_data": [], "primitives": prims}),
                );
                next = Some(self.keyless(&aname, &aname, id, vec![], next, loc));
                i = j;
                continue;
            }
            let s = &stmts[i - 1];
            i -= 1;
            next = match s {
                Stmt::Empty | Stmt::Var { init: None, .. } | Stmt::Const { .. } => next,
                Stmt::Var {
                    name,
                    init: Some(e),
                    loc,
                    ..
                } => {
                    let a = Stmt::Assign(Expr::Name(name.clone(), *loc), e.clone(), *loc);
                    self.seq(sc, c, &[a], next)?
                }
                Stmt::Block(b) => self.seq(sc, c, b, next)?,
                Stmt::Exit(_) | Stmt::Return(_) => None,
                Stmt::For(f) => {
                    return fail(f.loc, "a for loop that applies a table is not supported")
                }
                Stmt::Break(loc) | Stmt::Continue(loc) => {
                    return fail(*loc, "break and continue are only allowed in a for loop")
                }
                Stmt::ReturnValue(_, loc) => {
                    return fail(*loc, "return with a value is only allowed in a function")
                }
                Stmt::Call(e, loc) => {
                    if let Some(t) = self.applied_table(sc, c, e) {
                        Some(self.lower_table(sc, &t, Next::All(next))?)
                    } else if let Some((n, args, aloc)) = self.direct_action(sc, e) {
                        let (q, id, decl) = self.action_ref(sc, &n, aloc)?;
                        let data = self.action_data(&decl, &args, aloc)?;
                        // p4c lists an action called directly in P4Info, though its table is hidden
                        if !self.called_actions.iter().any(|(a, _)| *a == q) {
                            self.called_actions.push((q.clone(), decl.clone()));
                        }
                        Some(self.keyless(&n, &q, id, data, next, *loc))
                    } else {
                        return fail(*loc, "cannot lower this call");
                    }
                }
                Stmt::If(cond, t, e, loc) => {
                    let tn = self.seq(sc, c, t, next.clone())?;
                    let en = self.seq(sc, c, e, next)?;
                    if let Some((table, hit)) = self.hit_test(sc, c, cond) {
                        let (h, m) = if hit { (tn, en) } else { (en, tn) };
                        Some(self.lower_table(sc, &table, Next::HitMiss(h, m))?)
                    } else {
                        let (cv, ct) = self.rvalue(sc, cond)?;
                        if ct != Ty::Bool {
                            return fail(
                                cond.loc(),
                                format!("condition must be bool, found {}", ct.describe()),
                            );
                        }
                        let name = self.fresh("node");
                        let id = self.conditionals.len();
                        self.conditionals.push(json!({
                            "name": name, "id": id, "source_info": self.source_info(*loc, "if"),
                            "expression": cv, "true_next": tn, "false_next": en,
                        }));
                        Some(name)
                    }
                }
                Stmt::Switch(e, cases, loc) => {
                    let table = match e {
                        Expr::Member(x, m, _) if m == "action_run" => self.applied_table(sc, c, x),
                        _ => None,
                    };
                    let Some(table) = table else {
                        return fail(*loc, "switch is only supported on t.apply().action_run");
                    };
                    let mut per = Vec::new();
                    let mut default = next.clone();
                    let mut pending: Vec<(String, Loc)> = Vec::new();
                    for case in cases {
                        pending.extend(case.labels.iter().cloned());
                        let Some(body) = &case.body else { continue };
                        let target = self.seq(sc, c, body, next.clone())?;
                        for (l, lloc) in pending.drain(..) {
                            if l == "default" {
                                default = target.clone();
                            } else {
                                let Some(Binding::Action(q)) = sc.get(&l).cloned() else {
                                    return fail(lloc, format!("'{l}' is not an action"));
                                };
                                if !table.actions.iter().any(|a| a.name == l) {
                                    return fail(
                                        lloc,
                                        format!("'{l}' is not an action of table {}", table.name),
                                    );
                                }
                                per.push((q, target.clone()));
                            }
                        }
                    }
                    Some(self.lower_table(sc, &table, Next::ByAction(per, default))?)
                }
                Stmt::Assign(..) => next, // grouped above; never reached
            };
        }
        Ok(next)
    }
}

/// `switch (e) { a: b: {..} c: {..} default: {..} }` as `if (e == a || e == b) {..} else if
/// (e == c) {..} else {..}`; `e` is read once per label, so it may not call anything.
fn switch_as_ifs(e: &Expr, cases: &[SwitchCase], loc: Loc) -> Res<Stmt> {
    if contains_call(e) {
        return fail(
            loc,
            "switch on an expression with a call: assign it to a variable first",
        );
    }
    let mut groups: Vec<(Option<Expr>, Vec<Stmt>)> = Vec::new();
    let mut pending: Vec<Option<Expr>> = Vec::new();
    let mut default: Vec<Stmt> = Vec::new();
    for case in cases {
        pending.extend(case.values.iter().cloned());
        let Some(body) = &case.body else { continue };
        let mut cond: Option<Expr> = None;
        for v in pending.drain(..) {
            let Some(v) = v else {
                default = body.clone();
                continue;
            };
            let l = v.loc();
            let eq = Expr::Binary("==", Box::new(e.clone()), Box::new(v), l);
            cond = Some(match cond {
                None => eq,
                Some(c) => Expr::Binary("||", Box::new(c), Box::new(eq), l),
            });
        }
        if cond.is_some() {
            groups.push((cond, body.clone()));
        }
    }
    let mut stmt = Stmt::Block(default);
    for (cond, body) in groups.into_iter().rev() {
        if let Some(c) = cond {
            stmt = Stmt::If(c, body, vec![stmt], loc);
        }
    }
    Ok(stmt)
}

fn contains_call(e: &Expr) -> bool {
    match e {
        Expr::Call { .. } => true,
        Expr::Member(b, _, _) | Expr::Unary(_, b, _) | Expr::Cast(_, b, _) => contains_call(b),
        Expr::Index(a, b, _)
        | Expr::Binary(_, a, b, _)
        | Expr::Mask(a, b, _)
        | Expr::Range(a, b, _) => contains_call(a) || contains_call(b),
        Expr::Slice(a, b, c, _) | Expr::Mux(a, b, c, _) => {
            contains_call(a) || contains_call(b) || contains_call(c)
        }
        Expr::List(xs, _) => xs.iter().any(contains_call),
        _ => false,
    }
}

fn stmt_loc(s: &Stmt) -> Loc {
    match s {
        Stmt::Assign(_, _, l) | Stmt::Call(_, l) | Stmt::If(_, _, _, l) | Stmt::Switch(_, _, l) => {
            *l
        }
        Stmt::Var { loc, .. } | Stmt::Const { loc, .. } => *loc,
        Stmt::Exit(l) | Stmt::Return(l) => *l,
        Stmt::For(f) => f.loc,
        _ => Loc::default(),
    }
}

//! Action bodies (and the statements p4c moves into synthesized actions) to bmv2 primitives:
//! assignments, extern calls, `if` as forward jumps, calls of other actions inlined.

use crate::ast::*;
use crate::diag::{fail, Loc, Res};
use crate::env::{mask, Ty};
use crate::lower::expr::Ref;
use crate::lower::stack_index::header_operand;
use crate::lower::{hexstr, op, Binding, Lowerer, Scope};
use serde_json::{json, Value};

pub fn prim(o: &str, params: Vec<Value>) -> Value {
    json!({"op": o, "parameters": params})
}

pub fn header(inst: &str) -> Value {
    json!({"type": "header", "value": inst})
}

impl Lowerer<'_> {
    /// Lowers a declared action into the JSON `actions` list under `qualified`.
    pub fn lower_action(&mut self, sc: &Scope, a: &ActionDecl, qualified: &str) -> Res<u64> {
        if let Some(id) = self.action_id(qualified) {
            return Ok(id);
        }
        let mut sc = sc.clone();
        sc.push();
        let mut runtime_data = Vec::new();
        let param_types: Vec<Option<String>> = a
            .params
            .iter()
            .map(|p| self.env.new_type_name(&p.ty))
            .collect();
        self.action_param_types
            .insert(qualified.to_string(), param_types);
        for (i, p) in a.params.iter().enumerate() {
            if p.dir != Dir::None {
                return fail(p.loc, "this action's in/out/inout parameters must be bound where it is used (a call, or arguments in a table's actions list)");
            }
            let ty = self.env.resolve(&p.ty)?;
            let Some(w) = ty.width() else {
                return fail(
                    p.loc,
                    format!(
                        "action parameter '{}' must be bit<W> or bool, found {}",
                        p.name,
                        ty.describe()
                    ),
                );
            };
            runtime_data.push(json!({"name": p.name, "bitwidth": w}));
            sc.bind(&p.name, Binding::Param(i as u32, ty));
        }
        let mut prims = Vec::new();
        self.action_depth += 1;
        let lowered = self.action_body(&mut sc, &a.body, &mut prims);
        self.action_depth -= 1;
        lowered?;
        let id = self.actions.len() as u64;
        self.actions.push(
            json!({"name": qualified, "id": id, "runtime_data": runtime_data, "primitives": prims}),
        );
        self.action_ids.insert(qualified.to_string(), id);
        self.action_annotations
            .insert(qualified.to_string(), a.annotations.clone());
        Ok(id)
    }

    /// Appends the primitives of an action's body; a `return` in it jumps past its end.
    pub(crate) fn action_body(
        &mut self,
        sc: &mut Scope,
        body: &[Stmt],
        out: &mut Vec<Value>,
    ) -> Res<()> {
        self.return_jumps.push(Vec::new());
        let lowered = self.stmts_to_prims(sc, body, out, false);
        let jumps = self.return_jumps.pop().unwrap_or_default();
        lowered?;
        for j in jumps {
            out[j] = prim("_jump", vec![hexstr(out.len() as u128)]);
        }
        Ok(())
    }

    /// Appends the primitives of `stmts`; in a parser (`parser` true) assignments become `set`.
    pub fn stmts_to_prims(
        &mut self,
        sc: &mut Scope,
        stmts: &[Stmt],
        out: &mut Vec<Value>,
        parser: bool,
    ) -> Res<()> {
        for s in stmts {
            match s {
                Stmt::Empty => {}
                Stmt::Block(b) => {
                    sc.push();
                    self.stmts_to_prims(sc, b, out, parser)?;
                    sc.pop();
                }
                Stmt::Assign(l, r, loc) => {
                    let from = out.len();
                    out.extend(self.assign(sc, l, r, *loc, parser)?);
                    self.tag_source(&mut out[from..], *loc);
                }
                Stmt::Call(c, loc) => {
                    let from = out.len();
                    self.call_prims(sc, c, *loc, out)?;
                    self.tag_source(&mut out[from..], *loc);
                }
                Stmt::Var {
                    ty,
                    name,
                    init,
                    loc,
                } => {
                    let full = format!("{}.{name}", sc.block);
                    self.declare_var(sc, &full, name, ty, init.as_ref(), *loc)?;
                    if let Some(i) = init {
                        out.extend(self.assign(
                            sc,
                            &Expr::Name(name.clone(), *loc),
                            i,
                            *loc,
                            parser,
                        )?);
                    }
                }
                Stmt::Const {
                    ty,
                    name,
                    value,
                    loc,
                } => {
                    let t = self.env.resolve(ty)?;
                    let (v, vt) = match self.env.const_value(value) {
                        Ok(x) => x,
                        Err(_) => {
                            return fail(
                                *loc,
                                format!("'{name}' must be given a compile-time constant"),
                            )
                        }
                    };
                    let v = self.env.coerce_const(v, &vt, &t, *loc)?;
                    sc.bind(name, Binding::Const(v, t));
                }
                Stmt::If(c, t, e, loc) => {
                    if parser {
                        return fail(
                            *loc,
                            "an if inside a block of a parser state is not supported: write it at the state's top level",
                        );
                    }
                    let (cv, ct) = self.rvalue(sc, c)?;
                    if ct != Ty::Bool {
                        return fail(
                            c.loc(),
                            format!("condition must be bool, found {}", ct.describe()),
                        );
                    }
                    let jz = out.len();
                    out.push(Value::Null);
                    sc.push();
                    self.stmts_to_prims(sc, t, out, parser)?;
                    sc.pop();
                    if e.is_empty() {
                        out[jz] = prim("_jump_if_zero", vec![cv, hexstr(out.len() as u128)]);
                    } else {
                        let j = out.len();
                        out.push(Value::Null);
                        out[jz] = prim("_jump_if_zero", vec![cv, hexstr(out.len() as u128)]);
                        sc.push();
                        self.stmts_to_prims(sc, e, out, parser)?;
                        sc.pop();
                        out[j] = prim("_jump", vec![hexstr(out.len() as u128)]);
                    }
                }
                Stmt::Exit(loc) => {
                    out.push(prim("exit", vec![]));
                    let last = out.len() - 1;
                    self.tag_source(&mut out[last..], *loc);
                }
                Stmt::Return(loc) => match self.return_jumps.last_mut() {
                    // a jump past the body, patched once its end is known
                    Some(jumps) => {
                        jumps.push(out.len());
                        out.push(Value::Null);
                    }
                    None => return fail(*loc, "return is not supported here (only in an action, a function or at a control's top level)"),
                },
                Stmt::Switch(_, _, loc) => {
                    return fail(*loc, "switch is only allowed in a control's apply block")
                }
                Stmt::For(f) => self.for_prims(sc, f, out, parser)?,
                Stmt::Break(loc) => self.loop_jump(true, *loc, out)?,
                Stmt::Continue(loc) => self.loop_jump(false, *loc, out)?,
                Stmt::ReturnValue(_, loc) => {
                    return fail(*loc, "return with a value is only allowed in a function")
                }
            }
        }
        Ok(())
    }

    pub(crate) fn assign(
        &mut self,
        sc: &Scope,
        l: &Expr,
        r: &Expr,
        loc: Loc,
        parser: bool,
    ) -> Res<Vec<Value>> {
        let set = if parser { "set" } else { "assign" };
        if let Expr::Slice(x, h, lo, sloc) = l {
            let (dst, dt) = self.lvalue(sc, x)?;
            let (hi, lo) = self.slice_bounds(h, lo, &dt, *sloc)?;
            let w = hi - lo + 1;
            let (v, vt) = self.rvalue(sc, r)?;
            let v = self.coerce(v, &vt, &Ty::Bit(w), r.loc(), "the slice")?;
            let keep = mask(dt.width().unwrap_or(0)) & !(mask(w) << lo);
            let merged = op(
                "|",
                op("&", dst.clone(), hexstr(keep)),
                op("<<", op("&", v, hexstr(mask(w))), hexstr(u128::from(lo))),
            );
            return Ok(vec![prim(set, vec![dst, merged])]);
        }
        if let Expr::List(items, lloc) = r {
            return self.assign_list(sc, l, items, *lloc, parser);
        }
        if let Some(prims) = self.psa_assign(sc, l, r, parser)? {
            return Ok(prims);
        }
        if matches!(l, Expr::Name(..) | Expr::Member(..) | Expr::Index(..)) {
            if let Some(copy) = self.stack_assign(sc, l, r, loc)? {
                return Ok(vec![copy]);
            }
            if let Ref::Struct { sname, .. } = self.resolve(sc, l)? {
                // a struct is copied field by field (headers as headers)
                let Ok(Ref::Struct { sname: rs, .. }) = self.resolve(sc, r) else {
                    return fail(
                        r.loc(),
                        format!("a struct of type {sname} must be assigned a struct"),
                    );
                };
                if rs != sname {
                    return fail(
                        loc,
                        format!("struct type mismatch: {rs} assigned to {sname}"),
                    );
                }
                let mut out = Vec::new();
                for f in self.env.structs.get(&sname).cloned().unwrap_or_default() {
                    let member = |e: &Expr| Expr::Member(Box::new(e.clone()), f.name.clone(), loc);
                    out.extend(self.assign(sc, &member(l), &member(r), loc, parser)?);
                }
                return Ok(out);
            }
            if let Some((dst, htype)) = header_operand(self.resolve(sc, l)?) {
                let Some((src, st)) = header_operand(self.resolve(sc, r)?) else {
                    return fail(
                        r.loc(),
                        format!("a header of type {htype} must be assigned a header"),
                    );
                };
                if st != htype {
                    return fail(
                        loc,
                        format!("header type mismatch: {st} assigned to {htype}"),
                    );
                }
                return Ok(vec![prim("assign_header", vec![dst, src])]);
            }
        }
        let (dst, dt) = self.lvalue(sc, l)?;
        let (v, vt) = self.rvalue(sc, r)?;
        let what = l.path().unwrap_or_else(|| "the destination".into());
        let v = self.coerce(v, &vt, &dt, r.start(), &what)?;
        // p4c: a varbit takes another's value and length with assign_VL (in a parser, set)
        let set = match dt {
            Ty::Varbit(_) if !parser => "assign_VL",
            _ => set,
        };
        Ok(vec![prim(set, vec![dst, v])])
    }

    /// `h = { a, b, c }`: a header made valid with its fields set in order; a struct's
    /// fields set in order.
    fn assign_list(
        &mut self,
        sc: &Scope,
        l: &Expr,
        items: &[Expr],
        loc: Loc,
        parser: bool,
    ) -> Res<Vec<Value>> {
        let (fields, mut out) = match self.resolve(sc, l)? {
            Ref::Header { inst, htype } => (
                self.env.header_fields(&htype).to_vec(),
                vec![prim("add_header", vec![header(&inst)])],
            ),
            Ref::Struct { sname, .. } => (
                self.env.structs.get(&sname).cloned().unwrap_or_default(),
                Vec::new(),
            ),
            _ => {
                return fail(
                    loc,
                    format!(
                        "not supported: a list {{...}} assigned to {}",
                        l.path().unwrap_or_else(|| "this expression".into())
                    ),
                )
            }
        };
        if fields.len() != items.len() {
            return fail(
                loc,
                format!(
                    "{} has {} fields, the list {} values",
                    l.path().unwrap_or_default(),
                    fields.len(),
                    items.len()
                ),
            );
        }
        for (f, it) in fields.iter().zip(items) {
            let member = Expr::Member(Box::new(l.clone()), f.name.clone(), loc);
            out.extend(self.assign(sc, &member, it, loc, parser)?);
        }
        Ok(out)
    }

    pub fn arity(&self, loc: Loc, what: &str, args: &[Expr], n: usize) -> Res<()> {
        if args.len() != n {
            return fail(
                loc,
                format!(
                    "{what} takes {n} argument{}, {} given",
                    if n == 1 { "" } else { "s" },
                    args.len()
                ),
            );
        }
        Ok(())
    }

    /// A value argument of width `w` (constants sized to it).
    pub fn arg(&self, sc: &Scope, e: &Expr, w: u32, what: &str) -> Res<Value> {
        let (v, t) = self.rvalue(sc, e)?;
        match t {
            Ty::InfInt => self.coerce(v, &t, &Ty::Bit(w), e.loc(), what),
            Ty::Bit(_) | Ty::SerEnum(..) => Ok(v),
            Ty::Bool => Ok(crate::lower::un("b2d", v)),
            t => fail(
                e.loc(),
                format!("{what} must be bit<W>, found {}", t.describe()),
            ),
        }
    }

    /// The primitives of a call statement.
    pub fn call_prims(
        &mut self,
        sc: &mut Scope,
        c: &Expr,
        loc: Loc,
        out: &mut Vec<Value>,
    ) -> Res<()> {
        let Expr::Call {
            func,
            args,
            type_args,
            ..
        } = c
        else {
            return fail(loc, "expected a call");
        };
        match &**func {
            Expr::Name(n, nloc) => {
                let r = self.resolve(sc, func).map_err(|mut e| {
                    e.msg = format!(
                        "'{n}' is not declared (no action or extern function of that name)"
                    );
                    e.loc = *nloc;
                    e
                })?;
                match r {
                    Ref::Action(a) => self.inline_action(sc, &a, args, loc, out),
                    Ref::ExternFn(f) => self.extern_fn(sc, &f, args, type_args, loc, out),
                    _ => fail(loc, format!("'{n}' cannot be called")),
                }
            }
            Expr::Member(base, m, mloc) => {
                let r = self.resolve(sc, base)?;
                self.method(sc, r, m, args, *mloc, out)
            }
            _ => fail(loc, "cannot call this expression"),
        }
    }

    /// The declaration of an action visible in `sc` by its qualified name.
    pub fn find_action(&self, sc: &Scope, qualified: &str) -> Option<ActionDecl> {
        if let Some(c) = self.env.controls.get(&sc.block) {
            for l in &c.locals {
                if let Local::Action(a) = l {
                    // by the name the action is known by (its @name, if given)
                    if crate::lower::table::qualified(&sc.block, &a.name, &a.annotations)
                        == qualified
                    {
                        return Some(a.clone());
                    }
                }
            }
        }
        self.env
            .actions
            .iter()
            .find(|a| a.name == qualified)
            .cloned()
    }

    fn method(
        &mut self,
        sc: &Scope,
        r: Ref,
        m: &str,
        args: &[Expr],
        loc: Loc,
        out: &mut Vec<Value>,
    ) -> Res<()> {
        match (r, m) {
            (r @ (Ref::Header { .. } | Ref::Element { .. }), "setValid" | "setInvalid") => {
                self.arity(loc, m, args, 0)?;
                let o = if m == "setValid" { "add_header" } else { "remove_header" };
                out.extend(header_operand(r).map(|(h, _)| prim(o, vec![h])));
            }
            (Ref::Stack { name, .. }, "push_front" | "pop_front") => {
                self.arity(loc, m, args, 1)?;
                let n = match self.env.const_value(&args[0]) {
                    Ok((v, _)) => v,
                    Err(_) => return fail(args[0].loc(), "the count must be a constant"),
                };
                let o = if m == "push_front" { "push" } else { "pop" };
                out.push(prim(o, vec![json!({"type": "header_stack", "value": name}), hexstr(n)]));
            }
            (Ref::Extern(name, ty, w), _) => self.extern_method(sc, &name, &ty, w, m, args, loc, out)?,
            (Ref::Table(_), "apply") => return fail(loc, "tables can only be applied in a control's apply block"),
            (Ref::Packet, m) => return fail(loc, format!("packet.{m} is only allowed in the parser (extract, lookahead, advance) or the deparser (emit)")),
            (_, m) => return fail(loc, format!("unknown method '{m}'")),
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn extern_method(
        &mut self,
        sc: &Scope,
        name: &str,
        ty: &str,
        w: u32,
        m: &str,
        args: &[Expr],
        loc: Loc,
        out: &mut Vec<Value>,
    ) -> Res<()> {
        match (ty, m) {
            ("counter" | "Counter", "count") => {
                self.arity(loc, "count", args, 1)?;
                let idx = self.arg(sc, &args[0], 32, "the index")?;
                out.push(prim(
                    "count",
                    vec![json!({"type": "counter_array", "value": name}), idx],
                ));
            }
            ("direct_counter", "count") => self.arity(loc, "count", args, 0)?,
            ("register", "read") => {
                self.arity(loc, "read", args, 2)?;
                let (dst, dt) = self.lvalue(sc, &args[0])?;
                if dt.width() != Some(w) {
                    return fail(
                        args[0].loc(),
                        format!(
                            "register {name} holds bit<{w}>, read into {}",
                            dt.describe()
                        ),
                    );
                }
                let idx = self.arg(sc, &args[1], 32, "the index")?;
                out.push(prim(
                    "register_read",
                    vec![dst, json!({"type": "register_array", "value": name}), idx],
                ));
            }
            ("register" | "Register", "write") => {
                self.arity(loc, "write", args, 2)?;
                let idx = self.arg(sc, &args[0], 32, "the index")?;
                let (v, vt) = self.rvalue(sc, &args[1])?;
                let v = self.coerce(
                    v,
                    &vt,
                    &Ty::Bit(w),
                    args[1].loc(),
                    &format!("register {name}"),
                )?;
                out.push(prim(
                    "register_write",
                    vec![json!({"type": "register_array", "value": name}), idx, v],
                ));
            }
            ("meter", "execute_meter") => {
                self.arity(loc, "execute_meter", args, 2)?;
                let idx = self.arg(sc, &args[0], 32, "the index")?;
                let (dst, _) = self.lvalue(sc, &args[1])?;
                out.push(prim(
                    "execute_meter",
                    vec![json!({"type": "meter_array", "value": name}), idx, dst],
                ));
            }
            ("direct_meter", "read") => {
                self.arity(loc, "read", args, 1)?;
                let (dst, _) = self.lvalue(sc, &args[0])?;
                if let Some(mt) = self.meters.iter_mut().find(|x| x["name"] == name) {
                    mt["result_target"] = dst["value"].clone();
                }
            }
            ("InternetChecksum", _) => {
                out.extend(self.psa_checksum_method(sc, name, m, args, loc)?)
            }
            _ => return fail(loc, format!("{ty} has no method '{m}' the switch supports")),
        }
        Ok(())
    }
}

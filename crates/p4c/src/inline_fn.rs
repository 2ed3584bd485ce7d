//! Functions, inlined where they are called as p4c's frontend does. A call in an expression is
//! taken out of its statement: before it come a variable per `in` parameter (copy-in), the
//! body with `return e` turned into an assignment to a result variable, and the call becomes
//! that variable. `out` / `inout` parameters stand for the argument itself. A return that ends
//! an `if` branch takes the statements after the `if` into the other branch
//! (`if (c) return a; return b;`); any other return sets a flag that guards the rest
//! (fn_return_flag.rs).

use crate::ast::*;
use crate::ast_map::walk;
use crate::diag::{fail, Loc, Res};
use crate::subst::Subst;
use std::collections::HashMap;

pub struct FnInliner<'a> {
    funcs: &'a HashMap<String, FunctionDecl>,
    /// Numbers the variables of each inlined call.
    count: usize,
    /// Functions being inlined (a call back into one is recursion).
    active: Vec<String>,
}

impl<'a> FnInliner<'a> {
    pub fn new(funcs: &'a HashMap<String, FunctionDecl>) -> Self {
        FnInliner {
            funcs,
            count: 0,
            active: Vec::new(),
        }
    }

    fn called(&self, e: &Expr) -> Option<&'a FunctionDecl> {
        match e {
            Expr::Call { func, .. } => match &**func {
                Expr::Name(n, _) => self.funcs.get(n),
                _ => None,
            },
            _ => None,
        }
    }

    /// The first function call inside `e` (name and place), if any.
    pub fn call_in(&self, e: &Expr) -> Option<(String, Loc)> {
        if let Some(f) = self.called(e) {
            return Some((f.name.clone(), e.start()));
        }
        match e {
            Expr::Member(x, _, _) | Expr::Unary(_, x, _) | Expr::Cast(_, x, _) => self.call_in(x),
            Expr::Index(x, y, _)
            | Expr::Binary(_, x, y, _)
            | Expr::Mask(x, y, _)
            | Expr::Range(x, y, _) => self.call_in(x).or_else(|| self.call_in(y)),
            Expr::Slice(x, _, _, _) => self.call_in(x),
            Expr::Mux(c, x, y, _) => self
                .call_in(c)
                .or_else(|| self.call_in(x))
                .or_else(|| self.call_in(y)),
            Expr::Call { func, args, .. } => self
                .call_in(func)
                .or_else(|| args.iter().find_map(|a| self.call_in(a))),
            Expr::List(xs, _) => xs.iter().find_map(|a| self.call_in(a)),
            _ => None,
        }
    }

    pub fn stmts(&mut self, stmts: &[Stmt]) -> Res<Vec<Stmt>> {
        let mut out = Vec::with_capacity(stmts.len());
        for s in stmts {
            self.stmt(s, &mut out)?;
        }
        Ok(out)
    }

    fn stmt(&mut self, s: &Stmt, out: &mut Vec<Stmt>) -> Res<()> {
        let st = match s {
            Stmt::Call(c, loc) => match (self.called(c), c) {
                (Some(f), Expr::Call { args, .. }) => {
                    let args2 = self.hoist_args(f, args, out, false)?;
                    self.inline(f, &args2, *loc, out)?;
                    return Ok(());
                }
                _ => Stmt::Call(self.hoist(c, out, false)?, *loc),
            },
            Stmt::Assign(l, r, loc) => {
                let l = self.hoist(l, out, false)?;
                Stmt::Assign(l, self.hoist(r, out, false)?, *loc)
            }
            Stmt::If(c, t, e, loc) => {
                let c = self.hoist(c, out, false)?;
                Stmt::If(c, self.stmts(t)?, self.stmts(e)?, *loc)
            }
            Stmt::Block(b) => Stmt::Block(self.stmts(b)?),
            Stmt::Switch(e, cases, loc) => {
                let e = self.hoist(e, out, false)?;
                let mut cs = Vec::with_capacity(cases.len());
                for c in cases {
                    cs.push(SwitchCase {
                        body: match &c.body {
                            Some(b) => Some(self.stmts(b)?),
                            None => None,
                        },
                        ..c.clone()
                    });
                }
                Stmt::Switch(e, cs, *loc)
            }
            Stmt::Var {
                ty,
                name,
                init: Some(i),
                loc,
            } => Stmt::Var {
                ty: ty.clone(),
                name: name.clone(),
                init: Some(self.hoist(i, out, false)?),
                loc: *loc,
            },
            Stmt::ReturnValue(e, loc) => Stmt::ReturnValue(self.hoist(e, out, false)?, *loc),
            other => other.clone(),
        };
        out.push(st);
        Ok(())
    }

    /// `e` with every function call in it replaced by its result variable (the inlined bodies
    /// appended to `pre`). Under `&&`, `||` and `?:` (`cond` true) a function that writes its
    /// arguments is refused: taking it out of the expression would run it unconditionally.
    fn hoist(&mut self, e: &Expr, pre: &mut Vec<Stmt>, cond: bool) -> Res<Expr> {
        if let (Some(f), Expr::Call { args, .. }) = (self.called(e), e) {
            let loc = e.start();
            if cond
                && f.params
                    .iter()
                    .any(|p| matches!(p.dir, Dir::Out | Dir::InOut))
            {
                return fail(loc, format!("function '{}' writes its arguments: call it in a statement of its own, not under &&, || or ?:", f.name));
            }
            let args2 = self.hoist_args(f, args, pre, cond)?;
            return self.inline(f, &args2, loc, pre);
        }
        if let Expr::Binary(o @ ("&&" | "||"), x, y, l) = e {
            if self.writes_args_in(y) {
                // `x && f(..)` runs f only when x holds: `t = x; if (t) { t = f(..); }`
                let x2 = self.hoist(x, pre, cond)?;
                let t = self.temp(x2, pre);
                let mut branch = Vec::new();
                let y2 = self.hoist(y, &mut branch, false)?;
                branch.push(Stmt::Assign(t.clone(), y2, *l));
                lift_vars(&mut branch, pre);
                let test = if *o == "&&" {
                    t.clone()
                } else {
                    Expr::Unary("!", Box::new(t.clone()), *l)
                };
                pre.push(Stmt::If(test, branch, Vec::new(), *l));
                return Ok(t);
            }
        }
        if let Expr::Mux(c, x, y, l) = e {
            if self.writes_args_in(x) || self.writes_args_in(y) {
                // only the chosen side runs: `t = c; if (t) { x's calls } else { y's calls }`
                let c2 = self.hoist(c, pre, cond)?;
                let t = self.temp(c2, pre);
                let (mut bx, mut by) = (Vec::new(), Vec::new());
                let x2 = self.hoist(x, &mut bx, false)?;
                let y2 = self.hoist(y, &mut by, false)?;
                lift_vars(&mut bx, pre);
                lift_vars(&mut by, pre);
                pre.push(Stmt::If(t.clone(), bx, by, *l));
                return Ok(Expr::Mux(Box::new(t), Box::new(x2), Box::new(y2), *l));
            }
        }
        if let Expr::Binary(o, x, y, l) = e {
            // left to right: a call that writes its arguments on the right must not change
            // what the left side read
            let short = matches!(*o, "&&" | "||");
            let mut x2 = self.hoist(x, pre, cond)?;
            if !short && self.writes_args_in(y) {
                x2 = self.freeze(x2, pre);
            }
            let y2 = self.hoist(y, pre, cond || short)?;
            return Ok(Expr::Binary(o, Box::new(x2), Box::new(y2), *l));
        }
        if let Expr::List(xs, l) = e {
            // left to right too: an element read before a later element's call that writes
            // its arguments is copied first (`{ h.a, set(h.a) }`)
            let mut v = Vec::with_capacity(xs.len());
            for (k, x) in xs.iter().enumerate() {
                let mut x2 = self.hoist(x, pre, cond)?;
                if xs[k + 1..].iter().any(|y| self.writes_args_in(y)) {
                    x2 = self.freeze(x2, pre);
                }
                v.push(x2);
            }
            return Ok(Expr::List(v, *l));
        }
        let mut h = |x: &Expr, c: bool| -> Res<Box<Expr>> { Ok(Box::new(self.hoist(x, pre, c)?)) };
        Ok(match e {
            Expr::Member(x, m, l) => Expr::Member(h(x, cond)?, m.clone(), *l),
            Expr::Index(x, i, l) => Expr::Index(h(x, cond)?, h(i, cond)?, *l),
            Expr::Slice(x, a, b, l) => Expr::Slice(h(x, cond)?, a.clone(), b.clone(), *l),
            Expr::Call {
                func,
                type_args,
                args,
                loc,
            } => {
                let func = h(func, cond)?;
                let mut a2 = Vec::with_capacity(args.len());
                for a in args {
                    a2.push(*h(a, cond)?);
                }
                Expr::Call {
                    func,
                    type_args: type_args.clone(),
                    args: a2,
                    loc: *loc,
                }
            }
            Expr::Unary(o, x, l) => Expr::Unary(o, h(x, cond)?, *l),
            Expr::Cast(t, x, l) => Expr::Cast(t.clone(), h(x, cond)?, *l),
            Expr::Mux(c, x, y, l) => Expr::Mux(h(c, cond)?, h(x, true)?, h(y, true)?, *l),
            other => other.clone(),
        })
    }

    /// The arguments of a call of `f`, calls in them taken out; an `in` argument read before a
    /// later argument's call that writes its arguments is first copied.
    fn hoist_args(
        &mut self,
        f: &FunctionDecl,
        args: &[Expr],
        pre: &mut Vec<Stmt>,
        cond: bool,
    ) -> Res<Vec<Expr>> {
        let mut out = Vec::with_capacity(args.len());
        for (k, a) in args.iter().enumerate() {
            let a2 = self.hoist(a, pre, cond)?;
            let is_in = f
                .params
                .get(k)
                .is_some_and(|p| matches!(p.dir, Dir::In | Dir::None));
            let later_writes = args[k + 1..].iter().any(|b| self.writes_args_in(b));
            out.push(if is_in && later_writes {
                self.freeze(a2, pre)
            } else {
                a2
            });
        }
        Ok(out)
    }

    /// Whether evaluating `e` calls a function that writes its arguments.
    fn writes_args_in(&self, e: &Expr) -> bool {
        let mut found = false;
        walk(e, &mut |x| {
            if let Some(f) = self.called(x) {
                found |= f
                    .params
                    .iter()
                    .any(|p| matches!(p.dir, Dir::Out | Dir::InOut));
            }
        });
        found
    }

    /// `e`'s value now, in a temporary (a constant as it is).
    fn freeze(&mut self, e: Expr, pre: &mut Vec<Stmt>) -> Expr {
        if matches!(e, Expr::Int { .. } | Expr::Bool(..)) {
            return e;
        }
        self.temp(e, pre)
    }

    /// A new temporary holding `e`.
    fn temp(&mut self, e: Expr, pre: &mut Vec<Stmt>) -> Expr {
        let loc = e.start();
        let name = format!("tmp_{}", self.count);
        self.count += 1;
        pre.push(Stmt::Var {
            ty: Type::Infer,
            name: name.clone(),
            init: Some(e),
            loc,
        });
        Expr::Name(name, loc)
    }

    /// Appends the inlined body of `f(args)` to `pre`; the result variable (a dummy name for a
    /// function returning void).
    fn inline(
        &mut self,
        f: &FunctionDecl,
        args: &[Expr],
        loc: Loc,
        pre: &mut Vec<Stmt>,
    ) -> Res<Expr> {
        if self.active.contains(&f.name) {
            return fail(
                loc,
                format!(
                    "function '{}' calls itself: recursion is not allowed in P4",
                    f.name
                ),
            );
        }
        if args.len() != f.params.len() {
            return fail(
                loc,
                format!(
                    "function '{}' takes {} argument(s), {} given",
                    f.name,
                    f.params.len(),
                    args.len()
                ),
            );
        }
        let n = self.count;
        self.count += 1;
        let fresh = |x: &str| format!("{}_{x}_{n}", f.name);
        let mut sub = Subst::default();
        let mut copy_out = Vec::new();
        for (k, (p, a)) in f.params.iter().zip(args).enumerate() {
            let shared = crate::alias::place(a).is_some_and(|pa| {
                args.iter().enumerate().any(|(j, o)| {
                    j != k
                        && crate::alias::place(o).is_some_and(|po| crate::alias::overlaps(&pa, &po))
                })
            });
            // a stack element indexed at run time has no fixed path to stand for the parameter
            let runtime_element = a.path().is_none()
                && !matches!(a, Expr::Slice(..))
                && crate::alias::place(a).is_some();
            match p.dir {
                Dir::Out | Dir::InOut if shared || runtime_element => {
                    // two arguments name the same place: each parameter gets its own copy,
                    // written back left to right (so does a run-time stack element, whose
                    // index is evaluated again for the copy back)
                    let v = fresh(&p.name);
                    pre.push(Stmt::Var {
                        ty: p.ty.clone(),
                        name: v.clone(),
                        init: (p.dir == Dir::InOut).then(|| a.clone()),
                        loc,
                    });
                    copy_out.push(Stmt::Assign(a.clone(), Expr::Name(v.clone(), loc), loc));
                    sub.add(&p.name, Expr::Name(v, loc));
                }
                Dir::Out | Dir::InOut => {
                    if a.path().is_none() && !matches!(a, Expr::Slice(..)) {
                        return fail(
                            a.start(),
                            format!(
                                "argument for '{}' of function '{}' must be a field or variable (it is {})",
                                p.name,
                                f.name,
                                if p.dir == Dir::Out { "out" } else { "inout" }
                            ),
                        );
                    }
                    sub.add(&p.name, a.clone());
                }
                Dir::In | Dir::None => {
                    if matches!(a, Expr::Int { .. } | Expr::Bool(..)) {
                        sub.add(&p.name, a.clone());
                    } else {
                        let v = fresh(&p.name);
                        pre.push(Stmt::Var {
                            ty: p.ty.clone(),
                            name: v.clone(),
                            init: Some(a.clone()),
                            loc,
                        });
                        sub.add(&p.name, Expr::Name(v, loc));
                    }
                }
            }
        }
        let mut declared = Vec::new();
        declared_names(&f.body, &mut declared);
        for d in declared {
            sub.add(&d, Expr::Name(fresh(&d), loc));
        }
        let is_void = matches!(f.ret, Type::Void);
        let ret = fresh("retval");
        if !is_void {
            pre.push(Stmt::Var {
                ty: f.ret.clone(),
                name: ret.clone(),
                init: None,
                loc,
            });
        }
        let body = sub.stmts(&f.body);
        let body = match returns_at_end(body.clone()) {
            Some(b) => replace_returns(b, &ret, loc),
            None => {
                // a return the rest of the body cannot be moved under: a flag guards the rest
                let flag = fresh("returned");
                pre.push(Stmt::Var {
                    ty: Type::Bool,
                    name: flag.clone(),
                    init: Some(Expr::Bool(false, loc)),
                    loc,
                });
                crate::fn_return_flag::guard_returns(body, &ret, &flag, loc)
            }
        };
        self.active.push(f.name.clone());
        let body = self.stmts(&body);
        self.active.pop();
        pre.extend(body?);
        pre.extend(copy_out);
        Ok(Expr::Name(ret, loc))
    }
}

fn declared_names(stmts: &[Stmt], out: &mut Vec<String>) {
    for s in stmts {
        match s {
            Stmt::Var { name, .. } | Stmt::Const { name, .. } => out.push(name.clone()),
            Stmt::Block(b) => declared_names(b, out),
            Stmt::If(_, a, b, _) => {
                declared_names(a, out);
                declared_names(b, out);
            }
            _ => {}
        }
    }
}

fn contains_return(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|s| match s {
        Stmt::Return(_) | Stmt::ReturnValue(..) => true,
        Stmt::If(_, a, b, _) => contains_return(a) || contains_return(b),
        Stmt::Block(b) => contains_return(b),
        Stmt::Switch(_, cases, _) => cases
            .iter()
            .any(|c| c.body.as_deref().is_some_and(contains_return)),
        _ => false,
    })
}

fn is_return(s: &Stmt) -> bool {
    matches!(s, Stmt::Return(_) | Stmt::ReturnValue(..))
}

/// Whether every path through `stmts` ends in a return.
fn always_returns(stmts: &[Stmt]) -> bool {
    match stmts.last() {
        Some(s) if is_return(s) => true,
        Some(Stmt::If(_, a, b, _)) => always_returns(a) && always_returns(b),
        Some(Stmt::Block(b)) => always_returns(b),
        _ => false,
    }
}

/// Rewrites `if (c) { ...; return x; } rest` as `if (c) { ...; return x; } else { rest }` until
/// every return ends a path; None when a return cannot be moved there (the caller then guards
/// the rest with a flag).
fn returns_at_end(stmts: Vec<Stmt>) -> Option<Vec<Stmt>> {
    let mut out: Vec<Stmt> = Vec::with_capacity(stmts.len());
    let mut it = stmts.into_iter();
    while let Some(s) = it.next() {
        let rest: Vec<Stmt> = it.clone().collect();
        let has_return = contains_return(std::slice::from_ref(&s));
        match s {
            Stmt::If(c, a, b, loc)
                if !rest.is_empty() && (always_returns(&a) || always_returns(&b)) =>
            {
                let add = |br: Vec<Stmt>| -> Vec<Stmt> {
                    if always_returns(&br) {
                        br
                    } else {
                        let mut v = br;
                        v.extend(rest.iter().cloned());
                        v
                    }
                };
                let (a, b) = (add(a), add(b));
                out.push(Stmt::If(c, returns_at_end(a)?, returns_at_end(b)?, loc));
                return Some(out);
            }
            Stmt::If(..) | Stmt::Switch(..) | Stmt::Block(..) if !rest.is_empty() && has_return => {
                return None
            }
            Stmt::Switch(..) if has_return => return None,
            Stmt::Return(_) | Stmt::ReturnValue(..) if !rest.is_empty() => return None,
            Stmt::If(c, a, b, loc) => {
                out.push(Stmt::If(c, returns_at_end(a)?, returns_at_end(b)?, loc))
            }
            Stmt::Block(b) => out.push(Stmt::Block(returns_at_end(b)?)),
            other => out.push(other),
        }
    }
    Some(out)
}

fn replace_returns(stmts: Vec<Stmt>, ret: &str, loc: Loc) -> Vec<Stmt> {
    stmts
        .into_iter()
        .map(|s| match s {
            Stmt::ReturnValue(e, l) => Stmt::Assign(Expr::Name(ret.to_string(), loc), e, l),
            Stmt::Return(_) => Stmt::Empty,
            Stmt::If(c, a, b, l) => Stmt::If(
                c,
                replace_returns(a, ret, loc),
                replace_returns(b, ret, loc),
                l,
            ),
            Stmt::Block(b) => Stmt::Block(replace_returns(b, ret, loc)),
            other => other,
        })
        .collect()
}

/// Moves the variables a conditional block declares (typed ones: a function's parameters and
/// result) before it, so what the block computes is still visible after it.
fn lift_vars(block: &mut [Stmt], pre: &mut Vec<Stmt>) {
    for s in block.iter_mut() {
        if let Stmt::Var {
            ty,
            name,
            init,
            loc,
        } = s
        {
            if matches!(ty, Type::Infer) {
                continue;
            }
            pre.push(Stmt::Var {
                ty: ty.clone(),
                name: name.clone(),
                init: None,
                loc: *loc,
            });
            *s = match init.take() {
                Some(e) => Stmt::Assign(Expr::Name(name.clone(), *loc), e, *loc),
                None => Stmt::Empty,
            };
        }
    }
}

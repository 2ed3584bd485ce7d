//! `t.apply().hit` / `.miss` inside an expression of a control's apply block: the table is
//! applied by a statement of its own before the one using it, setting a bool the expression
//! reads instead. An apply evaluated only on some paths (right of `&&` / `||`, a branch of
//! `?:`) runs under a copy of the deciding condition taken at that point, so the table runs
//! exactly when the expression would have evaluated it.

use crate::ast::*;
use crate::diag::Loc;

#[derive(Default)]
pub struct Hoister {
    count: usize,
    pre: Vec<Stmt>,
    guards: Vec<Expr>,
}

/// The table applied and the member read when `e` is `t.apply().hit` or `t.apply().miss`.
fn applied_hit(e: &Expr) -> Option<(&Expr, bool)> {
    let Expr::Member(call, m, _) = e else {
        return None;
    };
    let Expr::Call { func, args, .. } = &**call else {
        return None;
    };
    match &**func {
        Expr::Member(_, a, _) if a == "apply" && args.is_empty() && (m == "hit" || m == "miss") => {
            Some((call, m == "hit"))
        }
        _ => None,
    }
}

fn has_apply(e: &Expr) -> bool {
    if applied_hit(e).is_some() {
        return true;
    }
    match e {
        Expr::Member(x, _, _) | Expr::Unary(_, x, _) | Expr::Cast(_, x, _) => has_apply(x),
        Expr::Index(x, y, _)
        | Expr::Binary(_, x, y, _)
        | Expr::Mask(x, y, _)
        | Expr::Range(x, y, _) => has_apply(x) || has_apply(y),
        Expr::Slice(x, y, z, _) | Expr::Mux(x, y, z, _) => {
            has_apply(x) || has_apply(y) || has_apply(z)
        }
        Expr::Call { func, args, .. } => has_apply(func) || args.iter().any(has_apply),
        Expr::List(xs, _) => xs.iter().any(has_apply),
        _ => false,
    }
}

/// A table-apply test an `if` or `switch` already takes as it is.
fn plain_hit_test(e: &Expr) -> bool {
    match e {
        Expr::Unary("!", x, _) => plain_hit_test(x),
        _ => applied_hit(e).is_some(),
    }
}

fn bool_var(name: &str, init: Expr, loc: Loc) -> Stmt {
    Stmt::Var {
        ty: Type::Bool,
        name: name.into(),
        init: Some(init),
        loc,
    }
}

impl Hoister {
    fn fresh(&mut self, what: &str) -> String {
        self.count += 1;
        format!("{what}_{}_tmp", self.count)
    }

    /// A copy of `cond` taken now, as a name.
    fn snapshot(&mut self, cond: Expr) -> Expr {
        let loc = cond.loc();
        let n = self.fresh("cond");
        self.pre.push(bool_var(&n, cond, loc));
        Expr::Name(n, loc)
    }

    fn expr(&mut self, e: &Expr) -> Expr {
        if let Some((call, hit)) = applied_hit(e) {
            let loc = e.loc();
            let n = self.fresh("hit");
            self.pre.push(bool_var(&n, Expr::Bool(false, loc), loc));
            let set = Stmt::Assign(Expr::Name(n.clone(), loc), Expr::Bool(true, loc), loc);
            let test = Expr::Member(Box::new(call.clone()), "hit".into(), loc);
            let mut s = Stmt::If(test, vec![set], Vec::new(), loc);
            for g in self.guards.iter().rev() {
                s = Stmt::If(g.clone(), vec![s], Vec::new(), loc);
            }
            self.pre.push(s);
            let v = Expr::Name(n, loc);
            return if hit {
                v
            } else {
                Expr::Unary("!", Box::new(v), loc)
            };
        }
        if !has_apply(e) {
            return e.clone();
        }
        let b = |h: &mut Self, x: &Expr| Box::new(h.expr(x));
        match e {
            Expr::Binary(o @ ("&&" | "||"), x, y, l) if has_apply(y) => {
                let x = self.expr(x);
                let c = self.snapshot(x);
                let l2 = *l;
                let guard = if *o == "&&" {
                    c.clone()
                } else {
                    Expr::Unary("!", Box::new(c.clone()), l2)
                };
                self.guards.push(guard);
                let y = self.expr(y);
                self.guards.pop();
                Expr::Binary(o, Box::new(c), Box::new(y), l2)
            }
            Expr::Mux(c, x, y, l) if has_apply(x) || has_apply(y) => {
                let c = self.expr(c);
                let c = self.snapshot(c);
                self.guards.push(c.clone());
                let x = self.expr(x);
                self.guards.pop();
                self.guards.push(Expr::Unary("!", Box::new(c.clone()), *l));
                let y = self.expr(y);
                self.guards.pop();
                Expr::Mux(Box::new(c), Box::new(x), Box::new(y), *l)
            }
            Expr::Member(x, m, l) => Expr::Member(b(self, x), m.clone(), *l),
            Expr::Index(x, i, l) => Expr::Index(b(self, x), b(self, i), *l),
            Expr::Slice(x, h, lo, l) => Expr::Slice(b(self, x), b(self, h), b(self, lo), *l),
            Expr::Call {
                func,
                type_args,
                args,
                loc,
            } => Expr::Call {
                func: b(self, func),
                type_args: type_args.clone(),
                args: args.iter().map(|a| self.expr(a)).collect(),
                loc: *loc,
            },
            Expr::Unary(o, x, l) => Expr::Unary(o, b(self, x), *l),
            Expr::Binary(o, x, y, l) => Expr::Binary(o, b(self, x), b(self, y), *l),
            Expr::Cast(t, x, l) => Expr::Cast(t.clone(), b(self, x), *l),
            Expr::Mux(c, x, y, l) => Expr::Mux(b(self, c), b(self, x), b(self, y), *l),
            Expr::List(xs, l) => Expr::List(xs.iter().map(|x| self.expr(x)).collect(), *l),
            _ => e.clone(),
        }
    }

    /// `stmts` with every table apply used inside an expression moved into statements of its own.
    pub fn stmts(&mut self, stmts: &[Stmt]) -> Vec<Stmt> {
        let mut out = Vec::with_capacity(stmts.len());
        for s in stmts {
            let s = match s {
                Stmt::Assign(l, r, loc) if has_apply(r) => {
                    Stmt::Assign(l.clone(), self.expr(r), *loc)
                }
                Stmt::Call(c, loc) if has_apply(c) && applied_hit(c).is_none() => match c {
                    Expr::Call {
                        func,
                        type_args,
                        args,
                        loc: cl,
                    } => Stmt::Call(
                        Expr::Call {
                            func: func.clone(),
                            type_args: type_args.clone(),
                            args: args.iter().map(|a| self.expr(a)).collect(),
                            loc: *cl,
                        },
                        *loc,
                    ),
                    _ => s.clone(),
                },
                Stmt::Var {
                    ty,
                    name,
                    init: Some(i),
                    loc,
                } if has_apply(i) => Stmt::Var {
                    ty: ty.clone(),
                    name: name.clone(),
                    init: Some(self.expr(i)),
                    loc: *loc,
                },
                Stmt::If(c, t, e, loc) => {
                    let c = if plain_hit_test(c) {
                        c.clone()
                    } else {
                        self.expr(c)
                    };
                    // the condition's applies go before the if, not into its branches
                    out.append(&mut self.pre);
                    Stmt::If(c, self.stmts(t), self.stmts(e), *loc)
                }
                Stmt::Block(b) => Stmt::Block(self.stmts(b)),
                Stmt::Switch(e, cases, loc) => Stmt::Switch(
                    e.clone(),
                    cases
                        .iter()
                        .map(|c| SwitchCase {
                            labels: c.labels.clone(),
                            values: c.values.clone(),
                            body: c.body.as_ref().map(|b| self.stmts(b)),
                        })
                        .collect(),
                    *loc,
                ),
                _ => s.clone(),
            };
            out.append(&mut self.pre);
            out.push(s);
        }
        out
    }
}

//! An action called from another body, inlined there: its parameters stand for the arguments,
//! copied in and out only where the body could tell a copy from the argument.

use crate::ast::*;
use crate::diag::{fail, Loc, Res};
use crate::env::Ty;
use crate::lower::{Binding, Lowerer, Scope};
use serde_json::Value;

impl Lowerer<'_> {
    /// A call of an action from another body: its statements, its parameters standing for the
    /// arguments. An argument is copied in (and out, for out / inout) only where the body could
    /// tell the copy from the argument itself: it writes what an `in` argument reads, or reaches
    /// what an out / inout argument names by another way.
    pub(crate) fn inline_action(
        &mut self,
        sc: &mut Scope,
        name: &str,
        args: &[Expr],
        loc: Loc,
        out: &mut Vec<Value>,
    ) -> Res<()> {
        let Some(a) = self.find_action(sc, name) else {
            return fail(loc, format!("action '{name}' not found"));
        };
        self.arity(loc, &format!("action {}", a.name), args, a.params.len())?;
        if self.action_depth == 0 && !self.called_actions.iter().any(|(n, _)| n == name) {
            self.called_actions.push((name.to_string(), a.clone()));
        }
        let access = self.action_access(sc, &a, 0);
        let mut inner = sc.clone();
        inner.push();
        let mut copy_out = Vec::new();
        for (k, (p, arg)) in a.params.iter().zip(args).enumerate() {
            let t = self.env.resolve(&p.ty)?;
            let writable = matches!(p.dir, Dir::Out | Dir::InOut);
            let others = args
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != k)
                .filter_map(|(_, o)| crate::alias::place(o));
            let observable = if writable {
                let Some(place) = crate::alias::place(arg) else {
                    return fail(
                        arg.start(),
                        format!(
                            "argument for '{}' of action {} must be a field or variable",
                            p.name, a.name
                        ),
                    );
                };
                access.touches(&place)
                    || others
                        .collect::<Vec<_>>()
                        .iter()
                        .any(|o| crate::alias::overlaps(o, &place))
                    || matches!(arg, Expr::Slice(..))
            } else {
                let mut reads = Vec::new();
                crate::alias::reads_of(arg, &mut reads);
                reads.iter().any(|r| access.writes_to(r))
            };
            let scalar = t.width().is_some();
            if observable {
                // a variable of the parameter's type (a scalar, a header, a struct of them)
                // holds the copy: the body sees it, not the argument
                let mut with_tmp = sc.clone();
                with_tmp.push();
                let full = format!("{}.{}", sc.block, p.name);
                self.declare_var(&mut with_tmp, &full, "$copy", &p.ty, None, p.loc)?;
                let Some(copy_binding) = with_tmp.get("$copy").cloned() else {
                    return fail(p.loc, format!("no copy for parameter '{}'", p.name));
                };
                let copy = Expr::Name("$copy".into(), arg.start());
                if p.dir != Dir::Out {
                    out.extend(self.assign(&with_tmp, &copy, arg, arg.start(), false)?);
                }
                if writable {
                    copy_out.extend(self.assign(&with_tmp, arg, &copy, arg.start(), false)?);
                }
                inner.bind(&p.name, copy_binding);
            } else if !writable && !scalar && crate::alias::place(arg).is_none() {
                // a header or struct given as a list `{...}`: copied into a variable
                let mut with_tmp = sc.clone();
                with_tmp.push();
                let full = format!("{}.{}", sc.block, p.name);
                self.declare_var(&mut with_tmp, &full, "$copy", &p.ty, None, p.loc)?;
                let copy = Expr::Name("$copy".into(), arg.start());
                out.extend(self.assign(&with_tmp, &copy, arg, arg.start(), false)?);
                if let Some(b) = with_tmp.get("$copy") {
                    inner.bind(&p.name, b.clone());
                }
            } else if writable || !scalar {
                let r = self.resolve(sc, arg)?;
                inner.bind(&p.name, Binding::Alias(Box::new(r)));
            } else {
                let (v, vt) = self.rvalue(sc, arg)?;
                let v = match (&vt, &t) {
                    (Ty::Bool, Ty::Bool) => v,
                    _ => self.coerce(v, &vt, &t, arg.loc(), &p.name)?,
                };
                inner.bind(&p.name, Binding::Value(v, t));
            }
        }
        self.action_depth += 1;
        let lowered = self.action_body(&mut inner, &a.body, out);
        self.action_depth -= 1;
        lowered?;
        out.extend(copy_out);
        Ok(())
    }

    /// What an action's body reads and writes outside its own parameters and variables (the
    /// actions it calls included).
    fn action_access(&self, sc: &Scope, a: &ActionDecl, depth: u32) -> crate::alias::Access {
        let mut acc = crate::alias::Access::default();
        acc.stmts(&a.body);
        if depth < 8 {
            let mut calls = Vec::new();
            called_names(&a.body, &mut calls);
            for n in calls {
                if let Some(Binding::Action(q)) = sc.get(&n) {
                    if let Some(b) = self.find_action(sc, q) {
                        let inner = self.action_access(sc, &b, depth + 1);
                        acc.reads.extend(inner.reads);
                        acc.writes.extend(inner.writes);
                    }
                }
            }
        }
        let mut own: Vec<String> = a.params.iter().map(|p| p.name.clone()).collect();
        crate::alias::declared(&a.body, &mut own);
        acc.without_roots(&own)
    }
}

/// Names called as functions in `stmts` (actions, extern functions).
fn called_names(stmts: &[Stmt], out: &mut Vec<String>) {
    for s in stmts {
        match s {
            Stmt::Call(Expr::Call { func, .. }, _) => {
                if let Expr::Name(n, _) = &**func {
                    out.push(n.clone());
                }
            }
            Stmt::If(_, a, b, _) => {
                called_names(a, out);
                called_names(b, out);
            }
            Stmt::Block(b) => called_names(b, out),
            _ => {}
        }
    }
}

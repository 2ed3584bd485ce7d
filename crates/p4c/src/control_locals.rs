//! A control's variables, as p4c's front end treats them: their initialisers run at the start
//! of `apply`, in declaration order (so a function called in one is inlined like any other
//! call), and a tuple variable whose elements are only used by constant index (`t[0]`) is one
//! variable per element (`t_0`, `t_1`, ...).

use crate::ast::*;
use std::cell::Cell;

pub fn rewrite(c: &mut ControlDecl) {
    split_tuples(c);
    let mut inits = Vec::new();
    for l in &mut c.locals {
        if let Local::Var {
            name, init, loc, ..
        } = l
        {
            if let Some(e) = init.take() {
                inits.push(Stmt::Assign(Expr::Name(name.clone(), *loc), e, *loc));
            }
        }
    }
    inits.append(&mut c.apply);
    c.apply = inits;
}

fn split_tuples(c: &mut ControlDecl) {
    let tuples: Vec<(String, usize)> = c
        .locals
        .iter()
        .filter_map(|l| match l {
            Local::Var {
                ty: Type::Tuple(elems),
                name,
                init,
                ..
            } if matches!(init, None | Some(Expr::List(..)))
                && init
                    .as_ref()
                    .is_none_or(|i| matches!(i, Expr::List(xs, _) if xs.len() == elems.len())) =>
            {
                Some((name.clone(), elems.len()))
            }
            _ => None,
        })
        .filter(|(n, k)| only_indexed(c, n, *k))
        .collect();
    if tuples.is_empty() {
        return;
    }
    let mut locals = Vec::with_capacity(c.locals.len());
    for l in std::mem::take(&mut c.locals) {
        match l {
            Local::Var {
                ty: Type::Tuple(elems),
                name,
                init,
                loc,
            } if tuples.iter().any(|(t, _)| *t == name) => {
                let mut parts = match init {
                    Some(Expr::List(xs, _)) => xs.into_iter().map(Some).collect(),
                    _ => vec![None; elems.len()],
                };
                for (k, ty) in elems.into_iter().enumerate() {
                    locals.push(Local::Var {
                        ty,
                        name: format!("{name}_{k}"),
                        init: parts.get_mut(k).and_then(Option::take),
                        loc,
                    });
                }
            }
            other => locals.push(other),
        }
    }
    c.locals = locals;
    let element = |e: Expr| match &e {
        Expr::Index(b, i, loc) => match (&**b, &**i) {
            (Expr::Name(t, _), Expr::Int { value, .. }) if tuples.iter().any(|(n, _)| n == t) => {
                Expr::Name(format!("{t}_{value}"), *loc)
            }
            _ => e,
        },
        _ => e,
    };
    for_each_body(c, &|b| crate::ast_map::stmts(b, &element));
}

/// Whether every use of `t` in `c` is `t[k]` with a constant k below `n`.
fn only_indexed(c: &ControlDecl, t: &str, n: usize) -> bool {
    let (names, indexed) = (Cell::new(0usize), Cell::new(0usize));
    let count = |e: Expr| {
        match &e {
            Expr::Name(x, _) if x == t => names.set(names.get() + 1),
            Expr::Index(b, i, _) => {
                if let (Expr::Name(x, _), Expr::Int { value, .. }) = (&**b, &**i) {
                    if x == t && *value < n as u128 {
                        indexed.set(indexed.get() + 1);
                    }
                }
            }
            _ => {}
        }
        e
    };
    let mut copy = c.clone();
    for_each_body(&mut copy, &|b| crate::ast_map::stmts(b, &count));
    for l in &copy.locals {
        if let Local::Var { init: Some(e), .. } = l {
            crate::ast_map::expr(e.clone(), &count);
        }
    }
    names.get() == indexed.get()
}

fn for_each_body(c: &mut ControlDecl, f: &dyn Fn(Vec<Stmt>) -> Vec<Stmt>) {
    for l in &mut c.locals {
        if let Local::Action(a) = l {
            a.body = f(std::mem::take(&mut a.body));
        }
    }
    c.apply = f(std::mem::take(&mut c.apply));
}

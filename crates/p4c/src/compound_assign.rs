//! `x op= e` as `x = x op e`, with the place `x` computed once: an index that calls a function
//! (`a[f(n)].x |= e`) is evaluated first into a variable, as p4c's front end does, so the call
//! runs once and both sides name the same element.

use crate::ast::*;
use crate::ast_map::walk;
use crate::diag::{fail, Loc, Res};

/// The statement for `lhs op= rhs` (`loc`: the statement, `oloc`: the operator).
pub fn compound_assign(lhs: Expr, op: &'static str, rhs: Expr, loc: Loc, oloc: Loc) -> Res<Stmt> {
    let mut temps = Vec::new();
    let lhs = if has_call(&lhs) {
        index_once(lhs, oloc, &mut temps)
    } else {
        lhs
    };
    if has_call(&lhs) {
        return fail(
            oloc,
            format!(
                "not supported: {op}= on a place computed by a call (it would be computed twice)"
            ),
        );
    }
    let value = Expr::Binary(op, Box::new(lhs.clone()), Box::new(rhs), oloc);
    let assign = Stmt::Assign(lhs, value, loc);
    if temps.is_empty() {
        return Ok(assign);
    }
    temps.push(assign);
    Ok(Stmt::Block(temps))
}

fn has_call(e: &Expr) -> bool {
    let mut calls = false;
    walk(e, &mut |x| calls |= matches!(x, Expr::Call { .. }));
    calls
}

/// `e` with every index that calls a function replaced by a variable declared (in `temps`, in
/// evaluation order: the base before its index) with the index's value.
fn index_once(e: Expr, oloc: Loc, temps: &mut Vec<Stmt>) -> Expr {
    match e {
        Expr::Index(base, index, l) => {
            let base = index_once(*base, oloc, temps);
            let index = if has_call(&index) {
                let name = format!("opassign_index_{}_{}_{}", oloc.line, oloc.col, temps.len());
                let at = index.start();
                temps.push(Stmt::Var {
                    ty: Type::Infer,
                    name: name.clone(),
                    init: Some(*index),
                    loc: at,
                });
                Expr::Name(name, at)
            } else {
                *index
            };
            Expr::Index(Box::new(base), Box::new(index), l)
        }
        Expr::Member(base, m, l) => Expr::Member(Box::new(index_once(*base, oloc, temps)), m, l),
        Expr::Slice(base, hi, lo, l) => {
            Expr::Slice(Box::new(index_once(*base, oloc, temps)), hi, lo, l)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(n: &str) -> Expr {
        Expr::Name(n.into(), Loc::default())
    }

    fn calls(stmts: &[Stmt]) -> usize {
        let mut n = 0;
        let mut count =
            |e: &Expr| walk(e, &mut |x| n += usize::from(matches!(x, Expr::Call { .. })));
        for s in stmts {
            match s {
                Stmt::Var { init: Some(e), .. } => count(e),
                Stmt::Assign(l, r, _) => {
                    count(l);
                    count(r);
                }
                _ => {}
            }
        }
        n
    }

    #[test]
    fn an_index_that_calls_a_function_is_computed_once() {
        // a[f(n)].x |= v
        let at = Loc::default();
        let call = Expr::Call {
            func: Box::new(name("f")),
            type_args: Vec::new(),
            args: vec![name("n")],
            loc: at,
        };
        let place = Expr::Index(Box::new(name("a")), Box::new(call), at);
        let lhs = Expr::Member(Box::new(place), "x".into(), at);
        let Stmt::Block(b) = compound_assign(lhs, "|", name("v"), at, at).unwrap() else {
            panic!("expected a block");
        };
        assert_eq!(b.len(), 2);
        assert_eq!(calls(&b), 1, "{b:?}");
        let (Stmt::Var { name: tmp, .. }, Stmt::Assign(l, r, _)) = (&b[0], &b[1]) else {
            panic!("expected a variable and an assignment: {b:?}");
        };
        let index_of = |e: &Expr| match e {
            Expr::Member(p, _, _) => match &**p {
                Expr::Index(_, i, _) => i.path(),
                _ => None,
            },
            _ => None,
        };
        let Expr::Binary("|", read, _, _) = r else {
            panic!("expected |: {r:?}");
        };
        assert_eq!(index_of(l).as_deref(), Some(tmp.as_str()));
        assert_eq!(index_of(read).as_deref(), Some(tmp.as_str()));
    }

    #[test]
    fn a_place_without_calls_is_assigned_directly() {
        let at = Loc::default();
        let s = compound_assign(name("x"), "+", name("v"), at, at).unwrap();
        assert!(matches!(s, Stmt::Assign(..)), "{s:?}");
    }
}

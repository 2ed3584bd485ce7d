//! Rewriting every expression of statements, bottom-up (the children of an expression before
//! the expression), for the front-end rewrites; and visiting every expression inside one (`walk`).

use crate::ast::*;

pub fn stmts(body: Vec<Stmt>, f: &dyn Fn(Expr) -> Expr) -> Vec<Stmt> {
    body.into_iter().map(|s| stmt(s, f)).collect()
}

pub fn stmt(s: Stmt, f: &dyn Fn(Expr) -> Expr) -> Stmt {
    match s {
        Stmt::Assign(l, r, loc) => Stmt::Assign(expr(l, f), expr(r, f), loc),
        Stmt::Call(e, loc) => Stmt::Call(expr(e, f), loc),
        Stmt::If(c, t, e, loc) => Stmt::If(expr(c, f), stmts(t, f), stmts(e, f), loc),
        Stmt::Block(b) => Stmt::Block(stmts(b, f)),
        Stmt::Switch(e, cases, loc) => Stmt::Switch(
            expr(e, f),
            cases
                .into_iter()
                .map(|mut c| {
                    c.body = c.body.map(|b| stmts(b, f));
                    c
                })
                .collect(),
            loc,
        ),
        Stmt::Var {
            ty,
            name,
            init,
            loc,
        } => Stmt::Var {
            ty,
            name,
            init: init.map(|e| expr(e, f)),
            loc,
        },
        Stmt::ReturnValue(e, loc) => Stmt::ReturnValue(expr(e, f), loc),
        Stmt::For(l) => Stmt::For(Box::new(ForStmt {
            init: stmts(l.init, f),
            cond: l.cond.map(|c| expr(c, f)),
            step: stmts(l.step, f),
            body: stmts(l.body, f),
            loc: l.loc,
        })),
        other => other,
    }
}

pub fn expr(e: Expr, f: &dyn Fn(Expr) -> Expr) -> Expr {
    let b = |x: Box<Expr>| Box::new(expr(*x, f));
    let e = match e {
        Expr::Member(x, m, l) => Expr::Member(b(x), m, l),
        Expr::Index(x, i, l) => Expr::Index(b(x), b(i), l),
        Expr::Slice(x, h, lo, l) => Expr::Slice(b(x), b(h), b(lo), l),
        Expr::Call {
            func,
            type_args,
            args,
            loc,
        } => Expr::Call {
            func: b(func),
            type_args,
            args: args.into_iter().map(|a| expr(a, f)).collect(),
            loc,
        },
        Expr::Unary(o, x, l) => Expr::Unary(o, b(x), l),
        Expr::Binary(o, x, y, l) => Expr::Binary(o, b(x), b(y), l),
        Expr::Cast(t, x, l) => Expr::Cast(t, b(x), l),
        Expr::Mux(c, x, y, l) => Expr::Mux(b(c), b(x), b(y), l),
        Expr::List(xs, l) => Expr::List(xs.into_iter().map(|x| expr(x, f)).collect(), l),
        Expr::Mask(x, y, l) => Expr::Mask(b(x), b(y), l),
        Expr::Range(x, y, l) => Expr::Range(b(x), b(y), l),
        other => other,
    };
    f(e)
}

/// Calls `f` on `e` and every expression inside it.
pub fn walk(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match e {
        Expr::Member(x, _, _) | Expr::Unary(_, x, _) | Expr::Cast(_, x, _) => walk(x, f),
        Expr::Index(x, y, _)
        | Expr::Binary(_, x, y, _)
        | Expr::Mask(x, y, _)
        | Expr::Range(x, y, _) => {
            walk(x, f);
            walk(y, f);
        }
        Expr::Slice(x, y, z, _) | Expr::Mux(x, y, z, _) => {
            walk(x, f);
            walk(y, f);
            walk(z, f);
        }
        Expr::Call { func, args, .. } => {
            walk(func, f);
            for a in args {
                walk(a, f);
            }
        }
        Expr::List(xs, _) => {
            for x in xs {
                walk(x, f);
            }
        }
        _ => {}
    }
}

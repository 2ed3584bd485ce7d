//! Returns anywhere in an inlined function body, as p4c's front end removes them: a `returned`
//! flag, set where the function returns, guards everything that could run after that point.
//! Used when the returns cannot simply be moved to the ends of the body's paths.

use crate::ast::*;
use crate::diag::Loc;

/// `body` with each `return e` turned into `ret = e; flag = true;` and the statements that
/// follow a statement that may return wrapped in `if (!flag) { ... }`. The caller declares
/// `flag` (false) and `ret` before the body.
pub fn guard_returns(body: Vec<Stmt>, ret: &str, flag: &str, loc: Loc) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(body.len());
    let mut it = body.into_iter();
    while let Some(s) = it.next() {
        if !may_return(&s) {
            out.push(s);
            continue;
        }
        let always = always_returns(&s);
        out.push(guard_stmt(s, ret, flag, loc));
        let rest: Vec<Stmt> = it.collect();
        // after a statement that returns on every path, the rest never runs
        if !rest.is_empty() && !always {
            let not_returned = Expr::Unary("!", Box::new(Expr::Name(flag.into(), loc)), loc);
            out.push(Stmt::If(
                not_returned,
                guard_returns(rest, ret, flag, loc),
                Vec::new(),
                loc,
            ));
        }
        break;
    }
    out
}

fn guard_stmt(s: Stmt, ret: &str, flag: &str, loc: Loc) -> Stmt {
    let set_flag = Stmt::Assign(Expr::Name(flag.into(), loc), Expr::Bool(true, loc), loc);
    match s {
        Stmt::Return(_) => set_flag,
        Stmt::ReturnValue(e, l) => Stmt::Block(vec![
            Stmt::Assign(Expr::Name(ret.into(), loc), e, l),
            set_flag,
        ]),
        Stmt::If(c, a, b, l) => Stmt::If(
            c,
            guard_returns(a, ret, flag, loc),
            guard_returns(b, ret, flag, loc),
            l,
        ),
        Stmt::Block(b) => Stmt::Block(guard_returns(b, ret, flag, loc)),
        Stmt::Switch(e, cases, l) => Stmt::Switch(
            e,
            cases
                .into_iter()
                .map(|c| SwitchCase {
                    body: c.body.map(|b| guard_returns(b, ret, flag, loc)),
                    ..c
                })
                .collect(),
            l,
        ),
        other => other,
    }
}

/// Whether `s` contains a return.
fn may_return(s: &Stmt) -> bool {
    match s {
        Stmt::Return(_) | Stmt::ReturnValue(..) => true,
        Stmt::If(_, a, b, _) => a.iter().any(may_return) || b.iter().any(may_return),
        Stmt::Block(b) => b.iter().any(may_return),
        Stmt::Switch(_, cases, _) => cases
            .iter()
            .any(|c| c.body.as_deref().is_some_and(|b| b.iter().any(may_return))),
        _ => false,
    }
}

/// Whether every path through `s` returns.
fn always_returns(s: &Stmt) -> bool {
    let all = |b: &[Stmt]| b.iter().any(always_returns);
    match s {
        Stmt::Return(_) | Stmt::ReturnValue(..) => true,
        Stmt::If(_, a, b, _) => all(a) && all(b),
        Stmt::Block(b) => all(b),
        _ => false,
    }
}

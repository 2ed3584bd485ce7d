//! `if` in parser states, as p4c's midend removes them: bmv2 parser states have no branches, so
//! a state is split at its first `if` into the statements before it ending in a `select` on the
//! condition, a state per branch, and a state for the statements after it (with the original
//! transition). The new states are named `<state>_if<N>_true`, `_false` and `_join`. Blocks
//! (`{ ... }`, also those of inlined functions) are opened first, so an `if` inside one is
//! split the same way.

use crate::ast::*;
use crate::diag::Loc;

pub fn split_ifs(states: &[State]) -> Vec<State> {
    let mut out = Vec::new();
    let mut n = 0;
    let mut work: Vec<State> = states.to_vec();
    work.reverse();
    while let Some(mut s) = work.pop() {
        s.body = flatten_blocks(std::mem::take(&mut s.body));
        let Some(k) = s.body.iter().position(|st| matches!(st, Stmt::If(..))) else {
            out.push(s);
            continue;
        };
        let Stmt::If(cond, then, els, loc) = s.body[k].clone() else {
            continue;
        };
        let base = format!("{}_if{n}", s.name);
        n += 1;
        let (t, f, j) = (
            format!("{base}_true"),
            format!("{base}_false"),
            format!("{base}_join"),
        );
        let bit = |v: u128| Expr::Int {
            value: v,
            width: Some((false, 1)),
            loc,
        };
        let head = State {
            name: s.name.clone(),
            body: s.body[..k].to_vec(),
            transition: Transition::Select {
                keys: vec![Expr::Mux(
                    Box::new(cond),
                    Box::new(bit(1)),
                    Box::new(bit(0)),
                    loc,
                )],
                cases: vec![case(bit(1), &t, loc), case(Expr::Default(loc), &f, loc)],
                loc,
            },
            loc: s.loc,
        };
        let branch = |name: &str, body: Vec<Stmt>| State {
            name: name.to_string(),
            body,
            transition: Transition::Goto(j.clone(), loc),
            loc,
        };
        let join = State {
            name: j.clone(),
            body: s.body[k + 1..].to_vec(),
            transition: s.transition.clone(),
            loc: s.loc,
        };
        // the head is done; the others may hold more ifs (popped in this order)
        out.push(head);
        work.push(join);
        work.push(branch(&f, els));
        work.push(branch(&t, then));
    }
    out
}

fn case(v: Expr, next: &str, loc: Loc) -> SelectCase {
    SelectCase {
        values: vec![v],
        next: next.to_string(),
        loc,
    }
}

fn flatten_blocks(stmts: Vec<Stmt>) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(stmts.len());
    for s in stmts {
        match s {
            Stmt::Block(b) => out.extend(flatten_blocks(b)),
            other => out.push(other),
        }
    }
    out
}

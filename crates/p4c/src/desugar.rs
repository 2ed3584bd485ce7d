//! Small rewrites p4c's front end makes before anything is lowered, on the syntax tree:
//! - `x = x;` (the same field, variable or header on both sides) is dropped: it changes nothing
//!   (and `sm = sm` on a whole struct would otherwise need a struct copy);
//! - a slice of a slice with constant bounds, `x[7:4][3:0]`, becomes one slice of `x`
//!   (read or written);
//! - `pkt.extract<H>(_)` extracts into a fresh header variable of the parser;
//! - a lookahead whose value is unused, `pkt.lookahead<T>();`, reads into a fresh variable of
//!   T's width, so a packet too short for it still fails the parser with PacketTooShort;
//! - `if (true)`/`if (false)` and `true ? a : b` keep only the branch taken, so tables and
//!   actions reached only from the other one are not in the program (as p4c's P4Info leaves them out).

use crate::ast::*;
use crate::diag::Loc;
use std::collections::HashMap;

pub fn program(decls: Vec<Decl>) -> Vec<Decl> {
    let types = TypeTable::new(&decls);
    decls
        .into_iter()
        .map(|d| match d {
            Decl::Parser(mut p) => {
                let mut fresh = 0;
                let mut locals = Vec::new();
                for s in &mut p.states {
                    let body = std::mem::take(&mut s.body);
                    s.body = stmts(body);
                    for st in &mut s.body {
                        parser_stmt(st, &types, &mut locals, &mut fresh);
                    }
                }
                p.locals.extend(locals);
                Decl::Parser(p)
            }
            Decl::Control(mut c) => {
                crate::control_locals::rewrite(&mut c);
                for l in &mut c.locals {
                    if let Local::Action(a) = l {
                        a.body = stmts(std::mem::take(&mut a.body));
                    }
                }
                c.apply = stmts(std::mem::take(&mut c.apply));
                Decl::Control(c)
            }
            Decl::Action(mut a) => {
                a.body = stmts(std::mem::take(&mut a.body));
                Decl::Action(a)
            }
            Decl::Function(mut f) => {
                f.body = stmts(std::mem::take(&mut f.body));
                Decl::Function(f)
            }
            other => other,
        })
        .collect()
}

fn stmts(body: Vec<Stmt>) -> Vec<Stmt> {
    crate::ast_map::stmts(simplify(body), &|e| fold_mux(fold_slices(e)))
}

/// `x = x;` dropped, and an `if` on a literal `true` or `false` as the block of the branch
/// taken, at every depth.
fn simplify(body: Vec<Stmt>) -> Vec<Stmt> {
    body.into_iter()
        .map(|s| match s {
            Stmt::Assign(l, r, _) if l.path().is_some() && l.path() == r.path() => Stmt::Empty,
            Stmt::If(Expr::Bool(b, _), t, e, _) => Stmt::Block(simplify(if b { t } else { e })),
            Stmt::If(c, t, e, loc) => Stmt::If(c, simplify(t), simplify(e), loc),
            Stmt::Block(b) => Stmt::Block(simplify(b)),
            Stmt::Switch(e, cases, loc) => Stmt::Switch(
                e,
                cases
                    .into_iter()
                    .map(|mut c| {
                        c.body = c.body.map(simplify);
                        c
                    })
                    .collect(),
                loc,
            ),
            other => other,
        })
        .collect()
}

/// `true ? a : b` as `a`, `false ? a : b` as `b` (the other operand is never evaluated).
fn fold_mux(e: Expr) -> Expr {
    match e {
        Expr::Mux(c, a, b, loc) => match *c {
            Expr::Bool(true, _) => *a,
            Expr::Bool(false, _) => *b,
            c => Expr::Mux(Box::new(c), a, b, loc),
        },
        e => e,
    }
}

/// A slice of a slice (its children already folded) with constant bounds as one slice.
fn fold_slices(e: Expr) -> Expr {
    let Expr::Slice(x, h, l, loc) = e else {
        return e;
    };
    match (*x, literal(&h), literal(&l)) {
        (Expr::Slice(inner, ih, il, iloc), Some(oh), Some(ol)) => {
            match (literal(&ih), literal(&il)) {
                (Some(_), Some(base)) => Expr::Slice(
                    inner,
                    Box::new(int(base + oh, h.loc())),
                    Box::new(int(base + ol, l.loc())),
                    loc,
                ),
                _ => Expr::Slice(Box::new(Expr::Slice(inner, ih, il, iloc)), h, l, loc),
            }
        }
        (x, _, _) => Expr::Slice(Box::new(x), h, l, loc),
    }
}

fn literal(e: &Expr) -> Option<u128> {
    match e {
        Expr::Int { value, .. } => Some(*value),
        _ => None,
    }
}

/// A width written as a constant expression (`8 * 8`).
fn const_int(e: &Expr) -> Option<u128> {
    match e {
        Expr::Int { value, .. } => Some(*value),
        Expr::Binary(o, a, b, _) => {
            let (a, b) = (const_int(a)?, const_int(b)?);
            match *o {
                "+" => a.checked_add(b),
                "-" => a.checked_sub(b),
                "*" => a.checked_mul(b),
                _ => None,
            }
        }
        _ => None,
    }
}

fn int(value: u128, loc: Loc) -> Expr {
    Expr::Int {
        value,
        width: None,
        loc,
    }
}

/// The `extract(_)` and unused `lookahead` rewrites of one statement of a parser state.
fn parser_stmt(s: &mut Stmt, types: &TypeTable, locals: &mut Vec<Local>, fresh: &mut u32) {
    let Stmt::Call(
        Expr::Call {
            func,
            type_args,
            args,
            loc,
        },
        sloc,
    ) = s
    else {
        return;
    };
    let Expr::Member(_, m, _) = &**func else {
        return;
    };
    match (m.as_str(), &type_args[..], &mut args[..]) {
        ("extract", [t], [arg @ Expr::Default(_)]) => {
            let name = format!("dontcare_{fresh}");
            *fresh += 1;
            locals.push(Local::Var {
                ty: t.clone(),
                name: name.clone(),
                init: None,
                loc: *loc,
            });
            *arg = Expr::Name(name, *loc);
        }
        ("lookahead", [t], []) => {
            let Some(w) = types.width(t) else { return };
            let bits = Type::Bit(Box::new(int(u128::from(w), *loc)));
            let name = format!("lookahead_{fresh}");
            *fresh += 1;
            *s = Stmt::Var {
                ty: bits.clone(),
                name,
                init: Some(Expr::Call {
                    func: func.clone(),
                    type_args: vec![bits],
                    args: Vec::new(),
                    loc: *loc,
                }),
                loc: *sloc,
            };
        }
        _ => {}
    }
}

/// Widths of the program's fixed-width types, as far as the declarations spell them out.
struct TypeTable {
    named: HashMap<String, Decl>,
}

impl TypeTable {
    fn new(decls: &[Decl]) -> Self {
        let mut named = HashMap::new();
        for d in decls {
            match d {
                Decl::Header { name, .. }
                | Decl::Struct { name, .. }
                | Decl::Typedef { name, .. } => {
                    named.insert(name.clone(), d.clone());
                }
                _ => {}
            }
        }
        TypeTable { named }
    }

    fn width(&self, t: &Type) -> Option<u32> {
        match t {
            Type::Bit(w) => const_int(w).and_then(|w| u32::try_from(w).ok()),
            Type::Bool => Some(1),
            Type::Named(n, args, _) if args.is_empty() => match self.named.get(n.as_str())? {
                Decl::Typedef { ty, .. } => self.width(ty),
                Decl::Header { fields, .. } | Decl::Struct { fields, .. } => fields
                    .iter()
                    .map(|f| self.width(&f.ty))
                    .sum::<Option<u32>>(),
                _ => None,
            },
            _ => None,
        }
    }
}

//! Table keys that are expressions (`h.a + h.a`, a slice, a constant, a comparison), as p4c's
//! midend does: each becomes a variable of the control, computed from the expression right
//! before every apply of the table, and the table matches on the variable. The key keeps its
//! name (its `@name`, else the expression's text).

use crate::ast::*;

pub fn program(decls: Vec<Decl>) -> Vec<Decl> {
    let unions = union_fields(&decls);
    decls
        .into_iter()
        .map(|d| match d {
            Decl::Control(c) => Decl::Control(Box::new(control(*c, &unions))),
            other => other,
        })
        .collect()
}

/// Names of struct fields declared with a header union type: `u.isValid()` on one is no
/// field to match on (bmv2 has no `$valid$` for a union), so it becomes a variable.
fn union_fields(decls: &[Decl]) -> Vec<String> {
    let unions: Vec<&str> = decls
        .iter()
        .filter_map(|d| match d {
            Decl::HeaderUnion { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for d in decls {
        if let Decl::Struct { fields, .. } = d {
            for f in fields {
                if matches!(&f.ty, Type::Named(t, _, _) if unions.contains(&t.as_str())) {
                    out.push(f.name.clone());
                }
            }
        }
    }
    out
}

/// Whether lowering matches on `e` as it is: a field, `field & mask`, `h.isValid()`.
fn is_direct(e: &Expr, unions: &[String]) -> bool {
    let path = |x: &Expr| x.path().is_some();
    let union = |x: &Expr| matches!(x, Expr::Member(_, n, _) if unions.contains(n));
    match e {
        _ if path(e) => true,
        Expr::Call { func, args, .. } => {
            args.is_empty()
                && matches!(&**func, Expr::Member(b, m, _) if m == "isValid" && path(b) && !union(b))
        }
        Expr::Binary("&", a, m, _) => {
            let field = path(a) || matches!(&**a, Expr::Cast(_, x, _) if path(x));
            field && matches!(&**m, Expr::Int { .. } | Expr::Name(..))
        }
        _ => false,
    }
}

fn control(mut c: ControlDecl, unions: &[String]) -> ControlDecl {
    // table -> (variable, expression) per computed key
    let mut temps: Vec<(String, Vec<(String, Expr)>)> = Vec::new();
    for l in &mut c.locals {
        let Local::Table(t) = l else { continue };
        let mut vars = Vec::new();
        for (i, k) in t.keys.iter_mut().enumerate() {
            if k.match_kind == "selector" || is_direct(&k.expr, unions) {
                continue;
            }
            let var = format!("{}_key_{i}", t.name);
            if crate::ast::annotation(&k.annotations, "name").is_none() {
                k.annotations.push(Annotation {
                    name: "name".into(),
                    body: union_valid_name(&k.expr)
                        .or_else(|| text(&k.expr))
                        .unwrap_or_else(|| var.clone()),
                    loc: k.loc,
                });
            }
            let loc = k.expr.start();
            let e = std::mem::replace(&mut k.expr, Expr::Name(var.clone(), loc));
            vars.push((var, e));
        }
        if !vars.is_empty() {
            temps.push((t.name.clone(), vars));
        }
    }
    if temps.is_empty() {
        return c;
    }
    let mut declared = Vec::new();
    c.apply = stmts(&c.apply, &temps, &mut declared);
    c
}

fn stmts(
    ss: &[Stmt],
    temps: &[(String, Vec<(String, Expr)>)],
    declared: &mut Vec<String>,
) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(ss.len());
    for s in ss {
        let own = match s {
            Stmt::Call(e, _) | Stmt::If(e, _, _, _) | Stmt::Switch(e, _, _) => Some(e),
            _ => None,
        };
        if let Some(e) = own {
            for (t, vars) in temps {
                if !applies(e, t) {
                    continue;
                }
                for (v, x) in vars {
                    let loc = x.start();
                    if declared.contains(v) {
                        out.push(Stmt::Assign(Expr::Name(v.clone(), loc), x.clone(), loc));
                    } else {
                        declared.push(v.clone());
                        out.push(Stmt::Var {
                            ty: Type::Infer,
                            name: v.clone(),
                            init: Some(x.clone()),
                            loc,
                        });
                    }
                }
            }
        }
        out.push(match s {
            Stmt::If(e, a, b, l) => Stmt::If(
                e.clone(),
                stmts(a, temps, declared),
                stmts(b, temps, declared),
                *l,
            ),
            Stmt::Block(b) => Stmt::Block(stmts(b, temps, declared)),
            Stmt::Switch(e, cases, l) => Stmt::Switch(
                e.clone(),
                cases
                    .iter()
                    .map(|k| SwitchCase {
                        body: k.body.as_ref().map(|b| stmts(b, temps, declared)),
                        ..k.clone()
                    })
                    .collect(),
                *l,
            ),
            other => other.clone(),
        });
    }
    out
}

/// The key's name as p4c writes it when it has no `@name`: a field or a slice of one.
fn text(e: &Expr) -> Option<String> {
    match e {
        Expr::Slice(x, h, l, _) => match (&**h, &**l) {
            (Expr::Int { value: h, .. }, Expr::Int { value: l, .. }) => {
                Some(format!("{}[{h}:{l}]", x.path()?))
            }
            _ => None,
        },
        _ => e.path(),
    }
}

/// Whether `e` contains `t.apply()`.
fn applies(e: &Expr, t: &str) -> bool {
    let mut found = false;
    crate::ast_map::walk(e, &mut |x| {
        if let Expr::Call { func, .. } = x {
            if let Expr::Member(b, m, _) = &**func {
                found |= m == "apply" && matches!(&**b, Expr::Name(n, _) if n == t);
            }
        }
    });
    found
}

/// p4c names a key on `u.isValid()` (a union) `u.$valid$`.
fn union_valid_name(e: &Expr) -> Option<String> {
    match e {
        Expr::Call { func, args, .. } if args.is_empty() => match &**func {
            Expr::Member(b, m, _) if m == "isValid" => Some(format!("{}.$valid$", b.path()?)),
            _ => None,
        },
        _ => None,
    }
}

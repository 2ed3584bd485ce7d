//! Parsers instantiated inside parsers (`Sub() subp; ... subp.apply(pkt, hdr, x);`), inlined
//! before lowering as p4c's frontend does. The state that applies the sub-parser ends there
//! (the statements before the call stay in it) and goes to the sub-parser's start state; the
//! sub-parser's states are copied in with the instance's name as prefix (`subp_start`), its
//! `accept` becomes a new state holding the rest of the calling state (its statements after the
//! call and its transition), and its `reject` stays `reject`. Parameters stand for the call's
//! arguments (a field, a variable or the packet); an `in` parameter given any other
//! expression is copied into a variable at the call. The sub-parser's variables join the
//! caller's, renamed `subp_x`, and each apply gets its own copy of the states.

use crate::ast::*;
use crate::diag::{fail, Loc, Res};
use crate::subst::Subst;
use std::collections::HashMap;

/// Whether a parser of the program instantiates another parser.
pub fn needed(decls: &[Decl]) -> bool {
    let parsers: Vec<&str> = decls
        .iter()
        .filter_map(|d| match d {
            Decl::Parser(p) => Some(p.name.as_str()),
            _ => None,
        })
        .collect();
    decls.iter().any(|d| match d {
        Decl::Parser(p) => p
            .locals
            .iter()
            .any(|l| sub_parser_type(l, &parsers).is_some()),
        _ => false,
    })
}

fn sub_parser_type<'a>(l: &'a Local, parsers: &[&str]) -> Option<&'a str> {
    match l {
        Local::Instance(Instance {
            ty: Type::Named(t, _, _),
            ..
        }) if parsers.contains(&t.as_str()) => Some(t),
        _ => None,
    }
}

/// Every parser of `decls` with its sub-parser instances inlined (recursively).
pub fn program(decls: Vec<Decl>) -> Res<Vec<Decl>> {
    let parsers: HashMap<String, ParserDecl> = decls
        .iter()
        .filter_map(|d| match d {
            Decl::Parser(p) => Some((p.name.clone(), (**p).clone())),
            _ => None,
        })
        .collect();
    decls
        .into_iter()
        .map(|d| match d {
            Decl::Parser(p) => Ok(Decl::Parser(Box::new(flatten(
                &p.name,
                &parsers,
                &mut Vec::new(),
            )?))),
            other => Ok(other),
        })
        .collect()
}

fn flatten(
    name: &str,
    parsers: &HashMap<String, ParserDecl>,
    active: &mut Vec<String>,
) -> Res<ParserDecl> {
    let mut p = parsers[name].clone();
    active.push(name.to_string());
    let names: Vec<&str> = parsers.keys().map(String::as_str).collect();
    let mut locals = Vec::with_capacity(p.locals.len());
    let mut subs = Vec::new();
    for l in std::mem::take(&mut p.locals) {
        let Some(t) = sub_parser_type(&l, &names) else {
            locals.push(l);
            continue;
        };
        let Local::Instance(inst) = &l else {
            unreachable!()
        };
        if active.iter().any(|a| a == t) {
            return fail(inst.loc, format!("parser '{t}' instantiates itself"));
        }
        if !inst.args.is_empty() {
            return fail(inst.loc, format!("parser '{t}' takes no constructor arguments here: constructor parameters are not supported"));
        }
        let callee = flatten(t, parsers, active)?;
        subs.push((inst.clone(), callee));
    }
    p.locals = locals;
    for (inst, callee) in subs {
        inline_instance(&mut p, &inst, &callee)?;
    }
    active.pop();
    Ok(p)
}

/// The arguments and place of `inst.apply(...)` when `s` is that call.
fn apply_call<'a>(s: &'a Stmt, inst: &str) -> Option<(&'a [Expr], Loc)> {
    let Stmt::Call(
        Expr::Call {
            func, args, loc, ..
        },
        _,
    ) = s
    else {
        return None;
    };
    match &**func {
        Expr::Member(b, m, _) if m == "apply" && matches!(&**b, Expr::Name(n, _) if n == inst) => {
            Some((args, *loc))
        }
        _ => None,
    }
}

fn inline_instance(p: &mut ParserDecl, inst: &Instance, callee: &ParserDecl) -> Res<()> {
    // the callee's variables (and other locals) become the caller's, once per instance
    let internal = |n: &str| format!("{}_{n}", inst.name);
    let mut base = Subst::default();
    let mut inits = Vec::new();
    for l in &callee.locals {
        match l {
            Local::Var {
                ty,
                name,
                init,
                loc,
            } => {
                base.add(name, Expr::Name(internal(name), *loc));
                if let Some(e) = init {
                    inits.push((name.clone(), e.clone(), *loc));
                }
                p.locals.push(Local::Var {
                    ty: ty.clone(),
                    name: internal(name),
                    init: None,
                    loc: *loc,
                });
            }
            Local::Const { name, loc, .. } | Local::Instance(Instance { name, loc, .. }) => {
                base.add(name, Expr::Name(internal(name), *loc));
            }
            Local::Action(a) => base.add(&a.name, Expr::Name(internal(&a.name), a.loc)),
            Local::Table(t) => base.add(&t.name, Expr::Name(internal(&t.name), t.loc)),
        }
    }
    for l in &callee.locals {
        match l {
            Local::Var { .. } => {}
            Local::Const {
                ty,
                name,
                value,
                loc,
            } => p.locals.push(Local::Const {
                ty: ty.clone(),
                name: internal(name),
                value: base.expr(value),
                loc: *loc,
            }),
            Local::Instance(i) => {
                let mut i2 = base.instance(i);
                i2.name = internal(&i.name);
                p.locals.push(Local::Instance(i2));
            }
            Local::Action(_) | Local::Table(_) => {
                return fail(
                    inst.loc,
                    format!(
                        "parser '{}' declares actions or tables, which a parser cannot apply",
                        callee.name
                    ),
                )
            }
        }
    }
    let inits: Vec<Stmt> = inits
        .into_iter()
        .map(|(n, e, loc)| Stmt::Assign(Expr::Name(internal(&n), loc), base.expr(&e), loc))
        .collect();
    let mut site = 0;
    let mut k = 0;
    while k < p.states.len() {
        let Some(at) = p.states[k]
            .body
            .iter()
            .position(|s| apply_call(s, &inst.name).is_some())
        else {
            k += 1;
            continue;
        };
        let (args, loc) = apply_call(&p.states[k].body[at], &inst.name)
            .map(|(a, l)| (a.to_vec(), l))
            .unwrap_or_default();
        if args.len() != callee.params.len() {
            return fail(
                loc,
                format!(
                    "parser '{}' takes {} argument(s) in apply, {} given",
                    callee.name,
                    callee.params.len(),
                    args.len()
                ),
            );
        }
        let prefix = if site == 0 {
            inst.name.clone()
        } else {
            format!("{}_{site}", inst.name)
        };
        site += 1;
        let state = &mut p.states[k];
        let after_name = format!("{}_after_{prefix}", state.name);
        let rest: Vec<Stmt> = state.body.split_off(at + 1);
        state.body.pop();
        // the call: variables initialised, `in` arguments copied, then the sub-parser's start
        let mut sub = base.clone();
        state.body.extend(inits.iter().cloned());
        for (prm, a) in callee.params.iter().zip(&args) {
            if a.path().is_some() {
                sub.add(&prm.name, a.clone());
                continue;
            }
            if prm.dir != Dir::In && prm.dir != Dir::None {
                return fail(a.start(), format!("argument for '{}' of parser '{}' must be a field or variable (it is out/inout)", prm.name, callee.name));
            }
            let v = format!("{prefix}_{}", prm.name);
            p_local_var(&mut p.locals, &v, &prm.ty, prm.loc);
            let state = &mut p.states[k];
            state
                .body
                .push(Stmt::Assign(Expr::Name(v.clone(), loc), a.clone(), loc));
            sub.add(&prm.name, Expr::Name(v, loc));
        }
        let state = &mut p.states[k];
        let transition = std::mem::replace(
            &mut state.transition,
            Transition::Goto(format!("{prefix}_start"), loc),
        );
        let after = State {
            name: after_name.clone(),
            body: rest,
            transition,
            loc,
        };
        let rename = |n: &str| -> String {
            match n {
                "accept" => after_name.clone(),
                "reject" => "reject".to_string(),
                other => format!("{prefix}_{other}"),
            }
        };
        let mut copies: Vec<State> = callee
            .states
            .iter()
            .map(|s| State {
                name: format!("{prefix}_{}", s.name),
                body: sub.stmts(&s.body),
                transition: match &s.transition {
                    Transition::Goto(n, l) => Transition::Goto(rename(n), *l),
                    Transition::Select { keys, cases, loc } => Transition::Select {
                        keys: keys.iter().map(|e| sub.expr(e)).collect(),
                        cases: cases
                            .iter()
                            .map(|c| SelectCase {
                                values: c.values.iter().map(|e| sub.expr(e)).collect(),
                                next: rename(&c.next),
                                loc: c.loc,
                            })
                            .collect(),
                        loc: *loc,
                    },
                },
                loc: s.loc,
            })
            .collect();
        copies.push(after);
        // the continuation is looked at next: it may apply the instance again
        p.states.extend(copies);
        k += 1;
    }
    Ok(())
}

fn p_local_var(locals: &mut Vec<Local>, name: &str, ty: &Type, loc: Loc) {
    if !locals
        .iter()
        .any(|l| matches!(l, Local::Var { name: n, .. } if n == name))
    {
        locals.push(Local::Var {
            ty: ty.clone(),
            name: name.to_string(),
            init: None,
            loc,
        });
    }
}

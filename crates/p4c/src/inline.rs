//! Inlining before lowering, as p4c's frontend does: controls instantiated inside controls
//! (`MyCtl() c; ... c.apply(hdr, meta);`) and functions. An inlined control's tables, actions
//! and extern instances join the caller's with the instance's prefix in their names
//! (`MyIngress.c.tbl`, through `@name("c.tbl")`; internally `c_tbl`), its variables become the
//! caller's (`c_x`, initialised where it is applied), its parameters stand for the apply call's
//! arguments, and its apply block replaces the call.

use crate::ast::*;
use crate::diag::{fail, Loc, Res};
use crate::inline_fn::FnInliner;
use crate::subst::Subst;
use std::collections::HashMap;

pub fn program(decls: Vec<Decl>) -> Res<Vec<Decl>> {
    let decls = if crate::inline_parser::needed(&decls) {
        crate::inline_parser::program(decls)?
    } else {
        decls
    };
    if !needs_inlining(&decls) {
        return Ok(decls);
    }
    let mut funcs = HashMap::new();
    let mut controls: HashMap<String, ControlDecl> = HashMap::new();
    let mut rest = Vec::with_capacity(decls.len());
    for d in decls {
        match d {
            Decl::Function(f) => {
                if funcs.contains_key(&f.name) {
                    return fail(
                        f.loc,
                        format!(
                            "function '{}' is declared twice (overloads are not supported)",
                            f.name
                        ),
                    );
                }
                funcs.insert(f.name.clone(), f);
            }
            Decl::Control(c) => {
                controls.insert(c.name.clone(), (*c).clone());
                rest.push(Decl::Control(c));
            }
            other => rest.push(other),
        }
    }
    let mut done: HashMap<String, ControlDecl> = HashMap::new();
    let mut fi = FnInliner::new(&funcs);
    let mut out = Vec::with_capacity(rest.len());
    for d in rest {
        out.push(match d {
            Decl::Control(c) => {
                let c = flatten(&c.name, &controls, &mut done, &mut Vec::new())?;
                Decl::Control(Box::new(control_fns(&mut fi, c)?))
            }
            Decl::Parser(mut p) => {
                for s in &mut p.states {
                    s.body = fi.stmts(&s.body)?;
                }
                Decl::Parser(p)
            }
            Decl::Action(mut a) => {
                a.body = fi.stmts(&a.body)?;
                Decl::Action(a)
            }
            other => other,
        });
    }
    Ok(out)
}

/// Whether the program declares a function or instantiates a control inside a control (most
/// programs do neither: they pass through untouched).
fn needs_inlining(decls: &[Decl]) -> bool {
    let is_control = |n: &str| {
        decls
            .iter()
            .any(|d| matches!(d, Decl::Control(c) if c.name == n))
    };
    decls.iter().any(|d| {
        match d {
        Decl::Function(_) => true,
        Decl::Control(c) => c.locals.iter().any(|l| {
            matches!(l, Local::Instance(Instance { ty: Type::Named(t, _, _), .. }) if is_control(t))
        }),
        _ => false,
    }
    })
}

fn control_fns(fi: &mut FnInliner, mut c: ControlDecl) -> Res<ControlDecl> {
    for l in &mut c.locals {
        match l {
            Local::Action(a) => a.body = fi.stmts(&a.body)?,
            Local::Table(t) => {
                for k in &t.keys {
                    if let Some((name, loc)) = fi.call_in(&k.expr) {
                        return fail(loc, format!("function '{name}' called in a table key: compute it into a variable before applying the table, and match on that"));
                    }
                }
            }
            _ => {}
        }
    }
    c.apply = fi.stmts(&c.apply)?;
    Ok(c)
}

/// `name` with every control instance inside it inlined (recursively).
fn flatten(
    name: &str,
    controls: &HashMap<String, ControlDecl>,
    done: &mut HashMap<String, ControlDecl>,
    active: &mut Vec<String>,
) -> Res<ControlDecl> {
    if let Some(c) = done.get(name) {
        return Ok(c.clone());
    }
    let c = controls[name].clone();
    active.push(name.to_string());
    let mut locals = Vec::with_capacity(c.locals.len());
    let mut apply = c.apply.clone();
    for l in c.locals {
        let Local::Instance(inst) = &l else {
            locals.push(l);
            continue;
        };
        let Type::Named(tn, _, _) = &inst.ty else {
            locals.push(l);
            continue;
        };
        if !controls.contains_key(tn) {
            locals.push(l);
            continue;
        }
        if active.contains(tn) {
            return fail(inst.loc, format!("control '{tn}' instantiates itself"));
        }
        if !inst.args.is_empty() {
            return fail(inst.loc, format!("control '{tn}' takes no constructor arguments here: constructor parameters are not supported"));
        }
        let callee = flatten(tn, controls, done, active)?;
        let (new_locals, applied) = instantiate(&callee, inst, &mut apply)?;
        if !applied {
            // never applied: p4c drops it too, with nothing to name
            continue;
        }
        locals.extend(new_locals);
    }
    active.pop();
    let out = ControlDecl { locals, apply, ..c };
    done.insert(name.to_string(), out.clone());
    Ok(out)
}

/// The callee's locals renamed for instance `inst`, and `apply` with each `inst.apply(...)`
/// replaced by the callee's body. False when the instance is never applied.
fn instantiate(
    callee: &ControlDecl,
    inst: &Instance,
    apply: &mut Vec<Stmt>,
) -> Res<(Vec<Local>, bool)> {
    let prefix = match annotation(&inst.annotations, "name") {
        Some(a) => a.body.trim_matches('"').trim_start_matches('.').to_string(),
        None => inst.name.clone(),
    };
    let internal = |n: &str| format!("{}_{n}", inst.name);
    let mut sub = Subst::default();
    let mut inits = Vec::new();
    for l in &callee.locals {
        let (n, loc) = match l {
            Local::Action(a) => (&a.name, a.loc),
            Local::Table(t) => (&t.name, t.loc),
            Local::Instance(i) => (&i.name, i.loc),
            Local::Var { name, loc, .. } | Local::Const { name, loc, .. } => (name, *loc),
        };
        sub.add(n, Expr::Name(internal(n), loc));
    }
    // the arguments of the first apply call; every other call must pass the same
    let mut sites = Vec::new();
    find_applies(apply, &inst.name, &mut sites);
    let Some((args, loc)) = sites.first().cloned() else {
        return Ok((Vec::new(), false));
    };
    if args.len() != callee.params.len() {
        return fail(
            loc,
            format!(
                "control '{}' takes {} argument(s) in apply, {} given",
                callee.name,
                callee.params.len(),
                args.len()
            ),
        );
    }
    // a parameter stands for the argument when every call passes the same field; an `in`
    // parameter given anything else is copied into a variable at each call
    let mut copied: Vec<(usize, String)> = Vec::new();
    // out / inout parameters copied back to their argument: (position, variable, copied in too)
    let mut copied_back: Vec<(usize, String, bool)> = Vec::new();
    let mut copy_vars = Vec::new();
    for (k, (p, a)) in callee.params.iter().zip(&args).enumerate() {
        let same = sites
            .iter()
            .all(|(o, _)| o.len() == args.len() && a.path().is_some() && o[k].path() == a.path());
        // another argument the body writes names the same place
        let shared = sites.iter().any(|(o, _)| {
            o.iter().enumerate().any(|(j, x)| {
                j != k
                    && matches!(
                        callee.params.get(j).map(|q| q.dir),
                        Some(Dir::Out | Dir::InOut)
                    )
                    && crate::alias::place(x).is_some_and(|px| {
                        o.get(k)
                            .and_then(crate::alias::place)
                            .is_some_and(|pk| crate::alias::overlaps(&px, &pk))
                    })
            })
        });
        if shared && matches!(p.dir, Dir::Out | Dir::InOut) {
            return fail(loc, format!("not supported: arguments for '{}' and another out/inout parameter of control '{}' naming the same place", p.name, callee.name));
        }
        if same && !shared {
            sub.add(&p.name, a.clone());
            continue;
        }
        if matches!(p.dir, Dir::Out | Dir::InOut) && sites.len() == 1 && a.path().is_none() {
            // applied once with a place that is not a plain path (a slice): the parameter is a
            // variable, copied in (inout) before the body and back out after it
            let v = internal(&p.name);
            sub.add(&p.name, Expr::Name(v.clone(), p.loc));
            copy_vars.push(Local::Var {
                ty: p.ty.clone(),
                name: v.clone(),
                init: None,
                loc: p.loc,
            });
            copied_back.push((k, v, p.dir == Dir::InOut));
            continue;
        }
        if matches!(p.dir, Dir::Out | Dir::InOut) {
            let bad = sites
                .iter()
                .find(|(o, _)| o.get(k).and_then(|e| e.path()) != a.path() || a.path().is_none())
                .map_or(loc, |(o, l)| o.get(k).map_or(*l, |e| e.start()));
            return fail(bad, format!("argument for '{}' of control '{}' ({}) must be the same field or variable at every apply of '{}'", p.name, callee.name, if p.dir == Dir::Out { "out" } else { "inout" }, inst.name));
        }
        let v = internal(&p.name);
        sub.add(&p.name, Expr::Name(v.clone(), p.loc));
        copy_vars.push(Local::Var {
            ty: p.ty.clone(),
            name: v.clone(),
            init: None,
            loc: p.loc,
        });
        copied.push((k, v));
    }
    for (o, oloc) in &sites {
        if o.len() != args.len() {
            return fail(
                *oloc,
                format!(
                    "control '{}' takes {} argument(s) in apply, {} given",
                    callee.name,
                    callee.params.len(),
                    o.len()
                ),
            );
        }
    }
    let with_name = |anns: &[Annotation], n: &str, loc: Loc| -> Vec<Annotation> {
        let mut v: Vec<Annotation> = anns.iter().filter(|a| a.name != "name").cloned().collect();
        let body = match annotation(anns, "name") {
            Some(a) if a.body.trim_matches('"').starts_with('.') => a.body.clone(),
            Some(a) => format!("{prefix}.{}", a.body.trim_matches('"')),
            None => format!("{prefix}.{n}"),
        };
        v.push(Annotation {
            name: "name".into(),
            body,
            loc,
        });
        v
    };
    let mut locals = copy_vars;
    for l in &callee.locals {
        locals.push(match l {
            Local::Action(a) => {
                let mut a2 = sub.action(a);
                a2.annotations = with_name(&a.annotations, &a.name, a.loc);
                Local::Action(a2)
            }
            Local::Table(t) => {
                let mut t2 = sub.table(t);
                t2.annotations = with_name(&t.annotations, &t.name, t.loc);
                Local::Table(t2)
            }
            Local::Instance(i) => {
                let mut i2 = sub.instance(i);
                i2.annotations = with_name(&i.annotations, &i.name, i.loc);
                Local::Instance(i2)
            }
            Local::Var {
                ty,
                name,
                init,
                loc,
            } => {
                if let Some(e) = init {
                    inits.push(Stmt::Assign(
                        Expr::Name(internal(name), *loc),
                        sub.expr(e),
                        *loc,
                    ));
                }
                Local::Var {
                    ty: sub.ty(ty),
                    name: internal(name),
                    init: None,
                    loc: *loc,
                }
            }
            Local::Const {
                ty,
                name,
                value,
                loc,
            } => Local::Const {
                ty: sub.ty(ty),
                name: internal(name),
                value: sub.expr(value),
                loc: *loc,
            },
        });
    }
    // variables declared in the callee's apply block get the prefix too
    let mut body_sub = sub.clone();
    let mut declared = Vec::new();
    apply_decls(&callee.apply, &mut declared);
    for (d, loc) in declared {
        body_sub.add(&d, Expr::Name(internal(&d), loc));
    }
    if let Some(l) = first_return(&callee.apply) {
        return fail(l, format!("return in the apply block of control '{}', which is inlined where it is applied, is not supported: use if/else", callee.name));
    }
    let mut body = inits;
    body.extend(body_sub.stmts(&callee.apply));
    let site_body = |args: &[Expr]| -> Vec<Stmt> {
        let mut b: Vec<Stmt> = copied
            .iter()
            .map(|(k, v)| (k, v))
            .chain(copied_back.iter().filter(|c| c.2).map(|(k, v, _)| (k, v)))
            .map(|(k, v)| Stmt::Assign(Expr::Name(v.clone(), loc), args[*k].clone(), loc))
            .collect();
        b.extend(body.iter().cloned());
        b.extend(
            copied_back
                .iter()
                .map(|(k, v, _)| Stmt::Assign(args[*k].clone(), Expr::Name(v.clone(), loc), loc)),
        );
        b
    };
    replace_applies(apply, &inst.name, &site_body);
    Ok((locals, true))
}

fn apply_call<'a>(s: &'a Stmt, inst: &str) -> Option<(&'a Vec<Expr>, Loc)> {
    let Stmt::Call(Expr::Call { func, args, .. }, loc) = s else {
        return None;
    };
    match &**func {
        Expr::Member(b, m, _) if m == "apply" && matches!(&**b, Expr::Name(n, _) if n == inst) => {
            Some((args, *loc))
        }
        _ => None,
    }
}

fn for_each_block(stmts: &mut [Stmt], f: &mut dyn FnMut(&mut Vec<Stmt>)) {
    for s in stmts {
        match s {
            Stmt::If(_, a, b, _) => {
                f(a);
                for_each_block(a, f);
                f(b);
                for_each_block(b, f);
            }
            Stmt::Block(b) => {
                f(b);
                for_each_block(b, f);
            }
            Stmt::Switch(_, cases, _) => {
                for c in cases {
                    if let Some(b) = &mut c.body {
                        f(b);
                        for_each_block(b, f);
                    }
                }
            }
            _ => {}
        }
    }
}

fn find_applies(stmts: &[Stmt], inst: &str, out: &mut Vec<(Vec<Expr>, Loc)>) {
    let mut all = stmts.to_vec();
    let mut visit = |b: &mut Vec<Stmt>| {
        for s in b.iter() {
            if let Some((a, l)) = apply_call(s, inst) {
                out.push((a.clone(), l));
            }
        }
    };
    visit(&mut all);
    for_each_block(&mut all, &mut visit);
}

fn replace_applies(stmts: &mut Vec<Stmt>, inst: &str, body: &dyn Fn(&[Expr]) -> Vec<Stmt>) {
    let mut rep = |b: &mut Vec<Stmt>| {
        for s in b.iter_mut() {
            if let Some((args, _)) = apply_call(s, inst) {
                *s = Stmt::Block(body(args));
            }
        }
    };
    rep(stmts);
    for_each_block(stmts, &mut rep);
}

fn apply_decls(stmts: &[Stmt], out: &mut Vec<(String, Loc)>) {
    for s in stmts {
        match s {
            Stmt::Var { name, loc, .. } | Stmt::Const { name, loc, .. } => {
                out.push((name.clone(), *loc))
            }
            Stmt::Block(b) => apply_decls(b, out),
            Stmt::If(_, a, b, _) => {
                apply_decls(a, out);
                apply_decls(b, out);
            }
            Stmt::Switch(_, cases, _) => {
                for c in cases {
                    if let Some(b) = &c.body {
                        apply_decls(b, out);
                    }
                }
            }
            _ => {}
        }
    }
}

fn first_return(stmts: &[Stmt]) -> Option<Loc> {
    let mut all = stmts.to_vec();
    let mut found = None;
    let mut visit = |b: &mut Vec<Stmt>| {
        for s in b.iter() {
            if let Stmt::Return(l) = s {
                found.get_or_insert(*l);
            }
        }
    };
    visit(&mut all);
    for_each_block(&mut all, &mut visit);
    found
}

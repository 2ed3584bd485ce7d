//! Controls with constructor parameters, and controls applied by their type name, made into the
//! plain instances `inline` inlines, as p4c's front end does:
//! - `C2(c1) c2;` where `control C2(...)(my_ctl_t c)`: a copy of C2 with `c` replaced by the
//!   argument (another instance of the enclosing control, or a constant) is instantiated
//!   instead. The enclosing control's instances are reordered so an instance passed as an
//!   argument comes after those it is passed to: it is inlined at the applies they leave behind;
//! - `E.apply(x);` where E is a control type with no instance of that name: an instance named E
//!   is declared.

use crate::ast::*;
use crate::diag::{fail, Res};
use crate::subst::Subst;
use std::collections::HashMap;

/// How deep constructor arguments may nest (a control passed to one passed to one ...).
const MAX_DEPTH: u32 = 16;

pub fn program(decls: Vec<Decl>) -> Res<Vec<Decl>> {
    let controls: HashMap<String, ControlDecl> = decls
        .iter()
        .filter_map(|d| match d {
            Decl::Control(c) => Some((c.name.clone(), (**c).clone())),
            _ => None,
        })
        .collect();
    let mut out = Vec::with_capacity(decls.len());
    for d in decls {
        match d {
            Decl::Control(c) => {
                let mut copies = Vec::new();
                let c = bind(*c, &controls, &mut copies, 0)?;
                out.extend(copies.into_iter().map(|c| Decl::Control(Box::new(c))));
                out.push(Decl::Control(Box::new(c)));
            }
            other => out.push(other),
        }
    }
    Ok(out)
}

/// `c` with its constructor-argument instances bound to specialised copies (added to
/// `copies`) and its direct applies of control types declared as instances.
fn bind(
    mut c: ControlDecl,
    controls: &HashMap<String, ControlDecl>,
    copies: &mut Vec<ControlDecl>,
    depth: u32,
) -> Res<ControlDecl> {
    declare_direct_applies(&mut c, controls);
    let mut passed: HashMap<String, Vec<String>> = HashMap::new();
    let enclosing = c.name.clone();
    for l in &mut c.locals {
        let Local::Instance(inst) = l else { continue };
        let Type::Named(tn, _, tloc) = &inst.ty else {
            continue;
        };
        let Some(callee) = controls.get(tn) else {
            continue;
        };
        if callee.ctor_params.is_empty() {
            continue;
        }
        if depth >= MAX_DEPTH {
            return fail(
                inst.loc,
                format!("constructor arguments of control '{tn}' nest too deep"),
            );
        }
        if inst.args.len() != callee.ctor_params.len() {
            return fail(
                inst.loc,
                format!(
                    "control '{tn}' takes {} constructor argument(s), {} given",
                    callee.ctor_params.len(),
                    inst.args.len()
                ),
            );
        }
        let mut sub = Subst::default();
        for (p, a) in callee.ctor_params.iter().zip(&inst.args) {
            if let Expr::Call { loc, .. } = a {
                return fail(*loc, format!("constructor argument for '{}' of control '{tn}': declare the instance first and pass its name (e.g. `C() c; {tn}(c) {};`)", p.name, inst.name));
            }
            if let Expr::Name(n, _) = a {
                passed.entry(inst.name.clone()).or_default().push(n.clone());
            }
            sub.add(&p.name, a.clone());
        }
        let copy = ControlDecl {
            name: format!("{tn}__{enclosing}_{}", inst.name),
            params: callee.params.clone(),
            ctor_params: Vec::new(),
            locals: callee.locals.iter().map(|l| local(&sub, l)).collect(),
            apply: sub.stmts(&callee.apply),
            loc: callee.loc,
        };
        let copy = bind(copy, controls, copies, depth + 1)?;
        inst.ty = Type::Named(copy.name.clone(), Vec::new(), *tloc);
        inst.args.clear();
        copies.push(copy);
    }
    order_after_users(&mut c.locals, &passed);
    Ok(c)
}

fn local(sub: &Subst, l: &Local) -> Local {
    match l {
        Local::Action(a) => Local::Action(sub.action(a)),
        Local::Table(t) => Local::Table(sub.table(t)),
        Local::Instance(i) => Local::Instance(sub.instance(i)),
        Local::Var {
            ty,
            name,
            init,
            loc,
        } => Local::Var {
            ty: sub.ty(ty),
            name: name.clone(),
            init: init.as_ref().map(|e| sub.expr(e)),
            loc: *loc,
        },
        Local::Const {
            ty,
            name,
            value,
            loc,
        } => Local::Const {
            ty: sub.ty(ty),
            name: name.clone(),
            value: sub.expr(value),
            loc: *loc,
        },
    }
}

/// Moves every instance named in `passed` (user -> the instances passed to it) after its users.
fn order_after_users(locals: &mut Vec<Local>, passed: &HashMap<String, Vec<String>>) {
    let name = |l: &Local| match l {
        Local::Instance(i) => Some(i.name.clone()),
        _ => None,
    };
    // each move puts an argument after one more of its users; a cycle stops at the bound
    for _ in 0..locals.len() * locals.len() {
        let mut moved = false;
        'scan: for i in 0..locals.len() {
            let Some(arg) = name(&locals[i]) else {
                continue;
            };
            for j in i + 1..locals.len() {
                let Some(user) = name(&locals[j]) else {
                    continue;
                };
                if passed.get(&user).is_some_and(|a| a.contains(&arg)) {
                    let l = locals.remove(i);
                    locals.insert(j, l);
                    moved = true;
                    break 'scan;
                }
            }
        }
        if !moved {
            return;
        }
    }
}

/// Declares an instance for each `T.apply(...)` in `c`'s apply block where T is a control type
/// and no local of `c` is named T.
fn declare_direct_applies(c: &mut ControlDecl, controls: &HashMap<String, ControlDecl>) {
    let mut found = Vec::new();
    direct_applies(&c.apply, &mut found);
    for (t, loc) in found {
        let declared = c.locals.iter().any(|l| match l {
            Local::Action(a) => a.name == t,
            Local::Table(x) => x.name == t,
            Local::Instance(i) => i.name == t,
            Local::Var { name, .. } | Local::Const { name, .. } => *name == t,
        });
        if declared || !controls.contains_key(&t) {
            continue;
        }
        c.locals.push(Local::Instance(Instance {
            ty: Type::Named(t.clone(), Vec::new(), loc),
            args: Vec::new(),
            name: t,
            loc,
            annotations: Vec::new(),
        }));
    }
}

fn direct_applies(stmts: &[Stmt], out: &mut Vec<(String, crate::diag::Loc)>) {
    for s in stmts {
        match s {
            Stmt::Call(Expr::Call { func, loc, .. }, _) => {
                if let Expr::Member(b, m, _) = &**func {
                    if let (Expr::Name(t, _), "apply") = (&**b, m.as_str()) {
                        if !out.iter().any(|(x, _)| x == t) {
                            out.push((t.clone(), *loc));
                        }
                    }
                }
            }
            Stmt::If(_, a, b, _) => {
                direct_applies(a, out);
                direct_applies(b, out);
            }
            Stmt::Block(b) => direct_applies(b, out),
            Stmt::Switch(_, cases, _) => {
                for c in cases {
                    if let Some(b) = &c.body {
                        direct_applies(b, out);
                    }
                }
            }
            _ => {}
        }
    }
}

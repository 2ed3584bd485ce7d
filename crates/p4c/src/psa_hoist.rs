//! PSA externs whose methods return a value (`Register.read`, `Meter.execute`, `Hash.get_hash`)
//! may be called inside any expression (`if (m.execute(i) == PSA_MeterColor_t.GREEN)`,
//! `x = r.read(1) + r.read(2)`). bmv2 has them as primitives that write a field, so each such call
//! nested in an expression is moved into a variable assigned just before its statement; a call
//! that is the whole right-hand side of an assignment is left where it is (lowered directly).
//! Only PSA programs are rewritten.

use crate::ast::*;
use std::cell::RefCell;
use std::collections::HashMap;

/// Instance name -> its extern type and type arguments.
type Instances = HashMap<String, (String, Vec<Type>)>;

pub fn program(decls: Vec<Decl>) -> Vec<Decl> {
    let is_psa = decls.iter().any(
        |d| matches!(d, Decl::Instance(i) if matches!(&i.ty, Type::Named(n, _, _) if n == "PSA_Switch")),
    );
    if !is_psa {
        return decls;
    }
    let mut globals = Instances::new();
    for d in &decls {
        if let Decl::Instance(i) = d {
            add(&mut globals, i);
        }
    }
    let n = RefCell::new(0u32);
    decls
        .into_iter()
        .map(|d| match d {
            Decl::Control(mut c) => {
                let mut insts = globals.clone();
                for l in &c.locals {
                    if let Local::Instance(i) = l {
                        add(&mut insts, i);
                    }
                }
                let h = Hoister {
                    insts: &insts,
                    n: &n,
                };
                for l in &mut c.locals {
                    if let Local::Action(a) = l {
                        a.body = h.stmts(std::mem::take(&mut a.body));
                    }
                }
                c.apply = h.stmts(std::mem::take(&mut c.apply));
                Decl::Control(c)
            }
            Decl::Parser(mut p) => {
                let mut insts = globals.clone();
                for l in &p.locals {
                    if let Local::Instance(i) = l {
                        add(&mut insts, i);
                    }
                }
                let h = Hoister {
                    insts: &insts,
                    n: &n,
                };
                for st in &mut p.states {
                    st.body = h.stmts(std::mem::take(&mut st.body));
                }
                Decl::Parser(p)
            }
            other => other,
        })
        .collect()
}

fn add(m: &mut Instances, i: &Instance) {
    if let Type::Named(t, args, _) = &i.ty {
        m.insert(i.name.clone(), (t.clone(), args.clone()));
    }
}

struct Hoister<'a> {
    insts: &'a Instances,
    n: &'a RefCell<u32>,
}

impl Hoister<'_> {
    /// The type of the value `e` returns if it is a value-returning PSA extern call.
    fn value_call(&self, e: &Expr) -> Option<Type> {
        let Expr::Call { func, .. } = e else {
            return None;
        };
        let Expr::Member(b, m, loc) = &**func else {
            return None;
        };
        let Expr::Name(inst, _) = &**b else {
            return None;
        };
        let (ty, targs) = self.insts.get(inst)?;
        match (ty.as_str(), m.as_str()) {
            ("Register", "read") | ("Hash", "get_hash") => targs.first().cloned(),
            ("Meter", "execute") => Some(Type::Named("PSA_MeterColor_t".into(), vec![], *loc)),
            ("InternetChecksum", "get" | "get_state") => Some(Type::Bit(Box::new(Expr::Int {
                value: 16,
                width: None,
                loc: *loc,
            }))),
            _ => None,
        }
    }

    fn stmts(&self, body: Vec<Stmt>) -> Vec<Stmt> {
        let mut out = Vec::with_capacity(body.len());
        for s in body {
            let pre = RefCell::new(Vec::new());
            let s = match s {
                // a direct call is lowered where it is
                Stmt::Assign(l, r, loc) if self.value_call(&r).is_some() => {
                    Stmt::Assign(l, self.args_hoisted(r, &pre), loc)
                }
                Stmt::Var {
                    ty,
                    name,
                    init: Some(r),
                    loc,
                } if self.value_call(&r).is_some() => Stmt::Var {
                    ty,
                    name,
                    init: Some(self.args_hoisted(r, &pre)),
                    loc,
                },
                Stmt::If(c, t, e, loc) => {
                    Stmt::If(self.expr(c, &pre), self.stmts(t), self.stmts(e), loc)
                }
                Stmt::Block(b) => Stmt::Block(self.stmts(b)),
                Stmt::Switch(e, cases, loc) => Stmt::Switch(
                    self.expr(e, &pre),
                    cases
                        .into_iter()
                        .map(|mut c| {
                            c.body = c.body.map(|b| self.stmts(b));
                            c
                        })
                        .collect(),
                    loc,
                ),
                Stmt::Assign(l, r, loc) => Stmt::Assign(l, self.expr(r, &pre), loc),
                Stmt::Var {
                    ty,
                    name,
                    init,
                    loc,
                } => Stmt::Var {
                    ty,
                    name,
                    init: init.map(|e| self.expr(e, &pre)),
                    loc,
                },
                Stmt::Call(e, loc) => Stmt::Call(self.args_hoisted(e, &pre), loc),
                other => other,
            };
            out.extend(pre.into_inner());
            out.push(s);
        }
        out
    }

    /// A call with value-returning calls in its arguments hoisted.
    fn args_hoisted(&self, e: Expr, pre: &RefCell<Vec<Stmt>>) -> Expr {
        match e {
            Expr::Call {
                func,
                type_args,
                args,
                loc,
            } => Expr::Call {
                func,
                type_args,
                args: args.into_iter().map(|a| self.expr(a, pre)).collect(),
                loc,
            },
            other => self.expr(other, pre),
        }
    }

    /// `e` with every value-returning call in it replaced by a variable assigned in `pre`.
    fn expr(&self, e: Expr, pre: &RefCell<Vec<Stmt>>) -> Expr {
        crate::ast_map::expr(e, &|x| match self.value_call(&x) {
            Some(ty) => {
                let loc = x.loc();
                let name = {
                    let mut n = self.n.borrow_mut();
                    *n += 1;
                    format!("psa_value_{}", *n)
                };
                let mut p = pre.borrow_mut();
                p.push(Stmt::Var {
                    ty,
                    name: name.clone(),
                    init: None,
                    loc,
                });
                p.push(Stmt::Assign(Expr::Name(name.clone(), loc), x, loc));
                Expr::Name(name, loc)
            }
            None => x,
        })
    }
}

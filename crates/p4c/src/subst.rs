//! Replacing names in statements and declarations, for inlining: a function's or an inlined
//! control's parameters become the caller's arguments, their locals get fresh names. A name
//! declared inside a body (a variable, an action's parameter) hides the replacement from there on.

use crate::ast::*;
use std::collections::HashMap;

#[derive(Clone, Default)]
pub struct Subst {
    pub map: HashMap<String, Expr>,
}

impl Subst {
    pub fn add(&mut self, name: &str, to: Expr) {
        self.map.insert(name.to_string(), to);
    }

    /// The new name of a name used as a string (action references, switch labels).
    pub fn name(&self, n: &str) -> String {
        match self.map.get(n) {
            Some(Expr::Name(m, _)) => m.clone(),
            _ => n.to_string(),
        }
    }

    fn hide(&self, names: impl IntoIterator<Item = String>) -> Subst {
        let mut s = self.clone();
        for n in names {
            s.map.remove(&n);
        }
        s
    }

    pub fn expr(&self, e: &Expr) -> Expr {
        let b = |x: &Expr| Box::new(self.expr(x));
        match e {
            Expr::Name(n, _) => match self.map.get(n) {
                Some(to) => to.clone(),
                None => e.clone(),
            },
            Expr::Member(x, m, l) => Expr::Member(b(x), m.clone(), *l),
            Expr::Index(x, i, l) => Expr::Index(b(x), b(i), *l),
            Expr::Slice(x, h, lo, l) => Expr::Slice(b(x), b(h), b(lo), *l),
            Expr::Call {
                func,
                type_args,
                args,
                loc,
            } => Expr::Call {
                func: b(func),
                type_args: type_args.iter().map(|t| self.ty(t)).collect(),
                args: args.iter().map(|a| self.expr(a)).collect(),
                loc: *loc,
            },
            Expr::Unary(o, x, l) => Expr::Unary(o, b(x), *l),
            Expr::Binary(o, x, y, l) => Expr::Binary(o, b(x), b(y), *l),
            Expr::Cast(t, x, l) => Expr::Cast(self.ty(t), b(x), *l),
            Expr::Mux(c, x, y, l) => Expr::Mux(b(c), b(x), b(y), *l),
            Expr::List(xs, l) => Expr::List(xs.iter().map(|x| self.expr(x)).collect(), *l),
            Expr::Mask(x, y, l) => Expr::Mask(b(x), b(y), *l),
            Expr::Range(x, y, l) => Expr::Range(b(x), b(y), *l),
            Expr::Int { .. } | Expr::Bool(..) | Expr::Str(..) | Expr::Default(_) => e.clone(),
        }
    }

    /// Widths written with constants (`bit<W>`) follow renamed constants.
    pub fn ty(&self, t: &Type) -> Type {
        match t {
            Type::Bit(w) => Type::Bit(Box::new(self.expr(w))),
            Type::Int(w) => Type::Int(Box::new(self.expr(w))),
            Type::Varbit(w) => Type::Varbit(Box::new(self.expr(w))),
            Type::Stack(x, n) => Type::Stack(Box::new(self.ty(x)), Box::new(self.expr(n))),
            other => other.clone(),
        }
    }

    pub fn stmts(&self, stmts: &[Stmt]) -> Vec<Stmt> {
        let mut sc = self.clone();
        let mut out = Vec::with_capacity(stmts.len());
        for s in stmts {
            out.push(sc.stmt(s));
            if let Stmt::Var { name, .. } | Stmt::Const { name, .. } = s {
                // a declaration already renamed by the caller keeps its new name in the map
                if !matches!(sc.map.get(name), Some(Expr::Name(n, _)) if n != name) {
                    sc.map.remove(name);
                }
            }
        }
        out
    }

    fn stmt(&self, s: &Stmt) -> Stmt {
        match s {
            Stmt::Assign(l, r, loc) => Stmt::Assign(self.expr(l), self.expr(r), *loc),
            Stmt::Call(c, loc) => Stmt::Call(self.expr(c), *loc),
            Stmt::If(c, t, e, loc) => Stmt::If(self.expr(c), self.stmts(t), self.stmts(e), *loc),
            Stmt::Block(b) => Stmt::Block(self.stmts(b)),
            Stmt::Switch(e, cases, loc) => Stmt::Switch(
                self.expr(e),
                cases
                    .iter()
                    .map(|c| SwitchCase {
                        labels: c.labels.iter().map(|(l, lo)| (self.name(l), *lo)).collect(),
                        values: c
                            .values
                            .iter()
                            .map(|v| v.as_ref().map(|v| self.expr(v)))
                            .collect(),
                        body: c.body.as_ref().map(|b| self.stmts(b)),
                    })
                    .collect(),
                *loc,
            ),
            Stmt::Var {
                ty,
                name,
                init,
                loc,
            } => Stmt::Var {
                ty: self.ty(ty),
                name: self.name(name),
                init: init.as_ref().map(|i| self.expr(i)),
                loc: *loc,
            },
            Stmt::Const {
                ty,
                name,
                value,
                loc,
            } => Stmt::Const {
                ty: self.ty(ty),
                name: self.name(name),
                value: self.expr(value),
                loc: *loc,
            },
            Stmt::ReturnValue(e, loc) => Stmt::ReturnValue(self.expr(e), *loc),
            Stmt::For(f) => {
                // the loop's own variables hide the replacement in all of it
                let mut own = Vec::new();
                crate::alias::declared(&f.init, &mut own);
                let sc = self.hide(own);
                Stmt::For(Box::new(ForStmt {
                    init: self.stmts(&f.init),
                    cond: f.cond.as_ref().map(|c| sc.expr(c)),
                    step: sc.stmts(&f.step),
                    body: sc.stmts(&f.body),
                    loc: f.loc,
                }))
            }
            Stmt::Exit(_) | Stmt::Return(_) | Stmt::Break(_) | Stmt::Continue(_) | Stmt::Empty => {
                s.clone()
            }
        }
    }

    pub fn action(&self, a: &ActionDecl) -> ActionDecl {
        let inner = self.hide(a.params.iter().map(|p| p.name.clone()));
        ActionDecl {
            name: self.name(&a.name),
            params: a
                .params
                .iter()
                .map(|p| Param {
                    ty: self.ty(&p.ty),
                    ..p.clone()
                })
                .collect(),
            body: inner.stmts(&a.body),
            ..a.clone()
        }
    }

    fn action_ref(&self, r: &ActionRef) -> ActionRef {
        ActionRef {
            name: self.name(&r.name),
            args: r.args.iter().map(|a| self.expr(a)).collect(),
            ..r.clone()
        }
    }

    pub fn table(&self, t: &TableDecl) -> TableDecl {
        TableDecl {
            name: self.name(&t.name),
            keys: t
                .keys
                .iter()
                .map(|k| KeyElem {
                    expr: self.expr(&k.expr),
                    annotations: named_as_written(k),
                    ..k.clone()
                })
                .collect(),
            actions: t.actions.iter().map(|r| self.action_ref(r)).collect(),
            default_action: t
                .default_action
                .as_ref()
                .map(|(r, c)| (self.action_ref(r), *c)),
            entries: t.entries.as_ref().map(|es| {
                es.iter()
                    .map(|e| ConstEntry {
                        keys: e.keys.iter().map(|k| self.expr(k)).collect(),
                        action: self.action_ref(&e.action),
                        priority: e.priority.as_ref().map(|p| self.expr(p)),
                        loc: e.loc,
                    })
                    .collect()
            }),
            size: t.size.as_ref().map(|x| self.expr(x)),
            props: t
                .props
                .iter()
                .map(|(n, e, l)| (n.clone(), self.expr(e), *l))
                .collect(),
            ..t.clone()
        }
    }

    pub fn instance(&self, i: &Instance) -> Instance {
        Instance {
            ty: self.ty(&i.ty),
            args: i.args.iter().map(|a| self.expr(a)).collect(),
            name: self.name(&i.name),
            ..i.clone()
        }
    }
}

/// A key's annotations with `@name` set to the key as written, when it had none and is a field
/// or `h.isValid()`: the P4Info names a key as the program wrote it, before the control it sits
/// in was inlined into another (p4c: `h.key`, not the caller's `h.h.key`).
fn named_as_written(k: &KeyElem) -> Vec<Annotation> {
    let mut anns = k.annotations.clone();
    if annotation(&anns, "name").is_some() {
        return anns;
    }
    let written = match &k.expr {
        Expr::Call { func, args, .. } if args.is_empty() => match &**func {
            Expr::Member(b, m, _) if m == "isValid" => b.path().map(|p| format!("{p}.$valid$")),
            _ => None,
        },
        e => e.path(),
    };
    if let Some(body) = written {
        anns.push(Annotation {
            name: "name".into(),
            body,
            loc: k.loc,
        });
    }
    anns
}

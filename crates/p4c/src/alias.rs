//! Which places a body reads and writes, by path (`h.ipv4.ttl`, `meta.x`), for deciding whether
//! an argument can stand for its parameter or must be copied in (and out): it must be copied
//! when the body could otherwise observe the difference.

use crate::ast::*;
use crate::ast_map::walk;

/// Paths read and written by statements; an argument of a call counts as both.
#[derive(Default, Debug)]
pub struct Access {
    pub reads: Vec<String>,
    pub writes: Vec<String>,
}

/// Whether one path is the other or inside it (`h.h` and `h.h.a`).
pub fn overlaps(a: &str, b: &str) -> bool {
    let inside = |x: &str, y: &str| {
        x.len() > y.len() && x.starts_with(y) && matches!(x.as_bytes()[y.len()], b'.' | b'[')
    };
    a == b || inside(a, b) || inside(b, a)
}

/// The place an lvalue-like expression names (a stack indexed at run time: the whole stack).
pub fn place(e: &Expr) -> Option<String> {
    match e {
        Expr::Name(..) | Expr::Member(..) => e.path().or_else(|| match e {
            Expr::Member(b, m, _) => place(b).map(|p| format!("{p}.{m}")),
            _ => None,
        }),
        Expr::Index(b, _, _) => e.path().or_else(|| place(b)),
        Expr::Slice(b, _, _, _) => place(b),
        _ => None,
    }
}

/// Every place `e` reads.
pub fn reads_of(e: &Expr, out: &mut Vec<String>) {
    walk(e, &mut |x| {
        if let Some(p) = place(x) {
            if !out.iter().any(|o| overlaps(o, &p) && o.len() <= p.len()) {
                out.push(p);
            }
        }
    });
}

impl Access {
    pub fn stmts(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Assign(l, r, _) => {
                self.writes.extend(place(l));
                reads_of(r, &mut self.reads);
            }
            Stmt::Call(Expr::Call { func, args, .. }, _) => {
                if let Expr::Member(b, _, _) = &**func {
                    // setValid, push_front, a method writing its object
                    self.writes.extend(place(b));
                }
                for a in args {
                    self.writes.extend(place(a));
                    reads_of(a, &mut self.reads);
                }
            }
            Stmt::If(c, a, b, _) => {
                reads_of(c, &mut self.reads);
                self.stmts(a);
                self.stmts(b);
            }
            Stmt::Block(b) => self.stmts(b),
            Stmt::For(f) => {
                if let Some(c) = &f.cond {
                    reads_of(c, &mut self.reads);
                }
                self.stmts(&f.init);
                self.stmts(&f.step);
                self.stmts(&f.body);
            }
            Stmt::Switch(e, cases, _) => {
                reads_of(e, &mut self.reads);
                for c in cases {
                    if let Some(b) = &c.body {
                        self.stmts(b);
                    }
                }
            }
            Stmt::Var { init: Some(e), .. } | Stmt::ReturnValue(e, _) => {
                reads_of(e, &mut self.reads)
            }
            _ => {}
        }
    }

    /// Drops the places rooted at `names` (the body's own parameters and variables).
    pub fn without_roots(mut self, names: &[String]) -> Access {
        let root = |p: &String| {
            let end = p.find(['.', '[']).unwrap_or(p.len());
            names.iter().any(|n| n == &p[..end])
        };
        self.reads.retain(|p| !root(p));
        self.writes.retain(|p| !root(p));
        self
    }

    pub fn touches(&self, p: &str) -> bool {
        self.reads
            .iter()
            .chain(&self.writes)
            .any(|x| overlaps(x, p))
    }

    pub fn writes_to(&self, p: &str) -> bool {
        self.writes.iter().any(|x| overlaps(x, p))
    }
}

/// Names a body declares (its variables and constants).
pub fn declared(stmts: &[Stmt], out: &mut Vec<String>) {
    for s in stmts {
        match s {
            Stmt::Var { name, .. } | Stmt::Const { name, .. } => out.push(name.clone()),
            Stmt::Block(b) => declared(b, out),
            Stmt::For(f) => {
                declared(&f.init, out);
                declared(&f.body, out);
            }
            Stmt::If(_, a, b, _) => {
                declared(a, out);
                declared(b, out);
            }
            Stmt::Switch(_, cases, _) => {
                for c in cases {
                    if let Some(b) = &c.body {
                        declared(b, out);
                    }
                }
            }
            _ => {}
        }
    }
}

//! `for (init; cond; step) body` loops (`break`, `continue` are parsed with the statements).

use crate::ast::*;
use crate::diag::{fail, Loc, Res};
use crate::parse::Parser;

impl Parser {
    /// The loop after its `for` keyword.
    pub(crate) fn for_stmt(&mut self, loc: Loc) -> Res<Stmt> {
        self.expect("(")?;
        let init = self.for_clauses(";")?;
        if self.is_kw("in") {
            return fail(
                self.loc(),
                "for-in loops are not supported: write for (init; condition; step)",
            );
        }
        self.expect(";")?;
        let cond = if self.is(";") {
            None
        } else {
            Some(self.expr()?)
        };
        self.expect(";")?;
        let step = self.for_clauses(")")?;
        self.expect(")")?;
        let body = if self.is("{") {
            self.block()?
        } else {
            vec![self.stmt()?]
        };
        Ok(Stmt::For(Box::new(ForStmt {
            init,
            cond,
            step,
            body,
            loc,
        })))
    }

    /// Comma-separated declarations, assignments and calls up to `end` (not eaten).
    fn for_clauses(&mut self, end: &str) -> Res<Vec<Stmt>> {
        let mut out = Vec::new();
        while !self.is(end) && !self.is_kw("in") {
            let loc = self.loc();
            if self.is_decl_start() {
                let ty = self.ty()?;
                let (name, nloc) = self.ident()?;
                if self.is_kw("in") {
                    break;
                }
                self.expect("=")?;
                let init = Some(self.expr()?);
                out.push(Stmt::Var {
                    ty,
                    name,
                    init,
                    loc: nloc,
                });
            } else {
                let lhs = self.expr()?;
                if self.is_kw("in") {
                    break;
                }
                if let Some((op, n)) = self.compound_assign() {
                    let oloc = self.loc();
                    self.i += n;
                    let rhs = self.expr()?;
                    let value = Expr::Binary(op, Box::new(lhs.clone()), Box::new(rhs), oloc);
                    out.push(Stmt::Assign(lhs, value, loc));
                } else if self.eat("=") {
                    out.push(Stmt::Assign(lhs, self.expr()?, loc));
                } else if matches!(lhs, Expr::Call { .. }) {
                    out.push(Stmt::Call(lhs, loc));
                } else {
                    return fail(
                        loc,
                        "expected an assignment or a call in the for loop's header",
                    );
                }
            }
            if !self.eat(",") {
                break;
            }
        }
        Ok(out)
    }
}

//! `for` loops in action bodies, as p4c-bm2-ss writes them: the condition a `_jump_if_zero`
//! past the loop, the body, the step, a `_jump` back to the condition; `break` jumps past the
//! loop, `continue` to the step. The switch bounds how many backward jumps one action takes.

use crate::ast::*;
use crate::diag::{fail, Loc, Res};
use crate::env::Ty;
use crate::lower::action::prim;
use crate::lower::{hexstr, Lowerer, Scope};
use serde_json::Value;

/// Where the `break`s and `continue`s of the loop being lowered are (patched at its end).
#[derive(Default)]
pub struct LoopJumps {
    breaks: Vec<usize>,
    continues: Vec<usize>,
}

fn jump(to: usize) -> Value {
    prim("_jump", vec![hexstr(to as u128)])
}

impl Lowerer<'_> {
    pub(crate) fn for_prims(
        &mut self,
        sc: &mut Scope,
        f: &ForStmt,
        out: &mut Vec<Value>,
        parser: bool,
    ) -> Res<()> {
        if parser {
            return fail(f.loc, "a for loop in a parser state is not supported");
        }
        sc.push();
        let lowered = self.loop_prims(sc, f, out);
        sc.pop();
        lowered
    }

    fn loop_prims(&mut self, sc: &mut Scope, f: &ForStmt, out: &mut Vec<Value>) -> Res<()> {
        if let Some(loc) = value_return(&f.body) {
            return fail(
                loc,
                "return with a value inside a for loop is not supported",
            );
        }
        self.stmts_to_prims(sc, &f.init, out, false)?;
        let top = out.len();
        let cond = match &f.cond {
            Some(c) => {
                let (cv, ct) = self.rvalue(sc, c)?;
                if ct != Ty::Bool {
                    return fail(
                        c.loc(),
                        format!("loop condition must be bool, found {}", ct.describe()),
                    );
                }
                out.push(Value::Null);
                Some(cv)
            }
            None => None,
        };
        self.loops.push(LoopJumps::default());
        sc.push();
        let body = self.stmts_to_prims(sc, &f.body, out, false);
        sc.pop();
        let jumps = self.loops.pop().unwrap_or_default();
        body?;
        let step = out.len();
        self.stmts_to_prims(sc, &f.step, out, false)?;
        out.push(jump(top));
        let end = out.len();
        if let Some(cv) = cond {
            out[top] = prim("_jump_if_zero", vec![cv, hexstr(end as u128)]);
        }
        for b in jumps.breaks {
            out[b] = jump(end);
        }
        for c in jumps.continues {
            out[c] = jump(step);
        }
        Ok(())
    }

    /// A `break` or `continue`: a jump patched when its loop's end is known.
    pub(crate) fn loop_jump(&mut self, brk: bool, loc: Loc, out: &mut Vec<Value>) -> Res<()> {
        let Some(l) = self.loops.last_mut() else {
            return fail(
                loc,
                format!(
                    "{} outside a for loop",
                    if brk { "break" } else { "continue" }
                ),
            );
        };
        if brk {
            l.breaks.push(out.len());
        } else {
            l.continues.push(out.len());
        }
        out.push(Value::Null);
        Ok(())
    }
}

/// Whether `stmts` apply a table (`t.apply()` anywhere in them).
pub fn applies(stmts: &[Stmt]) -> bool {
    let found = std::cell::Cell::new(false);
    let visit = |e: Expr| {
        if matches!(&e, Expr::Call { func, .. } if matches!(&**func, Expr::Member(_, m, _) if m == "apply"))
        {
            found.set(true);
        }
        e
    };
    crate::ast_map::stmts(stmts.to_vec(), &visit);
    found.get()
}

/// Where `stmts` return a value (left by a function inlined around a loop), if anywhere.
fn value_return(stmts: &[Stmt]) -> Option<Loc> {
    stmts.iter().find_map(|s| match s {
        Stmt::ReturnValue(_, loc) => Some(*loc),
        Stmt::If(_, a, b, _) => value_return(a).or_else(|| value_return(b)),
        Stmt::Block(b) => value_return(b),
        Stmt::For(f) => value_return(&f.body),
        _ => None,
    })
}

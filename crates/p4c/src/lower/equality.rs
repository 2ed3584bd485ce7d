//! `==` and `!=` on headers, header stacks and structs, spelled out as p4c's midend does: two
//! headers are equal when both are invalid, or both valid with equal fields; stacks and
//! structs element by element, field by field.

use crate::ast::*;
use crate::diag::{fail, Loc, Res};
use crate::lower::expr::Ref;
use crate::lower::{Lowerer, Scope};
use serde_json::Value;

impl Lowerer<'_> {
    /// The comparison `a o b` when `a` and `b` are headers, stacks or structs; None otherwise.
    pub(crate) fn aggregate_equality(
        &self,
        sc: &Scope,
        o: &str,
        a: &Expr,
        b: &Expr,
        loc: Loc,
    ) -> Res<Option<(Value, crate::env::Ty)>> {
        if o != "==" && o != "!=" {
            return Ok(None);
        }
        let place = |e: &Expr| matches!(e, Expr::Name(..) | Expr::Member(..) | Expr::Index(..));
        if !place(a) || !place(b) {
            return Ok(None);
        }
        let (Ok(ra), Ok(rb)) = (self.resolve(sc, a), self.resolve(sc, b)) else {
            return Ok(None);
        };
        let Some(eq) = self.equal_expr(&ra, &rb, a, b, loc)? else {
            return Ok(None);
        };
        let e = if o == "==" {
            eq
        } else {
            Expr::Unary("!", Box::new(eq), loc)
        };
        self.rvalue(sc, &e).map(Some)
    }

    /// `a == b` over their parts, as an expression of fields and validity; None when `a` and
    /// `b` are not headers, stacks or structs.
    fn equal_expr(&self, ra: &Ref, rb: &Ref, a: &Expr, b: &Expr, loc: Loc) -> Res<Option<Expr>> {
        let and = |x: Expr, y: Expr| Expr::Binary("&&", Box::new(x), Box::new(y), loc);
        let member = |e: &Expr, m: &str| Expr::Member(Box::new(e.clone()), m.to_string(), loc);
        Ok(Some(match (ra, rb) {
            (Ref::Header { htype: ta, .. }, Ref::Header { htype: tb, .. }) => {
                if ta != tb {
                    return fail(loc, format!("cannot compare header {ta} with header {tb}"));
                }
                let valid = |e: &Expr| Expr::Call {
                    func: Box::new(member(e, "isValid")),
                    type_args: Vec::new(),
                    args: Vec::new(),
                    loc,
                };
                let not = |x: Expr| Expr::Unary("!", Box::new(x), loc);
                let mut same = and(valid(a), valid(b));
                for f in self.env.header_fields(ta) {
                    let eq = Expr::Binary(
                        "==",
                        Box::new(member(a, &f.name)),
                        Box::new(member(b, &f.name)),
                        loc,
                    );
                    same = and(same, eq);
                }
                Expr::Binary(
                    "||",
                    Box::new(and(not(valid(a)), not(valid(b)))),
                    Box::new(same),
                    loc,
                )
            }
            (
                Ref::Stack {
                    size: na,
                    htype: ta,
                    ..
                },
                Ref::Stack {
                    size: nb,
                    htype: tb,
                    ..
                },
            ) => {
                if na != nb || ta != tb {
                    return fail(
                        loc,
                        format!("cannot compare stacks {ta}[{na}] and {tb}[{nb}]"),
                    );
                }
                let at = |e: &Expr, i: u32| {
                    let k = Expr::Int {
                        value: u128::from(i),
                        width: None,
                        loc,
                    };
                    Expr::Index(Box::new(e.clone()), Box::new(k), loc)
                };
                let mut all = Expr::Bool(true, loc);
                for i in 0..*na {
                    let (ea, eb) = (at(a, i), at(b, i));
                    let (ra, rb) = (
                        Ref::Header {
                            inst: String::new(),
                            htype: ta.clone(),
                        },
                        Ref::Header {
                            inst: String::new(),
                            htype: tb.clone(),
                        },
                    );
                    if let Some(e) = self.equal_expr(&ra, &rb, &ea, &eb, loc)? {
                        all = and(all, e);
                    }
                }
                all
            }
            (Ref::Struct { sname: sa, .. }, Ref::Struct { sname: sb, .. }) => {
                if sa != sb {
                    return fail(loc, format!("cannot compare struct {sa} with struct {sb}"));
                }
                let fs = self.env.structs.get(sa).cloned().unwrap_or_default();
                let mut all = Expr::Bool(true, loc);
                for f in fs {
                    let (ea, eb) = (member(a, &f.name), member(b, &f.name));
                    let e = Expr::Binary("==", Box::new(ea), Box::new(eb), loc);
                    all = and(all, e);
                }
                all
            }
            (x, y) if aggregate(x) || aggregate(y) => {
                let what = |e: &Expr| e.path().unwrap_or_else(|| "this expression".into());
                return fail(loc, format!("cannot compare {} with {}: one is a header, stack or struct and the other is not the same kind", what(a), what(b)));
            }
            _ => return Ok(None),
        }))
    }
}

fn aggregate(r: &Ref) -> bool {
    matches!(
        r,
        Ref::Header { .. } | Ref::Stack { .. } | Ref::Struct { .. }
    )
}

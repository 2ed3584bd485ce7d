//! `==` and `!=` between two headers or two structs, expanded as p4c's front end does: two
//! headers are equal when both are invalid, or both are valid and every field is equal; two
//! structs when every field (header, struct or value) is equal.

use crate::ast::*;
use crate::diag::{fail, Loc, Res};
use crate::lower::{field, op, un, Lowerer, Scope};
use crate::lower_expr::Ref;
use serde_json::{json, Value};

impl Lowerer<'_> {
    /// `a == b` when `a` is a header or a struct (None for any other value).
    pub(crate) fn aggregate_eq(
        &self,
        sc: &Scope,
        a: &Expr,
        b: &Expr,
        loc: Loc,
    ) -> Res<Option<Value>> {
        let ra = match self.resolve(sc, a) {
            Ok(r @ (Ref::Header { .. } | Ref::Struct { .. })) => r,
            _ => return Ok(None),
        };
        let rb = self.resolve(sc, b)?;
        let member = |e: &Expr, f: &str| Expr::Member(Box::new(e.clone()), f.to_string(), loc);
        let fields_equal = |names: Vec<String>| -> Res<Value> {
            let mut all = json!({"type": "bool", "value": true});
            for f in names {
                let eq = Expr::Binary("==", Box::new(member(a, &f)), Box::new(member(b, &f)), loc);
                let (v, _) = self.rvalue(sc, &eq)?;
                all = op("and", all, v);
            }
            Ok(all)
        };
        match (ra, rb) {
            (Ref::Header { inst: x, htype: tx }, Ref::Header { inst: y, htype: ty }) => {
                if tx != ty {
                    return fail(
                        loc,
                        format!("cannot compare a header {tx} with a header {ty}"),
                    );
                }
                let names = self
                    .env
                    .header_fields(&tx)
                    .iter()
                    .map(|f| f.name.clone())
                    .collect();
                let (vx, vy) = (
                    un("d2b", field(&x, "$valid$")),
                    un("d2b", field(&y, "$valid$")),
                );
                let both_invalid = op("and", un("not", vx.clone()), un("not", vy.clone()));
                let both_valid_same = op("and", op("and", vx, vy), fields_equal(names)?);
                Ok(Some(op("or", both_invalid, both_valid_same)))
            }
            (Ref::Struct { sname: sx, .. }, Ref::Struct { sname: sy, .. }) => {
                if sx != sy {
                    return fail(
                        loc,
                        format!("cannot compare a struct {sx} with a struct {sy}"),
                    );
                }
                if self.env.unions.contains(&sx) {
                    return fail(loc, format!("not supported: == on header unions ({sx})"));
                }
                let names = self
                    .env
                    .structs
                    .get(&sx)
                    .map(|fs| fs.iter().map(|f| f.name.clone()).collect())
                    .unwrap_or_default();
                Ok(Some(fields_equal(names)?))
            }
            (Ref::Header { htype, .. }, _) => fail(
                b.start(),
                format!("a header {htype} can only be compared with a header of its type"),
            ),
            (Ref::Struct { sname, .. }, _) => fail(
                b.start(),
                format!("a struct {sname} can only be compared with a struct of its type"),
            ),
            _ => Ok(None),
        }
    }
}

//! PSA's externs whose methods return their result (`x = reg.read(i)`), lowered to the bmv2
//! primitives v1model's take an out argument for.

use crate::ast::*;
use crate::diag::{fail, Res};
use crate::lower::{Lowerer, Scope};
use crate::lower_expr::Ref;
use serde_json::{json, Value};

impl Lowerer<'_> {
    /// `dst = reg.read(index)` for a PSA `Register`: bmv2's `register_read`; None if `r` is not
    /// such a call.
    pub(crate) fn psa_register_read(&mut self, sc: &Scope, l: &Expr, r: &Expr) -> Res<Option<Value>> {
        let Expr::Call { func, args, loc, .. } = r else {
            return Ok(None);
        };
        let Expr::Member(b, m, _) = &**func else {
            return Ok(None);
        };
        if m != "read" {
            return Ok(None);
        }
        let Ok(Ref::Extern(name, ty, w)) = self.resolve(sc, b) else {
            return Ok(None);
        };
        if ty != "Register" {
            return Ok(None);
        }
        let [index] = args.as_slice() else {
            return fail(*loc, "Register.read takes 1 argument (the index)");
        };
        let (dst, dt) = self.lvalue(sc, l)?;
        if dt.width() != Some(w) {
            return fail(l.loc(), format!("register {name} holds bit<{w}>, read into {}", dt.describe()));
        }
        let idx = self.arg(sc, index, 32, "the index")?;
        Ok(Some(json!({
            "op": "register_read",
            "parameters": [dst, {"type": "register_array", "value": name}, idx],
        })))
    }
}

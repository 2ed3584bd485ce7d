//! PSA's externs whose methods return their result (`x = reg.read(i)`, `c = m.execute(i)`,
//! `h = hash.get_hash(data)`), lowered to the bmv2 primitives v1model's take an out argument
//! for (crates/p4c/src/psa_hoist.rs leaves every such call as the right-hand side of an
//! assignment).

use crate::ast::*;
use crate::diag::{fail, Loc, Res};
use crate::env::Ty;
use crate::lower::{Lowerer, Scope};
use crate::lower_expr::Ref;
use serde_json::{json, Value};

impl Lowerer<'_> {
    /// `dst = reg.read(index)` (bmv2's `register_read`), `dst = meter.execute(index)` or
    /// `dst = hash.get_hash(...)`: the primitives; None if `r` is not such a call.
    pub(crate) fn psa_value_call(
        &mut self,
        sc: &Scope,
        l: &Expr,
        r: &Expr,
    ) -> Res<Option<Vec<Value>>> {
        let Expr::Call {
            func, args, loc, ..
        } = r
        else {
            return Ok(None);
        };
        let Expr::Member(b, m, _) = &**func else {
            return Ok(None);
        };
        let Ok(Ref::Extern(name, ty, w)) = self.resolve(sc, b) else {
            return Ok(None);
        };
        match (ty.as_str(), m.as_str()) {
            ("Register", "read") => {}
            ("Meter", "execute") => {
                return self.psa_meter_execute(sc, l, &name, args, *loc).map(Some)
            }
            ("Hash", "get_hash") => return self.psa_get_hash(sc, l, &name, args, *loc).map(Some),
            _ => return Ok(None),
        }
        let [index] = args.as_slice() else {
            return fail(*loc, "Register.read takes 1 argument (the index)");
        };
        let (dst, dt) = self.lvalue(sc, l)?;
        if dt.width() != Some(w) {
            return fail(
                l.loc(),
                format!(
                    "register {name} holds bit<{w}>, read into {}",
                    dt.describe()
                ),
            );
        }
        let idx = self.arg(sc, index, 32, "the index")?;
        Ok(Some(vec![json!({
            "op": "register_read",
            "parameters": [dst, {"type": "register_array", "value": name}, idx],
        })]))
    }
}

impl Lowerer<'_> {
    /// `color = meter.execute(index)`: bmv2's `execute_meter` gives 0 green, 1 yellow, 2 red;
    /// PSA_MeterColor_t is RED, GREEN, YELLOW (0, 1, 2), so the colour is (bmv2's + 1) % 3.
    fn psa_meter_execute(
        &mut self,
        sc: &Scope,
        l: &Expr,
        name: &str,
        args: &[Expr],
        loc: Loc,
    ) -> Res<Vec<Value>> {
        let [index] = args else {
            return fail(loc, "Meter.execute with a colour (colour-aware metering) is not supported: call execute(index)");
        };
        let (dst, _) = self.lvalue(sc, l)?;
        let idx = self.arg(sc, index, 32, "the index")?;
        let bmv2 = self.add_scalar("meter_color", &Ty::Bit(32), loc)?;
        let bmv2 = json!({"type": "field", "value": ["scalars", bmv2]});
        let color = json!({"type": "expression", "value": {"op": "%",
            "left": {"type": "expression", "value": {"op": "+", "left": bmv2, "right": {"type": "hexstr", "value": "0x00000001"}}},
            "right": {"type": "hexstr", "value": "0x00000003"}}});
        Ok(vec![
            json!({"op": "execute_meter", "parameters": [{"type": "meter_array", "value": name}, idx, bmv2]}),
            json!({"op": "assign", "parameters": [dst, color]}),
        ])
    }

    /// `x = hash.get_hash(data)` (the hash of `data`, cut to x's width) or
    /// `x = hash.get_hash(base, data, max)` (base + hash % max): bmv2's
    /// `modify_field_with_hash_based_offset` over a calculation of the instance's algorithm.
    fn psa_get_hash(
        &mut self,
        sc: &Scope,
        l: &Expr,
        name: &str,
        args: &[Expr],
        loc: Loc,
    ) -> Res<Vec<Value>> {
        let Some(algo) = self.hash_algos.get(name).cloned() else {
            return fail(loc, format!("Hash {name}: its algorithm is not known"));
        };
        let (dst, dt) = self.lvalue(sc, l)?;
        let w = dt.width().unwrap_or(32);
        let mut pre = Vec::new();
        let (base, data, max) = match args {
            [data] => (
                crate::lower::hexstr(0),
                data,
                crate::lower::hexstr(1u128 << w.min(64)),
            ),
            [base, data, max] => (
                self.arg(sc, base, w, "the hash base")?,
                data,
                self.arg(sc, max, w.max(32), "the hash range")?,
            ),
            _ => return fail(loc, "Hash.get_hash takes (data) or (base, data, max)"),
        };
        let calc = self.calculation(sc, &algo, data, Some(&mut pre))?;
        // psa_switch's Hash pads its input on the left to whole bytes (v1model's on the right)
        let items = match data {
            Expr::List(items, _) => items.clone(),
            e => vec![e.clone()],
        };
        let mut bits = 0;
        for it in &items {
            bits += match self.resolve(sc, it) {
                Ok(Ref::Header { htype, .. }) => self
                    .env
                    .header_fields(&htype)
                    .iter()
                    .map(|f| f.ty.width().unwrap_or(0))
                    .sum(),
                _ => self.rvalue(sc, it)?.1.width().unwrap_or(0),
            };
        }
        if bits % 8 != 0 {
            if let Some(input) = self
                .calculations
                .last_mut()
                .and_then(|c| c["input"].as_array_mut())
            {
                input.insert(
                    0,
                    json!({"type": "hexstr", "value": "0x0", "bitwidth": 8 - bits % 8}),
                );
            }
        }
        pre.push(json!({"op": "modify_field_with_hash_based_offset",
            "parameters": [dst, base, {"type": "calculation", "value": calc}, max]}));
        Ok(pre)
    }
}

//! PSA's externs whose methods return their result (`x = reg.read(i)`, `c = m.execute(i)`,
//! `h = hash.get_hash(data)`), lowered to the bmv2 primitives v1model's take an out argument
//! for (crates/p4c/src/psa_hoist.rs leaves every such call as the right-hand side of an
//! assignment).

use crate::ast::*;
use crate::diag::{fail, Loc, Res};
use crate::env::Ty;
use crate::lower::expr::Ref;
use crate::lower::{Lowerer, Scope};
use serde_json::{json, Value};

/// bmv2's name of a PSA_HashAlgorithm_t member.
pub(crate) fn psa_algorithm(member: &str) -> String {
    match member {
        "ONES_COMPLEMENT16" => "csum16".into(),
        other => other.to_lowercase(),
    }
}

impl Lowerer<'_> {
    /// [`Lowerer::psa_value_call`] as an assignment's primitives (parser ops in a parser).
    pub(crate) fn psa_assign(
        &mut self,
        sc: &Scope,
        l: &Expr,
        r: &Expr,
        parser: bool,
    ) -> Res<Option<Vec<Value>>> {
        let Some(prims) = self.psa_value_call(sc, l, r)? else {
            return Ok(None);
        };
        if !parser {
            return Ok(Some(prims));
        }
        Ok(Some(
            prims
                .into_iter()
                .map(|p| json!({"op": "primitive", "parameters": [p]}))
                .collect(),
        ))
    }

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
            ("InternetChecksum", "get" | "get_state") => {
                let (dst, _) = self.lvalue(sc, l)?;
                let state = self.csum_state(&name);
                let v = if m == "get" { not16(state) } else { state };
                return Ok(Some(vec![json!({"op": "assign", "parameters": [dst, v]})]));
            }
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

/// `~x` in 16 bits.
fn not16(x: Value) -> Value {
    json!({"type": "expression", "value": {"op": "^", "left": x, "right": {"type": "hexstr", "value": "0xffff"}}})
}

fn expr(op: &str, l: Value, r: Value) -> Value {
    json!({"type": "expression", "value": {"op": op, "left": l, "right": r}})
}

impl Lowerer<'_> {
    fn csum_state(&self, name: &str) -> Value {
        let f = self.csum_states.get(name).cloned().unwrap_or_default();
        json!({"type": "field", "value": ["scalars", f]})
    }

    /// `ck.clear()`, `ck.add({..})`, `ck.subtract({..})`, `ck.set_state(v)` of a PSA
    /// InternetChecksum: its sum kept as a one's complement 16-bit value. bmv2's csum16 of the
    /// data is the complement of the data's sum, so adding the data adds ~csum16 and subtracting
    /// it adds csum16, each with the carry folded back in.
    pub(crate) fn psa_checksum_method(
        &mut self,
        sc: &Scope,
        name: &str,
        m: &str,
        args: &[Expr],
        loc: Loc,
    ) -> Res<Vec<Value>> {
        let state = self.csum_state(name);
        match (m, args) {
            ("clear", []) => Ok(vec![json!({"op": "assign", "parameters": [state, {"type": "hexstr", "value": "0x0000"}]})]),
            ("set_state", [v]) => {
                let v = self.arg(sc, v, 16, "the checksum state")?;
                Ok(vec![json!({"op": "assign", "parameters": [state, v]})])
            }
            ("add" | "subtract", [data]) => {
                let mut out = Vec::new();
                let algo = Expr::Member(Box::new(Expr::Name("PSA_HashAlgorithm_t".into(), loc)), "ONES_COMPLEMENT16".into(), loc);
                let calc = self.calculation(sc, &algo, data, Some(&mut out))?;
                let csum = self.add_scalar("checksum_data", &Ty::Bit(16), loc)?;
                let csum = json!({"type": "field", "value": ["scalars", csum]});
                let sum = self.add_scalar("checksum_sum", &Ty::Bit(32), loc)?;
                let sum = json!({"type": "field", "value": ["scalars", sum]});
                out.push(json!({"op": "modify_field_with_hash_based_offset",
                    "parameters": [csum, {"type": "hexstr", "value": "0x0000"}, {"type": "calculation", "value": calc}, {"type": "hexstr", "value": "0x10000"}]}));
                let term = if m == "add" { not16(csum) } else { csum };
                out.push(json!({"op": "assign", "parameters": [sum, expr("+", state.clone(), term)]}));
                let folded = expr("+", expr("&", sum.clone(), json!({"type": "hexstr", "value": "0xffff"})), expr(">>", sum, json!({"type": "hexstr", "value": "0x10"})));
                out.push(json!({"op": "assign", "parameters": [state, folded]}));
                Ok(out)
            }
            _ => fail(loc, format!("InternetChecksum.{m} with {} argument(s) is not supported (clear, add, subtract, get, get_state, set_state)", args.len())),
        }
    }
}

//! Hash and checksum calculations (bmv2's `calculations`): the algorithm and the field list
//! a `hash`, checksum or PSA Hash call reads.

use crate::ast::*;
use crate::diag::{fail, Res};
use crate::env::Ty;
use crate::lower::action::{header, prim};
use crate::lower::expr::Ref;
use crate::lower::{field, Lowerer, Scope};
use serde_json::{json, Value};

impl Lowerer<'_> {
    /// A `calculations` entry for `algo` over the list `fields`; returns its name. In an action
    /// (`pre` given) other values (parameters, expressions) are first copied into scalars, as
    /// bmv2 calculations read only fields and constants.
    pub fn calculation(
        &mut self,
        sc: &Scope,
        algo: &Expr,
        fields: &Expr,
        mut pre: Option<&mut Vec<Value>>,
    ) -> Res<String> {
        let algo_name = match (algo, self.resolve(sc, algo)?) {
            (Expr::Member(_, m, _), Ref::Const(_, Ty::Enum(e))) if e == "HashAlgorithm" => {
                m.clone()
            }
            (Expr::Member(_, m, _), Ref::Const(_, Ty::Enum(e))) if e == "PSA_HashAlgorithm_t" => {
                crate::lower::psa_extern::psa_algorithm(m)
            }
            _ => {
                return fail(
                    algo.loc(),
                    "expected a HashAlgorithm member, e.g. HashAlgorithm.crc16",
                )
            }
        };
        let algo_json = match algo_name.as_str() {
            "crc16" | "crc32" | "csum16" | "identity" | "xor16" => algo_name.clone(),
            other => return fail(algo.loc(), format!("hash algorithm {other} is not supported (crc16, crc32, csum16, identity, xor16)")),
        };
        let items: Vec<Expr> = match fields {
            Expr::List(items, _) => items.clone(),
            e => vec![e.clone()],
        };
        let mut input = Vec::new();
        for it in &items {
            match self.resolve(sc, it) {
                Ok(Ref::Field { h, f, .. }) => input.push(field(&h, &f)),
                Ok(Ref::Header { inst, .. }) => input.push(header(&inst)),
                _ => match self.env.const_value(it) {
                    Ok((v, t)) => match t.width() {
                        Some(w) => input.push(
                            json!({"type": "hexstr", "value": format!("{v:#x}"), "bitwidth": w}),
                        ),
                        None => {
                            return fail(
                                it.loc(),
                                "a constant in a hash input needs a width, e.g. 8w0",
                            )
                        }
                    },
                    Err(_) if pre.is_some() => {
                        let (v, t) = self.rvalue(sc, it)?;
                        let Some(w) = t.width().filter(|_| t != Ty::Bool) else {
                            return fail(
                                it.loc(),
                                format!("a hash input must be bit<W>, found {}", t.describe()),
                            );
                        };
                        let tmp = self.add_scalar("hash_input", &Ty::Bit(w), it.loc())?;
                        if let Some(out) = pre.as_deref_mut() {
                            out.push(prim("assign", vec![field("scalars", &tmp), v]));
                        }
                        input.push(field("scalars", &tmp));
                    }
                    Err(_) => {
                        return fail(
                            it.loc(),
                            "checksum inputs must be fields, headers or sized constants",
                        )
                    }
                },
            }
        }
        let name = format!("calc_{}", self.calculations.len());
        let id = self.calculations.len();
        self.calculations
            .push(json!({"name": name, "id": id, "algo": algo_json, "input": input}));
        Ok(name)
    }
}

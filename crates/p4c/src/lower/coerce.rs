//! Converting a value for storing in a place of another type: unsized constants checked
//! against the width (negative ones as two's complement), bools to bits, serializable enums
//! to and from their representation.

use crate::diag::{fail, Loc, Res};
use crate::env::{fits_signed, mask, Ty};
use crate::lower::{hexstr, signed_hexstr, un, Lowerer};
use serde_json::Value;

impl Lowerer<'_> {
    /// `v` (of type `from`) converted for storing in a `to`.
    pub fn coerce(&self, v: Value, from: &Ty, to: &Ty, loc: Loc, what: &str) -> Res<Value> {
        match (from, to) {
            (Ty::Bool, Ty::Bool) => Ok(un("b2d", v)),
            (Ty::InfInt, Ty::Int(w)) => {
                if let Some(n) = v
                    .get("value")
                    .and_then(Value::as_str)
                    .and_then(parse_signed)
                {
                    if !fits_signed(n, *w) {
                        return fail(
                            loc,
                            format!("value {n} does not fit in {what} ({})", to.describe()),
                        );
                    }
                    if n < 0 {
                        return Ok(signed_hexstr(n as u128 & mask(*w), *w));
                    }
                }
                Ok(v)
            }
            (Ty::InfInt, t) if t.width().is_some() && *t != Ty::Bool => {
                if let Some(s) = v.get("value").and_then(Value::as_str) {
                    let n = u128::from_str_radix(s.trim_start_matches("0x"), 16).unwrap_or(0);
                    if n >> 127 != 0 && *t != Ty::Bool {
                        // a negative constant as bit<W>: its W-bit two's complement
                        return Ok(hexstr(n & mask(t.width().unwrap_or(128))));
                    }
                    if n > mask(t.width().unwrap_or(128)) {
                        // an unsized negative constant is its 128-bit two's complement
                        let shown = if n >> 127 != 0 {
                            (n as i128).to_string()
                        } else {
                            n.to_string()
                        };
                        return fail(
                            loc,
                            format!("value {shown} does not fit in {what} ({})", t.describe()),
                        );
                    }
                }
                Ok(v)
            }
            (a, b) if a == b => Ok(v),
            (Ty::SerEnum(_, a), Ty::Bit(b)) | (Ty::Bit(a), Ty::SerEnum(_, b)) if a == b => Ok(v),
            (Ty::Error, Ty::Error) => Ok(v),
            _ => fail(
                loc,
                format!(
                    "type mismatch: {} assigned to {what} of type {}; cast it with ({})",
                    from.describe(),
                    to.describe(),
                    to.describe()
                ),
            ),
        }
    }
}

/// A hexstr constant's value ("0x1f", "-0x1"); unsized negative constants are held as their
/// 128-bit two's complement, so a value with bit 127 set reads as negative.
fn parse_signed(s: &str) -> Option<i128> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s),
    };
    let n = u128::from_str_radix(digits.trim_start_matches("0x"), 16).ok()? as i128;
    Some(if neg { n.wrapping_neg() } else { n })
}

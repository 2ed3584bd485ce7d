//! Compile-time constants: the value of a constant expression, and a constant given where
//! another type is expected.

use super::{fits_signed, mask, sext, Env, Ty};
use crate::ast::*;
use crate::diag::{fail, Loc, Res};

impl Env {
    /// Value of a compile-time constant expression.
    pub fn const_value(&self, e: &Expr) -> Res<(u128, Ty)> {
        match e {
            Expr::Int { value, width, loc } => match width {
                None => Ok((*value, Ty::InfInt)),
                Some((false, w)) => Ok((value & mask(*w), Ty::Bit(*w))),
                Some((true, w)) if *w < 2 => {
                    fail(*loc, "a signed literal needs a width of at least 2")
                }
                Some((true, w)) => Ok((value & mask(*w), Ty::Int(*w))),
            },
            Expr::Bool(b, _) => Ok((u128::from(*b), Ty::Bool)),
            Expr::Name(n, loc) => match self.consts.get(n) {
                Some((v, t)) => Ok((*v, t.clone())),
                None => fail(*loc, format!("'{n}' is not a compile-time constant")),
            },
            Expr::Member(b, m, loc) => {
                if let Expr::Name(en, _) = &**b {
                    if let Some(info) = self.enums.get(en) {
                        if let Some((_, v)) = info.members.iter().find(|x| &x.0 == m) {
                            return Ok((
                                *v,
                                info.width
                                    .map_or(Ty::Enum(en.clone()), |w| Ty::SerEnum(en.clone(), w)),
                            ));
                        }
                        return fail(*loc, format!("enum '{en}' has no member '{m}'"));
                    }
                    if en == "error" {
                        if let Some(i) = self.errors.iter().position(|x| x == m) {
                            return Ok((i as u128, Ty::Error));
                        }
                        return fail(*loc, format!("error '{m}' is not declared"));
                    }
                }
                fail(*loc, "not a compile-time constant")
            }
            Expr::Cast(t, x, loc) => {
                let t = self.resolve(t)?;
                let (v, vt) = self.const_value(x)?;
                match (&t, &vt) {
                    (Ty::Bit(w) | Ty::Int(w), _) => Ok((v & mask(*w), t.clone())),
                    (Ty::Bool, _) => Ok((u128::from(v != 0), Ty::Bool)),
                    _ => fail(*loc, format!("cannot cast a constant to {}", t.describe())),
                }
            }
            Expr::Unary(op, x, _) => {
                let (v, t) = self.const_value(x)?;
                let w = t.width().unwrap_or(128);
                Ok(match *op {
                    // a negative unsized constant is kept as its 128-bit two's complement
                    "-" => (v.wrapping_neg() & mask(w), t),
                    "~" => (!v & mask(w), t),
                    _ => (u128::from(v == 0), Ty::Bool),
                })
            }
            Expr::Binary(op, a, b, loc) => {
                let (x, xt) = self.const_value(a)?;
                let (y, yt) = self.const_value(b)?;
                // an unsized constant next to a bit<W> / int<W> is first cast to it (-1 == 8w255)
                let sized = |t: &Ty| t.width().filter(|_| *t != Ty::Bool && t != &Ty::InfInt);
                let (x, y) = match (&xt, &yt, *op) {
                    (_, _, "<<" | ">>" | "++") => (x, y),
                    (Ty::InfInt, t, _) if sized(t).is_some() => {
                        (x & mask(sized(t).unwrap_or(128)), y)
                    }
                    (t, Ty::InfInt, _) if sized(t).is_some() => {
                        (x, y & mask(sized(t).unwrap_or(128)))
                    }
                    _ => (x, y),
                };
                let t = if xt == Ty::InfInt {
                    yt.clone()
                } else {
                    xt.clone()
                };
                let w = t.width().unwrap_or(128);
                let m = mask(w);
                let cmp = |c: bool| (u128::from(c), Ty::Bool);
                // int<W> and unsized constants compare and shift as signed values
                let signed = matches!(t, Ty::Int(_) | Ty::InfInt);
                let (sx, sy) = (sext(x, w), sext(y, w));
                if matches!(t, Ty::Int(_)) && matches!(*op, "/" | "%") {
                    return fail(
                        *loc,
                        format!("operator {op} is not defined on {}", t.describe()),
                    );
                }
                Ok(match *op {
                    "+" => (x.wrapping_add(y) & m, t),
                    "-" => (x.wrapping_sub(y) & m, t),
                    "*" => (x.wrapping_mul(y) & m, t),
                    "/" | "%" if y == 0 => return fail(*loc, "division by zero"),
                    "/" => (x / y, t),
                    "%" => (x % y, t),
                    "<<" => (
                        x.checked_shl(y as u32).unwrap_or(0) & mask(xt.width().unwrap_or(128)),
                        xt,
                    ),
                    ">>" if matches!(xt, Ty::Int(_)) => {
                        let xw = xt.width().unwrap_or(128);
                        ((sext(x, xw) >> y.min(127)) as u128 & mask(xw), xt)
                    }
                    ">>" => (x.checked_shr(y as u32).unwrap_or(0), xt),
                    "&" => (x & y, t),
                    "|" => (x | y, t),
                    "^" => (x ^ y, t),
                    "==" => cmp(x == y),
                    "!=" => cmp(x != y),
                    "<" => cmp(if signed { sx < sy } else { x < y }),
                    ">" => cmp(if signed { sx > sy } else { x > y }),
                    "<=" => cmp(if signed { sx <= sy } else { x <= y }),
                    ">=" => cmp(if signed { sx >= sy } else { x >= y }),
                    "&&" => cmp(x != 0 && y != 0),
                    "||" => cmp(x != 0 || y != 0),
                    "++" => match (xt.width(), yt.width()) {
                        (Some(_), Some(wy)) => {
                            ((x << wy) | y, Ty::Bit(xt.width().unwrap_or(0) + wy))
                        }
                        _ => return fail(*loc, "++ needs operands of known width"),
                    },
                    _ => return fail(*loc, format!("operator {op} not supported in constants")),
                })
            }
            Expr::Mux(c, a, b, _) => {
                let (c, _) = self.const_value(c)?;
                if c != 0 {
                    self.const_value(a)
                } else {
                    self.const_value(b)
                }
            }
            Expr::Slice(x, h, l, loc) => {
                let (v, _) = self.const_value(x)?;
                let (h, _) = self.const_value(h)?;
                let (l, _) = self.const_value(l)?;
                if h < l {
                    return fail(*loc, "slice [h:l] needs h >= l");
                }
                Ok((
                    (v >> l) & mask((h - l + 1) as u32),
                    Ty::Bit((h - l + 1) as u32),
                ))
            }
            _ => fail(e.loc(), "not a compile-time constant"),
        }
    }

    /// A constant of type `from` given where `to` is expected.
    pub fn coerce_const(&self, v: u128, from: &Ty, to: &Ty, loc: Loc) -> Res<u128> {
        match (from, to) {
            (Ty::InfInt, Ty::Int(w)) => {
                let s = v as i128;
                if !fits_signed(s, *w) {
                    return fail(loc, format!("value {s} does not fit in {}", to.describe()));
                }
                Ok(v & mask(*w))
            }
            (Ty::InfInt, t) if t.width().is_some() => {
                let w = t.width().unwrap_or(128);
                if v >> 127 != 0 && *t != Ty::Bool {
                    // a negative constant as bit<W>: its W-bit two's complement
                    return Ok(v & mask(w));
                }
                if v > mask(w) {
                    // an unsized negative constant is held as its 128-bit two's complement
                    let shown = if v >> 127 != 0 {
                        (v as i128).to_string()
                    } else {
                        v.to_string()
                    };
                    return fail(
                        loc,
                        format!("value {shown} does not fit in {}", to.describe()),
                    );
                }
                Ok(v)
            }
            (a, b) if a == b => Ok(v),
            (Ty::SerEnum(_, w), Ty::Bit(x)) | (Ty::Bit(x), Ty::SerEnum(_, w)) if w == x => Ok(v),
            (_, Ty::InfInt) => Ok(v),
            _ => fail(
                loc,
                format!(
                    "type mismatch: {} where {} is expected",
                    from.describe(),
                    to.describe()
                ),
            ),
        }
    }
}

//! Expressions: compiled once into a small tree, evaluated per packet on u128 values.
//!
//! bmv2 evaluates on arbitrary-precision integers and p4c inserts `& mask` after operations that
//! can overflow their P4 width; with wrapping u128 arithmetic the masked results are the same for
//! widths up to 128 bits (p4c lowers `lookahead<header_t>()` to a 128-bit value sliced with `>>`
//! and masks, so 128 bits matter). Fields wider than 128 bits are refused here (they may only be
//! copied, matched, extracted and emitted, which the callers handle separately). Booleans are 0
//! or 1.
//!
//! Signed `int<W>` values are held sign-extended to 128 bits (their two's complement), so `+`,
//! `-`, `*`, `~`, `&`, `|`, `^` and `<<` need nothing else; the few operators whose result
//! depends on the sign (`<`, `<=`, `>`, `>=`, `>>`) get their signed form when compiled, from
//! the operand types (signed fields, `two_comp_mod`, `sat_cast`), never per packet.

pub(crate) mod stack_index;

use crate::json::{self, err, R};
use crate::layout::{FieldLoc, FieldRef, Layout};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Shl,
    Shr,
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
    And,
    Or,
    BitAnd,
    BitOr,
    BitXor,
    /// Signed comparisons and arithmetic shift right (operands of type int<W>).
    SGt,
    SGe,
    SLt,
    SLe,
    Sar,
}

#[derive(Debug, Clone)]
pub enum Expr {
    Const(u128),
    /// A negative constant ("-0x1"), its 128-bit two's complement: a signed operand.
    SConst(u128),
    Field {
        word: u32,
    },
    /// A 65..=128-bit field: two words, most significant first.
    Field2 {
        word: u32,
    },
    Valid(u32),
    /// A header union's `isValid()`: whether any of these members is valid.
    ValidUnion(Box<[u32]>),
    Param {
        word: u32,
    },
    /// A 65..=128-bit action parameter: two words, most significant first.
    Param2 {
        word: u32,
    },
    /// Bits of the packet not yet extracted, relative to the parser cursor.
    Lookahead {
        bit_off: u32,
        width: u32,
    },
    /// A field of a stack's last element (`stack.last.field`): its word in every element.
    StackLast {
        stack: u32,
        words: Box<[u32]>,
    },
    Not(Box<Expr>),
    BitNot(Box<Expr>),
    D2b(Box<Expr>),
    /// Unsigned saturating cast to a width (p4c's `|+|` and `|-|`): the value of a `+` or `-`
    /// of at most 64-bit operands, a negative result (wrapped past 2^127) clamped to 0.
    USat(Box<Expr>, u32),
    /// bmv2's `two_comp_mod(v, W)`: the low W bits read as int<W>, sign-extended to 128 bits
    /// (also how a signed field is read).
    Signed(Box<Expr>, u32),
    /// Signed saturating cast to int<W> (p4c's `|+|` and `|-|` on int<W>): the value, read as
    /// a 128-bit signed number, clamped to [-2^(W-1), 2^(W-1) - 1].
    SSat(Box<Expr>, u32),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A field of a header stack element chosen at run time (crates/p4/src/expr/stack_index.rs).
    ElementField(Box<stack_index::ElementField>),
    /// `isValid()` of a header stack element chosen at run time.
    ElementValid(Box<stack_index::Element>),
    /// `==` (or, with `true`, `!=`) of two varbit fields: length and value.
    VarbitEq(Box<(crate::varbit::VarRef, crate::varbit::VarRef)>, bool),
}

/// Per-packet inputs an expression may read.
pub struct Env<'a> {
    pub w: &'a [u64],
    pub valid: &'a [bool],
    pub params: &'a [u64],
    /// Unparsed packet bytes from the parser cursor (empty outside the parser).
    pub look: &'a [u8],
    /// Next index of every header stack (`last` is one before it).
    pub stack_next: &'a [u32],
}

/// What an expression may refer to where it is compiled.
pub struct Scope<'a> {
    pub layout: &'a Layout,
    /// Widths and word offsets of the enclosing action's parameters.
    pub params: &'a [(u32, u32)],
    pub lookahead: bool,
}

impl Scope<'_> {
    pub fn param(&self, v: &Value, ctx: &str) -> R<(u32, u32)> {
        let i = json::as_u64(v, ctx)? as usize;
        match self.params.get(i) {
            Some(p) => Ok(*p),
            None => err(ctx, format!("runtime_data index {i} out of range")),
        }
    }
}

/// Widest value expressions compute with.
pub const MAX_BITS: u32 = 128;

fn field_expr(f: FieldRef, signed: bool, ctx: &str) -> R<Expr> {
    let e = match f.width {
        0..=64 => Expr::Field { word: f.word },
        65..=MAX_BITS => Expr::Field2 { word: f.word },
        w => {
            return err(
                ctx,
                format!("arithmetic on a {w}-bit field not supported (max {MAX_BITS})"),
            )
        }
    };
    Ok(if signed {
        Expr::Signed(Box::new(e), f.width)
    } else {
        e
    })
}

/// A constant width operand (`two_comp_mod`, `sat_cast`, `usat_cast`) within `lo..=hi`.
fn width_operand(v: &Value, s: &Scope, ctx: &str, what: &str, lo: u32, hi: u32) -> R<u32> {
    match *operand(v, "right", s, ctx)? {
        Expr::Const(w) if (u128::from(lo)..=u128::from(hi)).contains(&w) => Ok(w as u32),
        _ => err(
            ctx,
            format!("{what} needs a constant width of {lo} to {hi} bits"),
        ),
    }
}

pub fn compile(v: &Value, s: &Scope, ctx: &str) -> R<Expr> {
    let ty = json::str_(v, "type", ctx)?;
    let val = json::get(v, "value", ctx)?;
    match ty {
        "field" => match s.layout.resolve(val, ctx)? {
            FieldLoc::Field(f) => field_expr(f, s.layout.is_signed(f), ctx),
            FieldLoc::Valid(h) => Ok(Expr::Valid(h)),
        },
        "hexstr" => {
            let text = json::as_str(val, ctx)?;
            let c = json::hex_u128(text, ctx)?;
            Ok(if text.starts_with('-') {
                Expr::SConst(c)
            } else {
                Expr::Const(c)
            })
        }
        "bool" => match val.as_bool() {
            Some(b) => Ok(Expr::Const(u128::from(b))),
            None => err(ctx, "bool value must be true or false"),
        },
        "runtime_data" | "local" => {
            let (width, word) = s.param(val, ctx)?;
            match width {
                0..=64 => Ok(Expr::Param { word }),
                65..=MAX_BITS => Ok(Expr::Param2 { word }),
                _ => err(
                    ctx,
                    format!("arithmetic on a {width}-bit parameter not supported"),
                ),
            }
        }
        "lookahead" if s.lookahead => {
            let p = val.as_array().map(Vec::as_slice).unwrap_or(&[]);
            let (Some(off), Some(w)) = (
                p.first().and_then(Value::as_u64),
                p.get(1).and_then(Value::as_u64),
            ) else {
                return err(ctx, "lookahead must be [offset, bitwidth]");
            };
            if w == 0 || w > u64::from(MAX_BITS) || off > 65536 {
                return err(ctx, format!("lookahead of {w} bits at {off} not supported"));
            }
            Ok(Expr::Lookahead {
                bit_off: off as u32,
                width: w as u32,
            })
        }
        "stack_field" => {
            let (stack, words, width) = s.layout.stack_field(val, ctx)?;
            if width > 64 {
                return err(
                    ctx,
                    format!("arithmetic on a {width}-bit field not supported (max 64)"),
                );
            }
            let signed = s.layout.stacks[stack as usize]
                .headers
                .first()
                .and_then(|h| {
                    s.layout.headers[*h as usize]
                        .fields
                        .iter()
                        .find(|f| f.word == words[0])
                })
                .is_some_and(|f| f.signed);
            let e = Expr::StackLast { stack, words };
            Ok(if signed {
                Expr::Signed(Box::new(e), width)
            } else {
                e
            })
        }
        "expression" => compile_op(val, s, ctx),
        other => err(
            ctx,
            format!("expression type \"{other}\" not supported here"),
        ),
    }
}

fn operand(v: &Value, key: &str, s: &Scope, ctx: &str) -> R<Box<Expr>> {
    match json::opt(v, key) {
        Some(x) => Ok(Box::new(compile(x, s, ctx)?)),
        None => err(ctx, format!("operator is missing \"{key}\"")),
    }
}

fn compile_op(v: &Value, s: &Scope, ctx: &str) -> R<Expr> {
    // p4c wraps action parameters as {"type":"expression","value":{"type":"expression",...}}
    if v.get("op").is_none() && v.get("type").is_some() {
        return compile(v, s, ctx);
    }
    let op = json::str_(v, "op", ctx)?;
    let bin = match op {
        "+" => Some(BinOp::Add),
        "-" => Some(BinOp::Sub),
        "*" => Some(BinOp::Mul),
        "/" => Some(BinOp::Div),
        "%" => Some(BinOp::Mod),
        "<<" => Some(BinOp::Shl),
        ">>" => Some(BinOp::Shr),
        "==" => Some(BinOp::Eq),
        "!=" => Some(BinOp::Ne),
        ">" => Some(BinOp::Gt),
        ">=" => Some(BinOp::Ge),
        "<" => Some(BinOp::Lt),
        "<=" => Some(BinOp::Le),
        "and" => Some(BinOp::And),
        "or" => Some(BinOp::Or),
        "&" => Some(BinOp::BitAnd),
        "|" => Some(BinOp::BitOr),
        "^" => Some(BinOp::BitXor),
        _ => None,
    };
    if let (Some(BinOp::Eq | BinOp::Ne), Some(pair)) = (bin, varbit_pair(v, s, ctx)?) {
        return Ok(Expr::VarbitEq(Box::new(pair), bin == Some(BinOp::Ne)));
    }
    if let Some(b) = bin {
        // bmv2's unary minus is "-" without a left operand: 0 - right
        let l = match (b, json::opt(v, "left")) {
            (BinOp::Sub, None) => Box::new(Expr::Const(0)),
            _ => operand(v, "left", s, ctx)?,
        };
        let r = operand(v, "right", s, ctx)?;
        // the signed forms, chosen once here from the operand types
        let b = match b {
            BinOp::Gt | BinOp::Ge | BinOp::Lt | BinOp::Le if l.signed() || r.signed() => match b {
                BinOp::Gt => BinOp::SGt,
                BinOp::Ge => BinOp::SGe,
                BinOp::Lt => BinOp::SLt,
                _ => BinOp::SLe,
            },
            BinOp::Shr if l.signed() => BinOp::Sar,
            b => b,
        };
        return Ok(Expr::Bin(b, l, r));
    }
    match op {
        "not" => Ok(Expr::Not(operand(v, "right", s, ctx)?)),
        "~" => Ok(Expr::BitNot(operand(v, "right", s, ctx)?)),
        "d2b" => Ok(Expr::D2b(operand(v, "right", s, ctx)?)),
        "usat_cast" => {
            let width = width_operand(v, s, ctx, "usat_cast", 1, 64)?;
            Ok(Expr::USat(operand(v, "left", s, ctx)?, width))
        }
        "sat_cast" => {
            let width = width_operand(v, s, ctx, "sat_cast", 2, 64)?;
            Ok(Expr::SSat(operand(v, "left", s, ctx)?, width))
        }
        "two_comp_mod" => {
            let width = width_operand(v, s, ctx, "two_comp_mod", 1, MAX_BITS)?;
            Ok(Expr::Signed(operand(v, "left", s, ctx)?, width))
        }
        "b2d" => Ok(*operand(v, "right", s, ctx)?),
        "?" => Ok(Expr::Cond(
            operand(v, "cond", s, ctx)?,
            operand(v, "left", s, ctx)?,
            operand(v, "right", s, ctx)?,
        )),
        "access_field" => stack_index::field_expr(v, s, ctx),
        "valid" if stack_index::is_element(json::get(v, "right", ctx)?) => {
            stack_index::valid_expr(json::get(v, "right", ctx)?, s, ctx)
        }
        "valid" => {
            let r = json::get(v, "right", ctx)?;
            if json::str_(r, "type", ctx)? != "header" {
                return err(ctx, "operator \"valid\" needs a header operand");
            }
            let h = json::as_str(json::get(r, "value", ctx)?, ctx)?;
            Ok(Expr::Valid(s.layout.header(h, ctx)?))
        }
        "valid_union" => {
            let u = crate::union::operand(json::get(v, "right", ctx)?, s.layout, ctx)?;
            let members = s.layout.unions[u as usize].members.clone();
            Ok(Expr::ValidUnion(members.into()))
        }
        other => err(
            ctx,
            format!("expression operator \"{other}\" not supported"),
        ),
    }
}

/// Both operands of a comparison when they are varbit fields.
fn varbit_pair(
    v: &Value,
    s: &Scope,
    ctx: &str,
) -> R<Option<(crate::varbit::VarRef, crate::varbit::VarRef)>> {
    let side = |key: &str| -> R<Option<crate::varbit::VarRef>> {
        let Some(x) = json::opt(v, key) else {
            return Ok(None);
        };
        if json::opt_str(x, "type", ctx)? != Some("field") {
            return Ok(None);
        }
        match s.layout.resolve(json::get(x, "value", ctx)?, ctx)? {
            FieldLoc::Field(f) => Ok(s.layout.varbit_of(f)),
            FieldLoc::Valid(_) => Ok(None),
        }
    };
    Ok(match (side("left")?, side("right")?) {
        (Some(a), Some(b)) => Some((a, b)),
        (None, None) => None,
        _ => {
            return err(
                ctx,
                "a varbit field compares only with another varbit field",
            )
        }
    })
}

/// `v`'s low `w` bits as a two's complement number, sign-extended to 128 bits.
#[inline]
fn sign_extend(v: u128, w: u32) -> u128 {
    let k = MAX_BITS - w.min(MAX_BITS);
    (((v << k) as i128) >> k) as u128
}

impl Expr {
    /// Whether the value is of a signed type (int<W>), as bmv2 reads it: a signed field,
    /// `two_comp_mod`, `sat_cast`, or an operator whose result is negative whenever its
    /// operands' are, or a negative constant ("-0x1").
    pub fn signed(&self) -> bool {
        match self {
            Expr::Signed(..) | Expr::SSat(..) => true,
            Expr::SConst(_) => true,
            Expr::BitNot(a) => a.signed(),
            Expr::Cond(_, a, b) => a.signed() || b.signed(),
            Expr::Bin(op, a, b) => match op {
                BinOp::Add
                | BinOp::Sub
                | BinOp::Mul
                | BinOp::Shl
                | BinOp::BitOr
                | BinOp::BitXor => a.signed() || b.signed(),
                // a mask (p4c's cast of an int<W> to bit<W>) makes the value non-negative
                BinOp::BitAnd => a.signed() && b.signed(),
                BinOp::Sar => true,
                _ => false,
            },
            _ => false,
        }
    }

    /// The value truncated to 64 bits (what every narrow destination takes).
    #[inline]
    pub fn eval(&self, e: &Env) -> u64 {
        // leaves first: most action sources are a parameter, a field or a constant
        match self {
            Expr::Field { word } => e.w[*word as usize],
            Expr::Param { word } => e.params.get(*word as usize).copied().unwrap_or(0),
            Expr::Const(c) => *c as u64,
            Expr::Valid(h) => u64::from(e.valid[*h as usize]),
            _ => self.eval128(e) as u64,
        }
    }

    #[inline]
    pub fn eval128(&self, e: &Env) -> u128 {
        let two = |w: &[u64], i: u32| -> u128 {
            let i = i as usize;
            (u128::from(w.get(i).copied().unwrap_or(0)) << 64)
                | u128::from(w.get(i + 1).copied().unwrap_or(0))
        };
        match self {
            Expr::Const(c) | Expr::SConst(c) => *c,
            Expr::Field { word } => u128::from(e.w[*word as usize]),
            Expr::Field2 { word } => two(e.w, *word),
            Expr::Valid(h) => u128::from(e.valid[*h as usize]),
            Expr::ValidUnion(m) => u128::from(crate::union::any_valid(e.valid, m)),
            Expr::Param { word } => u128::from(e.params.get(*word as usize).copied().unwrap_or(0)),
            Expr::Param2 { word } => two(e.params, *word),
            Expr::Lookahead { bit_off, width } => {
                let end = (*bit_off + *width) as usize;
                if end.div_ceil(8) > e.look.len() {
                    0 // callers check the packet is long enough before evaluating
                } else if *width <= 64 {
                    u128::from(crate::bits::read_bits(e.look, *bit_off as usize, *width))
                } else {
                    let hi_bits = *width - 64;
                    let hi = crate::bits::read_bits(e.look, *bit_off as usize, hi_bits);
                    let lo = crate::bits::read_bits(e.look, (*bit_off + hi_bits) as usize, 64);
                    (u128::from(hi) << 64) | u128::from(lo)
                }
            }
            Expr::StackLast { stack, words } => {
                // bmv2 refuses `last` of an empty stack; we read 0
                match e.stack_next.get(*stack as usize).copied().unwrap_or(0) {
                    0 => 0,
                    n => words
                        .get(n as usize - 1)
                        .map_or(0, |w| u128::from(e.w[*w as usize])),
                }
            }
            Expr::ElementField(f) => f.eval128(e),
            Expr::ElementValid(el) => u128::from(stack_index::is_valid(el, e)),
            Expr::Not(a) => u128::from(a.eval128(e) == 0),
            Expr::BitNot(a) => !a.eval128(e),
            Expr::D2b(a) => u128::from(a.eval128(e) != 0),
            Expr::USat(a, width) => {
                let v = a.eval128(e);
                if v >> 127 != 0 {
                    0
                } else {
                    v.min(u128::from(crate::bits::mask(*width)))
                }
            }
            Expr::Signed(a, width) => sign_extend(a.eval128(e), *width),
            Expr::SSat(a, width) => {
                let v = a.eval128(e) as i128;
                let hi = (1i128 << (*width - 1)) - 1;
                v.clamp(-hi - 1, hi) as u128
            }
            Expr::VarbitEq(ab, ne) => u128::from(ab.0.equals(&ab.1, e.w) != *ne),
            Expr::Cond(c, a, b) => {
                if c.eval128(e) != 0 {
                    a.eval128(e)
                } else {
                    b.eval128(e)
                }
            }
            Expr::Bin(op, a, b) => {
                // short-circuit boolean operators
                match op {
                    BinOp::And => return u128::from(a.eval128(e) != 0 && b.eval128(e) != 0),
                    BinOp::Or => return u128::from(a.eval128(e) != 0 || b.eval128(e) != 0),
                    _ => {}
                }
                let (x, y) = (a.eval128(e), b.eval128(e));
                match op {
                    BinOp::Add => x.wrapping_add(y),
                    BinOp::Sub => x.wrapping_sub(y),
                    BinOp::Mul => x.wrapping_mul(y),
                    BinOp::Div => x.checked_div(y).unwrap_or(0),
                    BinOp::Mod => x.checked_rem(y).unwrap_or(0),
                    BinOp::Shl => {
                        if y >= 128 {
                            0
                        } else {
                            x << y
                        }
                    }
                    BinOp::Shr => {
                        if y >= 128 {
                            0
                        } else {
                            x >> y
                        }
                    }
                    BinOp::Eq => u128::from(x == y),
                    BinOp::Ne => u128::from(x != y),
                    BinOp::Gt => u128::from(x > y),
                    BinOp::Ge => u128::from(x >= y),
                    BinOp::Lt => u128::from(x < y),
                    BinOp::Le => u128::from(x <= y),
                    BinOp::BitAnd => x & y,
                    BinOp::BitOr => x | y,
                    BinOp::BitXor => x ^ y,
                    BinOp::SGt => u128::from(x as i128 > y as i128),
                    BinOp::SGe => u128::from(x as i128 >= y as i128),
                    BinOp::SLt => u128::from((x as i128) < y as i128),
                    BinOp::SLe => u128::from(x as i128 <= y as i128),
                    BinOp::Sar => ((x as i128) >> y.min(127)) as u128,
                    BinOp::And | BinOp::Or => 0,
                }
            }
        }
    }

    /// Bits of lookahead this expression needs beyond the cursor (0 if none).
    pub fn lookahead_bits(&self) -> u32 {
        match self {
            Expr::Lookahead { bit_off, width } => bit_off + width,
            Expr::Not(a)
            | Expr::BitNot(a)
            | Expr::D2b(a)
            | Expr::USat(a, _)
            | Expr::Signed(a, _)
            | Expr::SSat(a, _) => a.lookahead_bits(),
            Expr::Bin(_, a, b) => a.lookahead_bits().max(b.lookahead_bits()),
            Expr::Cond(c, a, b) => c
                .lookahead_bits()
                .max(a.lookahead_bits())
                .max(b.lookahead_bits()),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests;

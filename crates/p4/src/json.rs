//! Small helpers to walk bmv2 JSON (`serde_json::Value`) with errors naming the object.

use crate::error::LoadError;
use serde_json::Value;

pub type R<T> = Result<T, LoadError>;

pub fn err<T>(ctx: &str, msg: impl Into<String>) -> R<T> {
    Err(LoadError::new(ctx, msg))
}

pub fn get<'a>(v: &'a Value, key: &str, ctx: &str) -> R<&'a Value> {
    match v {
        Value::Object(m) => match m.get(key) {
            Some(x) => Ok(x),
            None => err(ctx, format!("missing \"{key}\"")),
        },
        _ => err(ctx, "expected a JSON object"),
    }
}

/// `None` when the key is absent or null.
pub fn opt<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    match v.get(key) {
        None | Some(Value::Null) => None,
        Some(x) => Some(x),
    }
}

pub fn arr<'a>(v: &'a Value, key: &str, ctx: &str) -> R<&'a [Value]> {
    match get(v, key, ctx)? {
        Value::Array(a) => Ok(a),
        _ => err(ctx, format!("\"{key}\" must be an array")),
    }
}

/// Array that may be absent or null (treated as empty).
pub fn arr_or_empty<'a>(v: &'a Value, key: &str, ctx: &str) -> R<&'a [Value]> {
    match opt(v, key) {
        None => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(_) => err(ctx, format!("\"{key}\" must be an array")),
    }
}

pub fn str_<'a>(v: &'a Value, key: &str, ctx: &str) -> R<&'a str> {
    match get(v, key, ctx)? {
        Value::String(s) => Ok(s),
        _ => err(ctx, format!("\"{key}\" must be a string")),
    }
}

pub fn opt_str<'a>(v: &'a Value, key: &str, ctx: &str) -> R<Option<&'a str>> {
    match opt(v, key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => err(ctx, format!("\"{key}\" must be a string or null")),
    }
}

pub fn u64_(v: &Value, key: &str, ctx: &str) -> R<u64> {
    as_u64(get(v, key, ctx)?, &format!("{ctx} \"{key}\""))
}

pub fn as_u64(v: &Value, ctx: &str) -> R<u64> {
    match v.as_u64() {
        Some(n) => Ok(n),
        None => err(ctx, "expected a non-negative integer"),
    }
}

pub fn as_str<'a>(v: &'a Value, ctx: &str) -> R<&'a str> {
    match v {
        Value::String(s) => Ok(s),
        _ => err(ctx, "expected a string"),
    }
}

pub fn bool_or(v: &Value, key: &str, default: bool, ctx: &str) -> R<bool> {
    match opt(v, key) {
        None => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => err(ctx, format!("\"{key}\" must be a boolean")),
    }
}

/// Name of an object for error messages: `kind[i] "name"`.
pub fn label(kind: &str, i: usize, v: &Value) -> String {
    match v.get("name").and_then(Value::as_str) {
        Some(n) => format!("{kind}[{i}] \"{n}\""),
        None => format!("{kind}[{i}]"),
    }
}

/// Parses a bmv2 hex string ("0x0800", "-0x1", "0800") into big-endian bytes (minimal, >= 1)
/// and a sign.
pub fn parse_hex(s: &str, ctx: &str) -> R<(bool, Vec<u8>)> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let body = body
        .strip_prefix("0x")
        .or_else(|| body.strip_prefix("0X"))
        .unwrap_or(body);
    if body.is_empty() || !body.bytes().all(|c| c.is_ascii_hexdigit()) {
        return err(ctx, format!("bad hex string \"{s}\""));
    }
    let digits: Vec<u8> = body
        .bytes()
        .map(|c| (c as char).to_digit(16).unwrap_or(0) as u8)
        .collect();
    let mut out = Vec::with_capacity(digits.len().div_ceil(2));
    let odd = digits.len() % 2 == 1;
    let mut i = 0;
    if odd {
        out.push(digits[0]);
        i = 1;
    }
    while i + 1 < digits.len() {
        out.push((digits[i] << 4) | digits[i + 1]);
        i += 2;
    }
    let first = out.iter().position(|b| *b != 0).unwrap_or(out.len() - 1);
    Ok((neg, out[first..].to_vec()))
}

/// Hex string to u64 (two's complement for negatives); refuses values over 64 bits.
pub fn hex_u64(s: &str, ctx: &str) -> R<u64> {
    let (neg, bytes) = parse_hex(s, ctx)?;
    if bytes.len() > 8 {
        return err(
            ctx,
            format!("constant {s} wider than 64 bits in arithmetic"),
        );
    }
    let v = bytes.iter().fold(0u64, |a, b| (a << 8) | u64::from(*b));
    Ok(if neg { v.wrapping_neg() } else { v })
}

/// Hex string to u128 (two's complement for negatives); refuses values over 128 bits.
pub fn hex_u128(s: &str, ctx: &str) -> R<u128> {
    let (neg, bytes) = parse_hex(s, ctx)?;
    if bytes.len() > 16 {
        return err(
            ctx,
            format!("constant {s} wider than 128 bits in arithmetic"),
        );
    }
    let v = bytes.iter().fold(0u128, |a, b| (a << 8) | u128::from(*b));
    Ok(if neg { v.wrapping_neg() } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex() {
        assert_eq!(parse_hex("0x0800", "x").unwrap(), (false, vec![8, 0]));
        assert_eq!(parse_hex("0x000", "x").unwrap(), (false, vec![0]));
        assert_eq!(parse_hex("0xabc", "x").unwrap(), (false, vec![0x0a, 0xbc]));
        assert_eq!(hex_u64("-0x1", "x").unwrap(), u64::MAX);
        assert!(parse_hex("0xzz", "x").is_err());
        assert!(hex_u64("0x1ffffffffffffffff", "x").is_err());
    }
}

//! v1model's `log_msg(format, {values})` (bmv2's `log_msg` primitive): each `{}` of the format
//! is replaced by the next value in decimal, `\{` and `\}` stand for the braces themselves, and
//! the line goes to the switch's log at info level. With no log set up it costs nothing but
//! the op's dispatch.

use crate::expr::{self, Env, Expr, Scope};
use crate::json::{self, err, R};
use serde_json::Value;

/// One compiled `log_msg` call.
#[derive(Debug, Clone)]
pub struct LogMsg {
    format: Box<str>,
    values: Box<[Expr]>,
}

impl LogMsg {
    /// From the primitive's parameters: the format string and (optionally) its values.
    pub fn compile(ps: &[Value], s: &Scope, ctx: &str) -> R<LogMsg> {
        let (Some(f), 1..=2) = (ps.first(), ps.len()) else {
            return err(ctx, "log_msg takes a format string and a vector of values");
        };
        if json::str_(f, "type", ctx)? != "string" {
            return err(ctx, "log_msg's first parameter must be a string");
        }
        let format = json::as_str(json::get(f, "value", ctx)?, ctx)?;
        let mut values = Vec::new();
        if let Some(v) = ps.get(1) {
            // p4c writes {} for a call without values
            if let Some(items) = v.get("value").and_then(Value::as_array) {
                for it in items {
                    values.push(expr::compile(it, s, ctx)?);
                }
            }
        }
        let slots = placeholders(format);
        if slots != values.len() {
            return err(
                ctx,
                format!(
                    "log_msg's format has {slots} {{}} but {} value(s) are given",
                    values.len()
                ),
            );
        }
        Ok(LogMsg {
            format: format.into(),
            values: values.into_boxed_slice(),
        })
    }

    /// The message with the values read from `env`.
    pub fn render(&self, env: &Env) -> String {
        let values: Vec<u128> = self.values.iter().map(|e| e.eval128(env)).collect();
        substitute(&self.format, &values)
    }
}

/// How many `{...}` placeholders `format` has (a brace after a backslash is not one).
fn placeholders(format: &str) -> usize {
    let mut n = 0;
    let b = format.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'{' && (i == 0 || b[i - 1] != b'\\') {
            if let Some(end) = closing(b, i) {
                n += 1;
                i = end;
            }
        }
        i += 1;
    }
    n
}

/// The index of the `}` closing the `{` at `open` (one after a backslash does not close).
fn closing(b: &[u8], open: usize) -> Option<usize> {
    (open + 1..b.len()).find(|&k| b[k] == b'}' && b[k - 1] != b'\\')
}

/// `format` with its placeholders replaced by `values` in decimal, in order, and the escaped
/// braces unescaped.
fn substitute(format: &str, values: &[u128]) -> String {
    let b = format.as_bytes();
    let mut out = String::with_capacity(format.len() + 8 * values.len());
    let mut next = values.iter();
    let (mut i, mut from) = (0, 0);
    while i < b.len() {
        if b[i] == b'{' && (i == 0 || b[i - 1] != b'\\') {
            if let Some(end) = closing(b, i) {
                out.push_str(&format[from..i]);
                if let Some(v) = next.next() {
                    out.push_str(&v.to_string());
                }
                i = end + 1;
                from = i;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&format[from..]);
    out.replace("\\{", "{").replace("\\}", "}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_take_the_values_in_decimal_in_order() {
        assert_eq!(substitute("a={} b={}", &[10, 255]), "a=10 b=255");
        assert_eq!(substitute("{}", &[7]), "7");
        assert_eq!(substitute("no values", &[]), "no values");
        // what is between the braces does not matter
        assert_eq!(substitute("x={x} y", &[3]), "x=3 y");
        assert_eq!(
            substitute("big {}", &[u128::from(u64::MAX) + 1]),
            "big 18446744073709551616"
        );
    }

    #[test]
    fn escaped_braces_are_text() {
        assert_eq!(placeholders("\\{not\\} {}"), 1);
        assert_eq!(substitute("\\{not\\} {}", &[1]), "{not} 1");
        assert_eq!(placeholders("open { only"), 0);
        assert_eq!(substitute("open { only", &[]), "open { only");
    }
}

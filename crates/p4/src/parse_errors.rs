//! The parser's error codes: the values the program's `errors` list gives bmv2's core errors.

use crate::json::{self, err, R};
use serde_json::Value;

/// Parser error codes (values from the program's `errors` list).
#[derive(Debug, Clone, Copy)]
pub struct ErrorCodes {
    /// `standard_metadata.parser_error` after a parse without error (0 in today's p4c output,
    /// 1 in older output that numbers errors from 1).
    pub no_error: u32,
    pub packet_too_short: u32,
    pub no_match: u32,
    pub stack_out_of_bounds: u32,
    pub header_too_short: u32,
    pub parser_timeout: u32,
    pub invalid_argument: u32,
}

impl ErrorCodes {
    pub fn load(root: &Value) -> R<(ErrorCodes, Vec<(String, u32)>)> {
        let mut list = Vec::new();
        for (i, e) in json::arr_or_empty(root, "errors", "top level")?
            .iter()
            .enumerate()
        {
            let ctx = format!("errors[{i}]");
            let p = e.as_array().map(Vec::as_slice).unwrap_or(&[]);
            match (
                p.first().and_then(Value::as_str),
                p.get(1).and_then(Value::as_u64),
            ) {
                (Some(n), Some(v)) if v <= u64::from(u32::MAX) => {
                    list.push((n.to_string(), v as u32))
                }
                _ => return err(&ctx, "error must be [name, value]"),
            }
        }
        let find = |n: &str, d: u32| list.iter().find(|(x, _)| x == n).map_or(d, |x| x.1);
        Ok((
            ErrorCodes {
                no_error: find("NoError", 0),
                packet_too_short: find("PacketTooShort", 1),
                no_match: find("NoMatch", 2),
                stack_out_of_bounds: find("StackOutOfBounds", 3),
                header_too_short: find("HeaderTooShort", 4),
                parser_timeout: find("ParserTimeout", 5),
                invalid_argument: find("ParserInvalidArgument", 6),
            },
            list,
        ))
    }
}

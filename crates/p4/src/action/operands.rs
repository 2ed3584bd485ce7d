//! Operands of primitives that name program objects in the JSON: field lists and extern
//! instances.

use crate::action::Names;
use crate::json::{self, err, R};
use serde_json::Value;
use std::collections::HashMap;

/// A field list id parameter (a constant; p4c passes 0 when no field list is kept) as index + 1
/// in the program's field lists, 0 for none.
pub(crate) fn field_list_param(v: Option<&Value>, names: &Names, ctx: &str) -> R<u32> {
    let Some(v) = v else {
        return Ok(0);
    };
    if json::str_(v, "type", ctx)? != "hexstr" {
        return err(ctx, "the field list id must be a constant");
    }
    let id = json::hex_u64(json::as_str(json::get(v, "value", ctx)?, ctx)?, ctx)?;
    match names.field_lists.get(&id) {
        Some(i) => Ok(*i),
        None if id == 0 => Ok(0),
        None => err(ctx, format!("unknown field list id {id}")),
    }
}

pub(crate) fn extern_index(map: &HashMap<String, u32>, v: &Value, kind: &str, ctx: &str) -> R<u32> {
    if json::str_(v, "type", ctx)? != kind {
        return err(ctx, format!("expected a {kind} operand"));
    }
    let n = json::as_str(json::get(v, "value", ctx)?, ctx)?;
    match map.get(n) {
        Some(i) => Ok(*i),
        None => err(ctx, format!("unknown {kind} \"{n}\"")),
    }
}

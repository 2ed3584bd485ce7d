//! Operands of primitives as the loader reads them from the JSON: field lists, extern
//! instances, headers and fields by name.

use crate::action::Names;
use crate::json::{self, err, R};
use crate::layout::{FieldRef, Layout};
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

/// Wire bytes of header `h` (0 for metadata: its validity is not in the packet's length).
pub(crate) fn wire_bytes(l: &Layout, h: u32) -> i32 {
    let info = &l.headers[h as usize];
    if info.metadata {
        0
    } else {
        (info.bits / 8) as i32
    }
}

pub(crate) fn header_operand(v: &Value, l: &Layout, ctx: &str) -> R<u32> {
    if json::str_(v, "type", ctx)? != "header" {
        return err(ctx, "expected a header operand");
    }
    l.header(json::as_str(json::get(v, "value", ctx)?, ctx)?, ctx)
}

pub(crate) fn field_operand(v: &Value, l: &Layout, ctx: &str) -> R<FieldRef> {
    if json::str_(v, "type", ctx)? != "field" {
        return err(ctx, "expected a field operand");
    }
    l.resolve_field(json::get(v, "value", ctx)?, ctx)
}

pub(crate) fn narrow(f: FieldRef, ctx: &str) -> R<FieldRef> {
    if f.is_wide() {
        return err(
            ctx,
            format!("{}-bit field here not supported (max 64)", f.width),
        );
    }
    Ok(f)
}

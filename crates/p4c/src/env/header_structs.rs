//! A header field of a struct type (`header h_t { row_t row; }`, the struct's fields all
//! bit-strings): the header is laid out with the struct's fields in its place, named as p4c's
//! midend names them (`_row_e0`, `_row_t1`, ...: the field, the member, the running count of
//! such fields in the header), and `hdr.h.row.e` reads or writes that field.

use crate::ast::Field;
use crate::diag::{fail, Res};
use crate::env::{Env, FieldTy, Ty};

/// Appends the fields of struct `s` (the type of header field `f`) to `out`, flattened.
pub fn expand(env: &Env, f: &Field, s: &str, out: &mut Vec<FieldTy>) -> Res<()> {
    let Some(members) = env.structs.get(s) else {
        return fail(
            f.loc,
            format!("header field '{}': struct {s} is not declared", f.name),
        );
    };
    let first = out.iter().filter(|o| is_flattened(&o.name)).count();
    for (k, m) in (first..).zip(members) {
        if !matches!(m.ty, Ty::Bit(_) | Ty::Int(_) | Ty::SerEnum(..) | Ty::Bool) {
            return fail(
                f.loc,
                format!(
                    "header field '{}' of struct type {s}: its field '{}' must be bit<W>, found {}",
                    f.name,
                    m.name,
                    m.ty.describe()
                ),
            );
        }
        out.push(FieldTy {
            name: format!("_{}_{}{k}", f.name, m.name),
            loc: f.loc,
            ..m.clone()
        });
    }
    Ok(())
}

/// Whether `name` is a flattened field's name (`_row_e0`).
fn is_flattened(name: &str) -> bool {
    name.starts_with('_') && name.ends_with(|c: char| c.is_ascii_digit())
}

/// Whether `name` is the flattened name of member `m` of header field `sf`.
pub(crate) fn flattens(name: &str, sf: &str, m: &str) -> bool {
    name.strip_prefix(&format!("_{sf}_{m}"))
        .is_some_and(|k| !k.is_empty() && k.chars().all(|c| c.is_ascii_digit()))
}

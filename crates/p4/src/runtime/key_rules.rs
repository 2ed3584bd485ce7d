//! An entry's match key from the fields a control plane names, and the rules each field's value
//! must follow. Every route into the tables (P4Runtime, bmv2's Thrift API, `lanes ctl`) checks
//! keys here, so a rule has one home; the routes differ only in which rules they ask for.
//!
//! P4Runtime asks for its canonical form: a value fits its field's width and is not empty, an
//! lpm value has no bits past its prefix, a ternary value none outside its mask, a range's low
//! bound is not above its high one, a table with a ternary, range or optional field takes a
//! priority above 0 and any other table a priority of 0, and a field left out is a wildcard
//! (except an exact one). bmv2's routes name every field, and the bits past a prefix or outside
//! a mask are masked off, as bmv2 does.

use crate::error::ApiError;
use crate::table::{MatchKey, MatchKind, Structure, Table};

/// Which rules a key is held to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyRules {
    /// P4Runtime's canonical form (module docs).
    P4Runtime,
    /// bmv2's: every field given, values masked as they are stored.
    Bmv2,
}

/// One field of a match key: its position in the table's key and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldMatch {
    pub field: u32,
    pub key: MatchKey,
}

/// The table's full key, in its field order, from the fields given; each value checked under
/// `rules`.
pub(crate) fn assemble(
    table: &Table,
    fields: &[FieldMatch],
    rules: KeyRules,
) -> Result<Vec<MatchKey>, ApiError> {
    if rules == KeyRules::Bmv2 && fields.len() != table.keys.len() {
        return Err(ApiError::BadKey(format!(
            "table {} has {} key fields, got {}",
            table.name,
            table.keys.len(),
            fields.len()
        )));
    }
    let mut slots: Vec<Option<MatchKey>> = vec![None; table.keys.len()];
    for f in fields {
        let Some(slot) = slots.get_mut(f.field as usize) else {
            return Err(ApiError::BadKey(format!(
                "table {} has no key field {}",
                table.name, f.field
            )));
        };
        if slot.is_some() {
            return Err(ApiError::BadKey(format!(
                "table {}: match field {} given twice",
                table.name, table.keys[f.field as usize].name
            )));
        }
        if rules == KeyRules::P4Runtime {
            check_canonical(table, f)?;
        }
        *slot = Some(f.key.clone());
    }
    slots
        .into_iter()
        .zip(&table.keys)
        .map(|(slot, kf)| match slot {
            Some(k) => Ok(k),
            None => wildcard(kf.kind, kf.width).ok_or_else(|| {
                ApiError::BadKey(format!(
                    "table {} field {}: exact match field missing",
                    table.name, kf.name
                ))
            }),
        })
        .collect()
}

/// The value of a field left out of a P4Runtime key: matches anything (None for exact).
fn wildcard(kind: MatchKind, width: u32) -> Option<MatchKey> {
    Some(match kind {
        MatchKind::Exact => return None,
        MatchKind::Lpm => MatchKey::Lpm(vec![0], 0),
        MatchKind::Ternary => MatchKey::Ternary(vec![0], vec![0]),
        MatchKind::Range => MatchKey::Range(vec![0], all_ones(width)),
        MatchKind::Optional => MatchKey::Optional(None),
    })
}

fn all_ones(width: u32) -> Vec<u8> {
    let n = width.div_ceil(8) as usize;
    let mut v = vec![0xff; n.max(1)];
    if !width.is_multiple_of(8) {
        v[0] = (1u8 << (width % 8)) - 1;
    }
    v
}

/// P4Runtime's checks of one field's value (module docs).
pub(crate) fn check_canonical(table: &Table, f: &FieldMatch) -> Result<(), ApiError> {
    let Some(kf) = table.keys.get(f.field as usize) else {
        return Err(ApiError::BadKey(format!(
            "table {} has no key field {}",
            table.name, f.field
        )));
    };
    let what = format!("table {} field {}", table.name, kf.name);
    let bad = |m: String| Err(ApiError::BadKey(m));
    let fits = |v: &[u8], part: &str| -> Result<(), ApiError> {
        if v.is_empty() {
            return bad(format!("{what}{part}: empty value"));
        }
        if bit_len(v) > kf.width {
            return bad(format!(
                "{what}{part}: value {} does not fit in {} bits",
                hex(v),
                kf.width
            ));
        }
        Ok(())
    };
    match &f.key {
        MatchKey::Exact(v) | MatchKey::Optional(Some(v)) => fits(v, ""),
        MatchKey::Optional(None) => Ok(()),
        MatchKey::Lpm(v, plen) => {
            if *plen > kf.width {
                return bad(format!(
                    "{what}: prefix length {plen} out of range 0-{}",
                    kf.width
                ));
            }
            fits(v, "")?;
            if low_bits_set(v, kf.width - plen) {
                return bad(format!("{what}: bits beyond the /{plen} prefix are set"));
            }
            Ok(())
        }
        MatchKey::Ternary(v, m) => {
            fits(v, "")?;
            fits(m, " mask")?;
            if set_outside(v, m) {
                return bad(format!("{what}: value has bits set outside the mask"));
            }
            Ok(())
        }
        MatchKey::Range(lo, hi) => {
            fits(lo, " low")?;
            fits(hi, " high")?;
            if above(lo, hi) {
                return bad(format!("{what}: low bound above high bound"));
            }
            Ok(())
        }
    }
}

/// P4Runtime's priority rule: above 0 in a table with a ternary, range or optional field,
/// 0 in any other.
pub(crate) fn check_priority(table: &Table, priority: i32) -> Result<(), ApiError> {
    if table.structure == Structure::Ternary {
        if priority <= 0 {
            return Err(ApiError::BadKey(format!(
                "table {} needs a priority > 0 (ternary/range/optional match)",
                table.name
            )));
        }
    } else if priority != 0 {
        return Err(ApiError::BadKey(format!(
            "table {} has no ternary/range/optional field: priority must be 0",
            table.name
        )));
    }
    Ok(())
}

fn hex(v: &[u8]) -> String {
    v.iter().map(|b| format!("{b:02x}")).collect()
}

/// Bits a big-endian value needs (0 for zero).
fn bit_len(v: &[u8]) -> u32 {
    match v.iter().position(|b| *b != 0) {
        Some(i) => (v.len() - i - 1) as u32 * 8 + (8 - v[i].leading_zeros()),
        None => 0,
    }
}

/// Whether any of the `n` lowest bits of a big-endian value is set.
fn low_bits_set(v: &[u8], n: u32) -> bool {
    let mut left = n;
    for b in v.iter().rev() {
        if left == 0 {
            return false;
        }
        let m = if left >= 8 { 0xff } else { (1u8 << left) - 1 };
        if b & m != 0 {
            return true;
        }
        left = left.saturating_sub(8);
    }
    false
}

/// Whether `v` has a bit set where `m` has none (both big-endian, any lengths).
fn set_outside(v: &[u8], m: &[u8]) -> bool {
    let byte = |x: &[u8], i: usize| x.len().checked_sub(i + 1).map_or(0, |j| x[j]);
    (0..v.len().max(m.len())).any(|i| byte(v, i) & !byte(m, i) != 0)
}

/// Whether big-endian `a` is above `b` (any lengths).
fn above(a: &[u8], b: &[u8]) -> bool {
    let strip = |x: &[u8]| -> Vec<u8> { x.iter().copied().skip_while(|b| *b == 0).collect() };
    let (a, b) = (strip(a), strip(b));
    (a.len(), &a) > (b.len(), &b)
}

#[cfg(test)]
mod tests;

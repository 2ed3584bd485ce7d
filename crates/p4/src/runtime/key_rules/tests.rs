//! One test per key rule, on tables built here.

use super::*;
use crate::table::{KeyField, KeySrc};

fn field(name: &str, kind: MatchKind, width: u32, off: u32) -> KeyField {
    KeyField {
        name: name.into(),
        kind,
        src: KeySrc::Field { word: 0, width },
        width,
        off,
        len: width.div_ceil(8),
        mask: None,
    }
}

fn table(keys: Vec<KeyField>) -> Table {
    Table::new("ing.t".into(), 0, keys, vec![0], 16, false, None)
}

fn at(field: u32, key: MatchKey) -> FieldMatch {
    FieldMatch { field, key }
}

fn refused(t: &Table, fields: &[FieldMatch], rules: KeyRules) -> String {
    match assemble(t, fields, rules) {
        Err(ApiError::BadKey(m)) => m,
        other => panic!("expected a BadKey error, got {other:?}"),
    }
}

#[test]
fn a_value_wider_than_its_field_is_refused() {
    let t = table(vec![field("dst", MatchKind::Exact, 9, 0)]);
    let m = refused(
        &t,
        &[at(0, MatchKey::Exact(vec![2, 0]))],
        KeyRules::P4Runtime,
    );
    assert_eq!(
        m,
        "table ing.t field dst: value 0200 does not fit in 9 bits"
    );
    // 511 fits, with or without leading zero bytes
    assert!(assemble(
        &t,
        &[at(0, MatchKey::Exact(vec![1, 0xff]))],
        KeyRules::P4Runtime
    )
    .is_ok());
    assert!(assemble(
        &t,
        &[at(0, MatchKey::Exact(vec![0, 0, 7]))],
        KeyRules::P4Runtime
    )
    .is_ok());
    let m = refused(&t, &[at(0, MatchKey::Exact(vec![]))], KeyRules::P4Runtime);
    assert_eq!(m, "table ing.t field dst: empty value");
}

#[test]
fn an_lpm_prefix_longer_than_the_field_or_bits_past_it_are_refused() {
    let t = table(vec![field("ip", MatchKind::Lpm, 32, 0)]);
    let lpm = |v: Vec<u8>, p| [at(0, MatchKey::Lpm(v, p))];
    let m = refused(&t, &lpm(vec![10, 0, 0, 0], 33), KeyRules::P4Runtime);
    assert_eq!(
        m,
        "table ing.t field ip: prefix length 33 out of range 0-32"
    );
    let m = refused(&t, &lpm(vec![10, 0, 1, 0], 16), KeyRules::P4Runtime);
    assert_eq!(
        m,
        "table ing.t field ip: bits beyond the /16 prefix are set"
    );
    assert!(assemble(&t, &lpm(vec![10, 0, 0, 0], 16), KeyRules::P4Runtime).is_ok());
    assert!(assemble(&t, &lpm(vec![0], 0), KeyRules::P4Runtime).is_ok());
    // bmv2 masks them off instead
    assert!(assemble(&t, &lpm(vec![10, 0, 1, 0], 16), KeyRules::Bmv2).is_ok());
}

#[test]
fn a_ternary_value_outside_its_mask_is_refused() {
    let t = table(vec![field("type", MatchKind::Ternary, 16, 0)]);
    let tern = |v: Vec<u8>, m: Vec<u8>| [at(0, MatchKey::Ternary(v, m))];
    let m = refused(
        &t,
        &tern(vec![0x08, 0x01], vec![0xff, 0x00]),
        KeyRules::P4Runtime,
    );
    assert_eq!(
        m,
        "table ing.t field type: value has bits set outside the mask"
    );
    // a value longer than its mask, inside it
    assert!(assemble(&t, &tern(vec![0, 0x08], vec![0x0f]), KeyRules::P4Runtime).is_ok());
    let m = refused(&t, &tern(vec![0x08], vec![0x1, 0, 0]), KeyRules::P4Runtime);
    assert_eq!(
        m,
        "table ing.t field type mask: value 010000 does not fit in 16 bits"
    );
    assert!(assemble(&t, &tern(vec![0x08, 0x01], vec![0xff, 0]), KeyRules::Bmv2).is_ok());
}

#[test]
fn a_range_whose_low_bound_is_above_its_high_bound_is_refused() {
    let t = table(vec![field("port", MatchKind::Range, 16, 0)]);
    let range = |lo: Vec<u8>, hi: Vec<u8>| [at(0, MatchKey::Range(lo, hi))];
    let m = refused(&t, &range(vec![1, 0], vec![0xff]), KeyRules::P4Runtime);
    assert_eq!(m, "table ing.t field port: low bound above high bound");
    assert!(assemble(&t, &range(vec![0, 5], vec![5]), KeyRules::P4Runtime).is_ok());
    // the stored form refuses it too, under either rules
    let keys = assemble(&t, &range(vec![1, 0], vec![0xff]), KeyRules::Bmv2).unwrap();
    let mut t = t;
    assert!(matches!(
        t.insert(&keys, 0, vec![], 1),
        Err(ApiError::BadKey(_))
    ));
}

#[test]
fn priority_is_required_with_ternary_fields_and_forbidden_without() {
    let tern = table(vec![field("type", MatchKind::Ternary, 16, 0)]);
    let exact = table(vec![field("dst", MatchKind::Exact, 48, 0)]);
    assert_eq!(
        check_priority(&tern, 0).unwrap_err().to_string(),
        "table ing.t needs a priority > 0 (ternary/range/optional match)"
    );
    assert!(check_priority(&tern, -3).is_err());
    assert!(check_priority(&tern, 1).is_ok());
    assert_eq!(
        check_priority(&exact, 5).unwrap_err().to_string(),
        "table ing.t has no ternary/range/optional field: priority must be 0"
    );
    assert!(check_priority(&exact, 0).is_ok());
}

#[test]
fn a_field_given_twice_or_unknown_is_refused() {
    let t = table(vec![
        field("dst", MatchKind::Exact, 48, 0),
        field("type", MatchKind::Ternary, 16, 6),
    ]);
    let dst = MatchKey::Exact(vec![1]);
    let m = refused(
        &t,
        &[at(0, dst.clone()), at(0, dst.clone())],
        KeyRules::P4Runtime,
    );
    assert_eq!(m, "table ing.t: match field dst given twice");
    let m = refused(&t, &[at(2, dst.clone())], KeyRules::P4Runtime);
    assert_eq!(m, "table ing.t has no key field 2");
}

#[test]
fn fields_left_out_are_wildcards_except_exact_ones() {
    let t = table(vec![
        field("dst", MatchKind::Exact, 48, 0),
        field("ip", MatchKind::Lpm, 32, 6),
        field("type", MatchKind::Ternary, 16, 10),
        field("port", MatchKind::Range, 9, 12),
        field("vid", MatchKind::Optional, 12, 14),
    ]);
    let dst = at(0, MatchKey::Exact(vec![1]));
    let keys = assemble(&t, std::slice::from_ref(&dst), KeyRules::P4Runtime).unwrap();
    assert_eq!(
        keys,
        vec![
            MatchKey::Exact(vec![1]),
            MatchKey::Lpm(vec![0], 0),
            MatchKey::Ternary(vec![0], vec![0]),
            MatchKey::Range(vec![0], vec![1, 0xff]),
            MatchKey::Optional(None),
        ]
    );
    let m = refused(&t, &[], KeyRules::P4Runtime);
    assert_eq!(m, "table ing.t field dst: exact match field missing");
    // bmv2's routes name every field
    let m = refused(&t, &[dst], KeyRules::Bmv2);
    assert_eq!(m, "table ing.t has 5 key fields, got 1");
}

#[test]
fn a_duplicate_entry_is_found_by_its_normalised_key() {
    let mut t = table(vec![field("dst", MatchKind::Exact, 48, 0)]);
    let h = t.insert(&[MatchKey::Exact(vec![7])], 0, vec![], 0).unwrap();
    // leading zeros do not make another key
    let again = [MatchKey::Exact(vec![0, 0, 7])];
    assert_eq!(t.find(&again, 0).unwrap(), Some(h));
    assert!(matches!(
        t.insert(&again, 0, vec![], 0),
        Err(ApiError::DuplicateEntry)
    ));
}

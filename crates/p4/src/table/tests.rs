use super::encode::prefix_mask;
use super::*;

fn key(name: &str, kind: MatchKind, width: u32, off: u32) -> KeyField {
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

#[test]
fn lpm_longest_wins_and_delete() {
    let mut t = Table::new(
        "t".into(),
        0,
        vec![key("a", MatchKind::Lpm, 32, 0)],
        vec![0],
        16,
        false,
        None,
    );
    let h8 = t.insert(&[MatchKey::Lpm(vec![10, 0, 0, 0], 8)], 0, vec![8], 0);
    // value given with extra host bits under the prefix: normalised
    let h8 = h8.unwrap();
    let h24 = t
        .insert(&[MatchKey::Lpm(vec![10, 0, 1, 0], 24)], 0, vec![24], 0)
        .unwrap();
    let mut tmp = Vec::new();
    assert_eq!(t.lookup(&[10, 0, 1, 7], &mut tmp), Some(h24));
    assert_eq!(t.lookup(&[10, 0, 2, 7], &mut tmp), Some(h8));
    assert_eq!(t.lookup(&[11, 0, 1, 7], &mut tmp), None);
    assert!(matches!(
        t.insert(&[MatchKey::Lpm(vec![10, 0, 1, 0], 24)], 0, vec![], 0),
        Err(ApiError::DuplicateEntry)
    ));
    t.remove(h24).unwrap();
    assert_eq!(t.lookup(&[10, 0, 1, 7], &mut tmp), Some(h8));
    assert!(t
        .insert(&[MatchKey::Lpm(vec![1, 0, 0, 0, 0], 8)], 0, vec![], 0)
        .is_err());
}

/// Narrow keys (<= 8 bytes, the `*64` maps) and wide keys (byte maps) agree with a
/// brute-force longest-prefix / exact reference through inserts, deletes and re-inserts.
#[test]
fn narrow_and_wide_keys_match_reference() {
    for (kind, width) in [
        (MatchKind::Lpm, 32),
        (MatchKind::Lpm, 128),
        (MatchKind::Exact, 48),
        (MatchKind::Exact, 72),
    ] {
        let len = width / 8;
        let mut t = Table::new(
            "t".into(),
            0,
            vec![key("a", kind, width, 0)],
            vec![0],
            1024,
            false,
            None,
        );
        assert_eq!(t.narrow(), len <= 8);
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        // values from a small alphabet so that prefixes overlap
        let bytes = |n: u32, next: &mut dyn FnMut() -> u64| -> Vec<u8> {
            (0..n).map(|_| (next() % 3) as u8).collect()
        };
        let mut live: Vec<(u32, Vec<u8>, u32)> = Vec::new();
        let mut hits = 0;
        for round in 0..400 {
            if round % 5 == 4 && !live.is_empty() {
                let i = (next() % live.len() as u64) as usize;
                let (h, _, _) = live.swap_remove(i);
                t.remove(h).unwrap();
            } else {
                let v = bytes(len, &mut next);
                let plen = if kind == MatchKind::Lpm {
                    (next() % u64::from(width + 1)) as u32
                } else {
                    width
                };
                let m = prefix_mask(width, len, plen);
                let masked: Vec<u8> = v.iter().zip(&m).map(|(a, b)| a & b).collect();
                let mk = if kind == MatchKind::Lpm {
                    MatchKey::Lpm(masked.clone(), plen)
                } else {
                    MatchKey::Exact(masked.clone())
                };
                let dup = live.iter().any(|(_, x, p)| *x == masked && *p == plen);
                match t.insert(&[mk], 0, vec![], 0) {
                    Ok(h) => {
                        assert!(!dup);
                        live.push((h, masked, plen));
                    }
                    Err(ApiError::DuplicateEntry) => assert!(dup),
                    Err(e) => panic!("{e}"),
                }
            }
            // every other probe is a stored value, so wide exact keys hit too
            let probe = if round % 2 == 0 && !live.is_empty() {
                live[(next() % live.len() as u64) as usize].1.clone()
            } else {
                bytes(len, &mut next)
            };
            let want = live
                .iter()
                .filter(|(_, x, p)| {
                    let m = prefix_mask(width, len, *p);
                    probe
                        .iter()
                        .zip(&m)
                        .map(|(a, b)| a & b)
                        .eq(x.iter().copied())
                })
                .max_by_key(|(_, _, p)| *p)
                .map(|(h, _, _)| *h);
            assert_eq!(
                t.lookup(&probe, &mut Vec::new()),
                want,
                "{kind:?}/{width} round {round}"
            );
            hits += usize::from(want.is_some());
        }
        // the probes must also find entries, not only miss
        assert!(hits >= 20, "{kind:?}/{width}: {hits} hits in 400 probes");
    }
}

#[test]
fn ternary_priority_and_range() {
    let keys = vec![
        key("a", MatchKind::Ternary, 16, 0),
        key("b", MatchKind::Range, 9, 2),
    ];
    let mut t = Table::new("t".into(), 0, keys, vec![0], 16, false, None);
    let lo = t
        .insert(
            &[
                MatchKey::Ternary(vec![0], vec![0]),
                MatchKey::Range(vec![0], vec![1, 0xff]),
            ],
            0,
            vec![],
            1,
        )
        .unwrap();
    let hi = t
        .insert(
            &[
                MatchKey::Ternary(vec![0x08, 0], vec![0xff, 0]),
                MatchKey::Range(vec![10], vec![20]),
            ],
            0,
            vec![],
            10,
        )
        .unwrap();
    let mut tmp = Vec::new();
    assert_eq!(t.lookup(&[0x08, 0x33, 0, 15], &mut tmp), Some(hi));
    assert_eq!(t.lookup(&[0x08, 0x33, 0, 21], &mut tmp), Some(lo));
    assert_eq!(t.lookup(&[0x09, 0x33, 0, 15], &mut tmp), Some(lo));
    assert!(t
        .insert(
            &[
                MatchKey::Ternary(vec![0], vec![0]),
                MatchKey::Range(vec![2, 0], vec![2, 0])
            ],
            0,
            vec![],
            1
        )
        .is_err());
}

#[test]
fn exact_wide_key() {
    let mut t = Table::new(
        "t".into(),
        0,
        vec![key("a", MatchKind::Exact, 128, 0)],
        vec![0],
        4,
        false,
        None,
    );
    let v: Vec<u8> = (1..=16).collect();
    let h = t
        .insert(&[MatchKey::Exact(v.clone())], 0, vec![], 0)
        .unwrap();
    let mut tmp = Vec::new();
    assert_eq!(t.lookup(&v, &mut tmp), Some(h));
    assert!(matches!(
        t.insert(&[MatchKey::Lpm(v, 3)], 0, vec![], 0),
        Err(ApiError::BadKey(_))
    ));
}

//! An entry's match key checked against its table and normalised into the value, mask and
//! ranges the lookup structures hold; the same encoding finds an entry by its key.

use super::{Entry, KeyField, MatchKey, MatchKind, RangeField, Structure, Table};
use crate::bits::{bytes_to_words, words_for, words_to_bytes};
use crate::error::ApiError;
use crate::externs::{CounterValue, Meter};

/// One key field checked and normalised: its bytes of the entry's value and mask, the key as
/// stored, and what an lpm or range field adds.
pub(crate) struct Encoded {
    value: Vec<u8>,
    mask: Vec<u8>,
    pub(crate) key: MatchKey,
    prefix: Option<u32>,
    range: Option<RangeField>,
}

impl Encoded {
    fn plain(value: Vec<u8>, mask: Vec<u8>, key: MatchKey) -> Encoded {
        Encoded {
            value,
            mask,
            key,
            prefix: None,
            range: None,
        }
    }
}

fn fit(bytes: &[u8], width: u32, len: u32, what: &str) -> Result<Vec<u8>, ApiError> {
    let mut words = vec![0u64; words_for(width) as usize];
    if !bytes_to_words(bytes, width, &mut words) {
        return Err(ApiError::BadKey(format!(
            "{what}: value does not fit in {width} bits"
        )));
    }
    let mut out = Vec::with_capacity(len as usize);
    words_to_bytes(&words, width, &mut out);
    Ok(out)
}

pub(super) fn prefix_mask(width: u32, len: u32, plen: u32) -> Vec<u8> {
    // the field occupies the low `width` bits of `len` bytes
    let lead = len * 8 - width;
    (0..len * 8)
        .collect::<Vec<_>>()
        .chunks(8)
        .map(|bits| {
            bits.iter().fold(0u8, |acc, b| {
                let set = *b >= lead && *b < lead + plen;
                (acc << 1) | u8::from(set)
            })
        })
        .collect()
}

impl Table {
    /// Checks one field's value against the field (kind, width, prefix length, range bounds)
    /// and normalises it: its value and mask bytes in the key, and the key as stored.
    pub(crate) fn encode_field(&self, kf: &KeyField, mk: &MatchKey) -> Result<Encoded, ApiError> {
        let what = format!("{} key {}", self.name, kf.name);
        let l = kf.len as usize;
        let all = prefix_mask(kf.width, kf.len, kf.width);
        let none = || (vec![0; l], vec![0; l]);
        Ok(match (kf.kind, mk) {
            (MatchKind::Exact, MatchKey::Exact(v)) => {
                let v = fit(v, kf.width, kf.len, &what)?;
                Encoded::plain(v.clone(), all, MatchKey::Exact(v))
            }
            (MatchKind::Lpm, MatchKey::Lpm(v, p)) => {
                if *p > kf.width {
                    return Err(ApiError::BadKey(format!(
                        "{what}: prefix length {p} over width {}",
                        kf.width
                    )));
                }
                let m = prefix_mask(kf.width, kf.len, *p);
                let v = fit(v, kf.width, kf.len, &what)?;
                let v: Vec<u8> = v.iter().zip(&m).map(|(a, b)| a & b).collect();
                Encoded {
                    prefix: Some(*p),
                    ..Encoded::plain(v.clone(), m, MatchKey::Lpm(v, *p))
                }
            }
            (MatchKind::Ternary, MatchKey::Ternary(v, m)) => {
                let m = fit(m, kf.width, kf.len, &what)?;
                let v = fit(v, kf.width, kf.len, &what)?;
                let v: Vec<u8> = v.iter().zip(&m).map(|(a, b)| a & b).collect();
                Encoded::plain(v.clone(), m.clone(), MatchKey::Ternary(v, m))
            }
            // a P4Runtime optional match is also taken on a key the JSON calls ternary
            // (p4c writes optional keys so), kept as given so reads return it as written
            (MatchKind::Optional | MatchKind::Ternary, MatchKey::Optional(None)) => {
                let (v, m) = none();
                Encoded::plain(v, m, MatchKey::Optional(None))
            }
            (MatchKind::Optional | MatchKind::Ternary, MatchKey::Optional(Some(v))) => {
                let v = fit(v, kf.width, kf.len, &what)?;
                Encoded::plain(v.clone(), all, MatchKey::Optional(Some(v)))
            }
            (MatchKind::Range, MatchKey::Range(lo, hi)) => {
                let lo = fit(lo, kf.width, kf.len, &what)?;
                let hi = fit(hi, kf.width, kf.len, &what)?;
                if lo > hi {
                    return Err(ApiError::BadKey(format!("{what}: empty range")));
                }
                let range = (
                    kf.off,
                    kf.len,
                    lo.clone().into_boxed_slice(),
                    hi.clone().into_boxed_slice(),
                );
                let (v, m) = none();
                Encoded {
                    range: Some(range),
                    ..Encoded::plain(v, m, MatchKey::Range(lo, hi))
                }
            }
            (k, got) => {
                return Err(ApiError::BadKey(format!(
                    "{what}: expected a {} match, got {got:?}",
                    k.name()
                )))
            }
        })
    }

    /// Checks and normalises keys into value/mask/ranges over the whole key.
    pub(super) fn encode(&self, keys: &[MatchKey]) -> Result<Entry, ApiError> {
        if keys.len() != self.keys.len() {
            return Err(ApiError::BadKey(format!(
                "table {} has {} key fields, got {}",
                self.name,
                self.keys.len(),
                keys.len()
            )));
        }
        let n = self.key_len as usize;
        let mut value = vec![0u8; n];
        let mut mask = vec![0u8; n];
        let mut ranges = Vec::new();
        let mut prefix = 0;
        let mut norm = Vec::with_capacity(keys.len());
        for (kf, mk) in self.keys.iter().zip(keys) {
            let (o, l) = (kf.off as usize, kf.len as usize);
            let f = self.encode_field(kf, mk)?;
            value[o..o + l].copy_from_slice(&f.value);
            mask[o..o + l].copy_from_slice(&f.mask);
            ranges.extend(f.range);
            prefix = f.prefix.unwrap_or(prefix);
            norm.push(f.key);
        }
        Ok(Entry {
            keys: norm,
            action: 0,
            data: Vec::new(),
            priority: 0,
            counter: CounterValue::default(),
            meter: Meter::default(),
            target: None,
            last_hit: 0,
            ttl_ns: None,
            notified_at: None,
            metadata: Box::default(),
            value: value.into_boxed_slice(),
            mask: mask.into_boxed_slice(),
            ranges,
            prefix,
        })
    }

    /// The entry with these keys (and, in a ternary table, this priority): the lookup an
    /// insert makes for duplicates, so exact and lpm tables answer without a scan.
    pub fn find(&self, keys: &[MatchKey], priority: i32) -> Result<Option<u32>, ApiError> {
        if self.structure == Structure::Keyless {
            return Ok(None);
        }
        let mut e = self.encode(keys)?;
        e.priority = priority;
        Ok(self.same_key(&e))
    }
}

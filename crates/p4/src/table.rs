//! Match tables: key layout, match structures (hash for exact, one hash per prefix length for
//! lpm, a priority list for ternary/range/optional), entries and their runtime API.

use crate::bits::{words_for, words_to_bytes};
use crate::error::ApiError;
use crate::externs::{CounterValue, Meter};
use crate::fxhash::FxMap;
use crate::profile::ProfileRef;
use crate::state::PacketState;

/// How a key field matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    Exact,
    Lpm,
    Ternary,
    Range,
    Optional,
}

impl MatchKind {
    pub fn name(self) -> &'static str {
        match self {
            MatchKind::Exact => "exact",
            MatchKind::Lpm => "lpm",
            MatchKind::Ternary => "ternary",
            MatchKind::Range => "range",
            MatchKind::Optional => "optional",
        }
    }
}

/// One key field's value in an entry. Values are big-endian bytes of any length (leading zeros
/// optional, as P4Runtime sends them) that must fit the field's width.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatchKey {
    Exact(Vec<u8>),
    /// Value and prefix length in bits of this field.
    Lpm(Vec<u8>, u32),
    /// Value and mask.
    Ternary(Vec<u8>, Vec<u8>),
    /// Low and high bound, inclusive.
    Range(Vec<u8>, Vec<u8>),
    /// `None` matches anything (wildcard).
    Optional(Option<Vec<u8>>),
}

/// Where a key field's value comes from.
#[derive(Debug, Clone, Copy)]
pub enum KeySrc {
    /// First arena word and width.
    Field {
        word: u32,
        width: u32,
    },
    Valid(u32),
}

#[derive(Debug, Clone)]
pub struct KeyField {
    pub name: String,
    pub kind: MatchKind,
    pub src: KeySrc,
    pub width: u32,
    /// Byte offset in the table's key and byte length (ceil(width / 8)).
    pub off: u32,
    pub len: u32,
    /// A constant mask the field is ANDed with before matching (`key: f & 0xffff`), `len`
    /// big-endian bytes.
    pub mask: Option<Box<[u8]>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Structure {
    Keyless,
    Exact,
    Lpm,
    Ternary,
}

/// An installed entry.
#[derive(Debug, Clone)]
pub struct Entry {
    pub keys: Vec<MatchKey>,
    /// Index of the action in the program.
    pub action: u32,
    pub data: Vec<u64>,
    /// P4Runtime priority: higher wins (ternary/range/optional tables only).
    pub priority: i32,
    pub counter: CounterValue,
    pub meter: Meter,
    /// In an indirect table: the member or group the entry runs (`action`/`data` unused).
    pub target: Option<ProfileRef>,
    /// In a table with `support_timeout`: when the entry was last hit (the data plane's clock,
    /// ns; set to the insert time when a timeout is given).
    pub last_hit: u64,
    /// Idle timeout (ns), None: never ages.
    pub ttl_ns: Option<u64>,
    /// `last_hit` when the controller was last told the entry is idle (not told again until
    /// the entry is hit).
    pub(crate) notified_at: Option<u64>,
    /// The controller's opaque bytes (P4Runtime's `TableEntry.metadata`; empty: none). Kept
    /// with the entry, so they go when it goes, whichever route deletes it.
    pub metadata: Box<[u8]>,
    value: Box<[u8]>,
    mask: Box<[u8]>,
    /// (offset, len, low, high) of range fields.
    ranges: Vec<RangeField>,
    prefix: u32,
}

/// (offset, len, low, high) of a range key field, bounds as big-endian bytes.
type RangeField = (u32, u32, Box<[u8]>, Box<[u8]>);

struct LpmGroup {
    prefix: u32,
    mask: Box<[u8]>,
    mask64: u64,
    map: FxMap<Box<[u8]>, u32>,
    /// Used instead of `map` when the key fits in 8 bytes (IPv4 and most keys): one multiply
    /// to hash and one compare, no slice hashing or memcmp.
    map64: FxMap<u64, u32>,
}

/// A key of at most 8 bytes as one big-endian number.
#[inline]
fn key64(key: &[u8]) -> u64 {
    key.iter().fold(0u64, |a, &b| (a << 8) | u64::from(b))
}

pub struct Table {
    pub name: String,
    pub id: u64,
    pub keys: Vec<KeyField>,
    pub key_len: u32,
    pub structure: Structure,
    /// Actions the table may run (program action indices).
    pub actions: Vec<u32>,
    pub max_size: u64,
    pub with_counters: bool,
    pub direct_meter: Option<u32>,
    pub is_const: bool,
    pub default_action: Option<u32>,
    pub default_data: Vec<u64>,
    pub default_const: bool,
    /// Action profile (index in the program) of an indirect table.
    pub profile: Option<u32>,
    /// The table keeps each entry's last hit time (`support_timeout` in the JSON).
    pub support_timeout: bool,
    /// A default member or group of an indirect table, run on a miss instead of
    /// `default_action`.
    pub default_target: Option<ProfileRef>,
    entries: Vec<Option<Entry>>,
    free: Vec<u32>,
    count: usize,
    exact: FxMap<Box<[u8]>, u32>,
    exact64: FxMap<u64, u32>,
    lpm: Vec<LpmGroup>,
    tern: Vec<u32>,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Table({}, {} entries)", self.name, self.count)
    }
}

impl LpmGroup {
    fn new(prefix: u32, mask: &[u8]) -> LpmGroup {
        LpmGroup {
            prefix,
            mask: mask.into(),
            mask64: if mask.len() <= 8 { key64(mask) } else { 0 },
            map: FxMap::default(),
            map64: FxMap::default(),
        }
    }
}

impl Table {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        id: u64,
        keys: Vec<KeyField>,
        actions: Vec<u32>,
        max_size: u64,
        with_counters: bool,
        direct_meter: Option<u32>,
    ) -> Table {
        let key_len: u32 = keys.iter().map(|k| k.len).sum();
        let any = |ks: &[MatchKind]| keys.iter().any(|k| ks.contains(&k.kind));
        let structure = if keys.is_empty() {
            Structure::Keyless
        } else if any(&[MatchKind::Ternary, MatchKind::Range, MatchKind::Optional]) {
            Structure::Ternary
        } else if any(&[MatchKind::Lpm]) {
            Structure::Lpm
        } else {
            Structure::Exact
        };
        Table {
            name,
            id,
            keys,
            key_len,
            structure,
            actions,
            max_size,
            with_counters,
            direct_meter,
            is_const: false,
            default_action: None,
            default_data: Vec::new(),
            default_const: false,
            profile: None,
            support_timeout: false,
            default_target: None,
            entries: Vec::new(),
            free: Vec::new(),
            count: 0,
            exact: FxMap::default(),
            exact64: FxMap::default(),
            lpm: Vec::new(),
            tern: Vec::new(),
        }
    }

    /// Writes the packet's key into `buf` (exactly `key_len` bytes).
    // always: the control's walk is compiled twice (with and without the log), and with two
    // callers the compiler stops inlining this and `lookup` (+170 and +200 instructions a frame)
    #[inline(always)]
    pub fn build_key(&self, st: &PacketState, buf: &mut Vec<u8>) {
        buf.clear();
        for k in &self.keys {
            match k.src {
                KeySrc::Valid(h) => buf.push(u8::from(st.valid[h as usize])),
                KeySrc::Field { word, width } => {
                    let n = words_for(width) as usize;
                    let w = &st.w[word as usize..word as usize + n];
                    if n == 1 {
                        let be = w[0].to_be_bytes();
                        buf.extend_from_slice(&be[8 - k.len as usize..]);
                    } else {
                        words_to_bytes(w, width, buf);
                    }
                }
            }
            if let Some(m) = &k.mask {
                let start = buf.len() - m.len();
                buf[start..]
                    .iter_mut()
                    .zip(m.iter())
                    .for_each(|(b, m)| *b &= m);
            }
        }
    }

    /// Finds the matching entry for `key`; `tmp` is scratch space for masked keys.
    #[inline(always)]
    pub fn lookup(&self, key: &[u8], tmp: &mut Vec<u8>) -> Option<u32> {
        match self.structure {
            Structure::Keyless => None,
            Structure::Exact if self.narrow() => self.exact64.get(&key64(key)).copied(),
            Structure::Exact => self.exact.get(key).copied(),
            Structure::Lpm if self.narrow() => {
                let k = key64(key);
                self.lpm
                    .iter()
                    .find_map(|g| g.map64.get(&(k & g.mask64)).copied())
            }
            Structure::Lpm => {
                for g in &self.lpm {
                    tmp.clear();
                    tmp.extend(key.iter().zip(g.mask.iter()).map(|(a, b)| a & b));
                    if let Some(e) = g.map.get(tmp.as_slice()) {
                        return Some(*e);
                    }
                }
                None
            }
            Structure::Ternary => self.tern.iter().copied().find(|h| {
                let Some(Some(e)) = self.entries.get(*h as usize) else {
                    return false;
                };
                key.iter()
                    .zip(e.mask.iter().zip(e.value.iter()))
                    .all(|(k, (m, v))| k & m == *v)
                    && e.ranges.iter().all(|(off, len, lo, hi)| {
                        let s = &key[*off as usize..(*off + *len) as usize];
                        s >= &lo[..] && s <= &hi[..]
                    })
            }),
        }
    }

    /// The key fits in 8 bytes: the `*64` maps are used.
    #[inline]
    fn narrow(&self) -> bool {
        self.key_len <= 8
    }

    pub fn entry(&self, h: u32) -> Option<&Entry> {
        self.entries.get(h as usize).and_then(Option::as_ref)
    }

    pub fn entry_mut(&mut self, h: u32) -> Option<&mut Entry> {
        self.entries.get_mut(h as usize).and_then(Option::as_mut)
    }

    pub fn len(&self) -> usize {
        self.count
    }

    /// Handles of installed entries in ascending order.
    pub fn handles(&self) -> impl Iterator<Item = u32> + '_ {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.is_some())
            .map(|(i, _)| i as u32)
    }

    fn same_key(&self, e: &Entry) -> Option<u32> {
        match self.structure {
            Structure::Keyless => None,
            Structure::Exact if self.narrow() => self.exact64.get(&key64(&e.value)).copied(),
            Structure::Exact => self.exact.get(&e.value).copied(),
            Structure::Lpm => self
                .lpm
                .iter()
                .find(|g| g.prefix == e.prefix)
                .and_then(|g| {
                    if self.narrow() {
                        g.map64.get(&key64(&e.value)).copied()
                    } else {
                        g.map.get(&e.value).copied()
                    }
                }),
            Structure::Ternary => self.tern.iter().copied().find(|h| {
                self.entry(*h).is_some_and(|x| {
                    x.value == e.value
                        && x.mask == e.mask
                        && x.ranges == e.ranges
                        && x.priority == e.priority
                })
            }),
        }
    }

    /// Inserts an entry whose action and data were checked by the caller.
    pub fn insert(
        &mut self,
        keys: &[MatchKey],
        action: u32,
        data: Vec<u64>,
        priority: i32,
    ) -> Result<u32, ApiError> {
        if self.structure == Structure::Keyless {
            return Err(ApiError::BadKey(format!(
                "table {} has no key; set its default action instead",
                self.name
            )));
        }
        if self.count as u64 >= self.max_size {
            return Err(ApiError::TableFull(self.name.clone()));
        }
        let mut e = self.encode(keys)?;
        e.action = action;
        e.data = data;
        e.priority = priority;
        if self.same_key(&e).is_some() {
            return Err(ApiError::DuplicateEntry);
        }
        let h = match self.free.pop() {
            Some(h) => h,
            None => {
                self.entries.push(None);
                (self.entries.len() - 1) as u32
            }
        };
        match self.structure {
            Structure::Exact if self.narrow() => {
                self.exact64.insert(key64(&e.value), h);
            }
            Structure::Exact => {
                self.exact.insert(e.value.clone(), h);
            }
            Structure::Lpm => {
                let pos = self.lpm.iter().position(|g| g.prefix <= e.prefix);
                let at = match pos {
                    Some(i) if self.lpm[i].prefix == e.prefix => i,
                    Some(i) => {
                        self.lpm.insert(i, LpmGroup::new(e.prefix, &e.mask));
                        i
                    }
                    None => {
                        self.lpm.push(LpmGroup::new(e.prefix, &e.mask));
                        self.lpm.len() - 1
                    }
                };
                if self.narrow() {
                    self.lpm[at].map64.insert(key64(&e.value), h);
                } else {
                    self.lpm[at].map.insert(e.value.clone(), h);
                }
            }
            Structure::Ternary => {
                // higher priority first; among equals, older entries first
                let p = e.priority;
                let entries = &self.entries;
                let at = self
                    .tern
                    .iter()
                    .position(|x| {
                        entries
                            .get(*x as usize)
                            .and_then(Option::as_ref)
                            .is_some_and(|o| o.priority < p)
                    })
                    .unwrap_or(self.tern.len());
                self.tern.insert(at, h);
            }
            Structure::Keyless => {}
        }
        self.entries[h as usize] = Some(e);
        self.count += 1;
        Ok(h)
    }

    pub fn remove(&mut self, h: u32) -> Result<Entry, ApiError> {
        let Some(e) = self.entries.get_mut(h as usize).and_then(Option::take) else {
            return Err(ApiError::BadHandle(h));
        };
        match self.structure {
            Structure::Exact if self.narrow() => {
                self.exact64.remove(&key64(&e.value));
            }
            Structure::Exact => {
                self.exact.remove(&e.value);
            }
            Structure::Lpm => {
                if let Some(i) = self.lpm.iter().position(|g| g.prefix == e.prefix) {
                    let narrow = self.narrow();
                    let g = &mut self.lpm[i];
                    if narrow {
                        g.map64.remove(&key64(&e.value));
                    } else {
                        g.map.remove(&e.value);
                    }
                    if g.map.is_empty() && g.map64.is_empty() {
                        self.lpm.remove(i);
                    }
                }
            }
            Structure::Ternary => self.tern.retain(|x| *x != h),
            Structure::Keyless => {}
        }
        self.free.push(h);
        self.count -= 1;
        Ok(e)
    }

    /// Removes all entries.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.free.clear();
        self.count = 0;
        self.exact.clear();
        self.exact64.clear();
        self.lpm.clear();
        self.tern.clear();
    }
}

mod encode;
#[cfg(test)]
mod tests;

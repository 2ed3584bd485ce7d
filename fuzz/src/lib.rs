//! Shared pieces of the fuzz targets: the repo's programs, an input reader, table entries and
//! packets made from fuzz bytes, structure-aware JSON mutations, and the packet-path checks.

use lanes_p4::p4info::P4Names;
use lanes_p4::{EgressMeta, MatchKey, MatchKind, ParserErrorPolicy, Program};
use serde_json::Value;

pub const TM_BASIC: &str = include_str!("../../p4/tm_basic.json");
pub const L3_BASIC: &str = include_str!("../../p4/l3_basic.json");
pub const FEATURES: &str = include_str!("../../crates/p4/tests/data/features.json");
/// The programs the structure-aware targets start from.
pub const PROGRAMS: [&str; 3] = [TM_BASIC, L3_BASIC, FEATURES];

/// Reads a fuzz input front to back; past the end it yields zeros / empty slices.
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Input { data }
    }
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
    pub fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((b, rest)) => {
                self.data = rest;
                *b
            }
            None => 0,
        }
    }
    pub fn u16(&mut self) -> u16 {
        u16::from_be_bytes([self.u8(), self.u8()])
    }
    pub fn u64(&mut self) -> u64 {
        let mut v = 0u64;
        for _ in 0..8 {
            v = (v << 8) | u64::from(self.u8());
        }
        v
    }
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let n = n.min(self.data.len());
        let (a, b) = self.data.split_at(n);
        self.data = b;
        a
    }
    pub fn rest(&mut self) -> &'a [u8] {
        self.take(self.data.len())
    }
}

/// Big-endian bytes for a `width`-bit value: usually masked to fit, sometimes left as they
/// come (too wide), so that both the accepted and the refused paths of the API run.
fn value(inp: &mut Input, width: u32, exact_fit: bool) -> Vec<u8> {
    let n = width.div_ceil(8) as usize;
    let mut v = inp.take(n).to_vec();
    if exact_fit && v.len() == n && width % 8 != 0 {
        v[0] &= (1u8 << (width % 8)) - 1;
    }
    v
}

/// Installs up to `count` entries chosen by the input into the program's non-const tables.
/// Refused entries are fine (the API must answer with an error, not a panic).
pub fn install_entries(p: &mut Program, names: &P4Names, inp: &mut Input, count: usize) {
    if names.tables.is_empty() {
        return;
    }
    for _ in 0..count {
        let t = &names.tables[inp.u8() as usize % names.tables.len()];
        let sel = inp.u8();
        let fit = sel & 0x80 == 0;
        let Some(aid) = t.action_ids.get(sel as usize % t.action_ids.len().max(1)) else {
            continue;
        };
        let Some(ai) = names.actions.iter().find(|a| a.id == *aid) else {
            continue;
        };
        let Some(action) = p.action_id(t.table, &ai.name) else {
            continue;
        };
        let keys = t
            .keys
            .iter()
            .map(|k| {
                let w = k.bitwidth;
                match k.match_kind {
                    MatchKind::Exact => MatchKey::Exact(value(inp, w, fit)),
                    MatchKind::Lpm => {
                        let plen = u32::from(inp.u8()) % (w + 2);
                        MatchKey::Lpm(value(inp, w, fit), plen)
                    }
                    MatchKind::Ternary => MatchKey::Ternary(value(inp, w, fit), value(inp, w, fit)),
                    MatchKind::Range => MatchKey::Range(value(inp, w, fit), value(inp, w, fit)),
                    MatchKind::Optional => {
                        if inp.u8() & 1 == 0 {
                            MatchKey::Optional(None)
                        } else {
                            MatchKey::Optional(Some(value(inp, w, fit)))
                        }
                    }
                }
            })
            .collect();
        let params = ai
            .params
            .iter()
            .map(|q| value(inp, q.bitwidth, fit))
            .collect();
        let prio = i32::from(inp.u8() as i8);
        let _ = p.add_entry(t.table, keys, action, params, prio);
    }
}

/// Removes the entries a previous input installed (const tables keep theirs).
pub fn clear_tables(p: &mut Program, names: &P4Names) {
    for t in &names.tables {
        let _ = p.clear_table(t.table);
    }
}

/// Runs one frame through the whole pipeline and checks what must hold for any program and
/// frame: a dropped packet leaves nothing in the output, a sent one exactly `len` bytes, and
/// every frame is counted once.
pub fn run_frame(p: &mut Program, frame: &[u8], port: u32, now: u64, split: Option<EgressMeta>) {
    let mut st = p.new_state();
    let mut out = Vec::new();
    let before = p.stats().packets;
    match split {
        None => {
            let (ig, eg) = p.process(&mut st, frame, port, now, &mut out);
            assert!(ig.drop.is_none() || eg.drop.is_some());
            check_out(&eg, &out);
        }
        Some(meta) => {
            let ig = p.ingress(&mut st, frame, port, now);
            assert_eq!(ig.packet_length as usize, frame.len());
            if ig.drop.is_none() {
                let eg = p.egress(&mut st, frame, &meta, now + 1000, &mut out);
                check_out(&eg, &out);
            }
        }
    }
    assert_eq!(p.stats().packets, before + 1, "every frame is counted once");
}

fn check_out(eg: &lanes_p4::EgressResult, out: &[u8]) {
    match eg.drop {
        Some(_) => assert!(out.is_empty() && eg.len == 0, "dropped packet has output"),
        None => assert_eq!(eg.len, out.len(), "reported length differs from output"),
    }
}

/// Runs the frames the input describes: [flags][len hi][len lo][bytes...] repeated.
pub fn run_frames(p: &mut Program, inp: &mut Input, max_frames: usize) {
    let mut now = 1_000u64;
    for _ in 0..max_frames {
        if inp.is_empty() {
            break;
        }
        let flags = inp.u8();
        p.set_parser_error_policy(if flags & 1 == 0 {
            ParserErrorPolicy::Drop
        } else {
            ParserErrorPolicy::Continue
        });
        let len = (inp.u16() % 2048) as usize;
        let frame = inp.take(len).to_vec();
        let port = u32::from(flags >> 2) % 8;
        let split = (flags & 2 != 0).then(|| EgressMeta {
            egress_port: u32::from(flags >> 4),
            qid: u32::from(flags & 7),
            enq_timestamp: now / 1000,
            enq_qdepth: u64::from(flags),
            deq_timedelta: u64::from(flags) * 3,
            deq_qdepth: 1,
        });
        run_frame(p, &frame, port, now, split);
        now += 1_000_000 * u64::from(flags);
    }
}

/// A few realistic frames (Ethernet/IPv4/UDP, ARP, VLAN, IPv6, runts) for programs whose
/// tables and parser the fuzzer changed.
pub fn sample_frames() -> Vec<Vec<u8>> {
    let eth = |ty: [u8; 2]| -> Vec<u8> {
        let mut f = vec![0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 2, 2];
        f.extend_from_slice(&ty);
        f
    };
    let mut ip = eth([0x08, 0x00]);
    ip.extend_from_slice(&[
        0x45, 0, 0, 36, 0x12, 0x34, 0x40, 0, 64, 17, 0, 0, 10, 0, 1, 1, 10, 0, 2, 2,
    ]);
    ip.extend_from_slice(&[0x30, 0x39, 0x13, 0x88, 0, 16, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]);
    let mut arp = eth([0x08, 0x06]);
    arp.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
    arp.extend_from_slice(&[0; 20]);
    let mut vlan = eth([0x81, 0x00]);
    vlan.extend_from_slice(&[0, 5, 0x81, 0x00, 0, 6, 0x08, 0x00]);
    vlan.extend_from_slice(&ip[14..]);
    let mut v6 = eth([0x86, 0xdd]);
    v6.extend_from_slice(&[0x60, 0, 0, 0, 0, 8, 17, 15]);
    v6.extend_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    v6.extend_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
    v6.extend_from_slice(&[0, 1, 0, 2, 0, 8, 0, 0]);
    let short = ip[..20].to_vec();
    vec![ip, arp, vlan, v6, short, vec![], vec![0xff; 60]]
}

/// Runs the sample frames through a program under both parser-error policies.
pub fn run_samples(p: &mut Program) {
    for policy in [ParserErrorPolicy::Drop, ParserErrorPolicy::Continue] {
        p.set_parser_error_policy(policy);
        for (i, f) in sample_frames().iter().enumerate() {
            run_frame(p, f, i as u32, 1_000 * i as u64, None);
        }
    }
}

// ---- structure-aware JSON mutation ----

const NUMBERS: [i128; 30] = [
    0,
    1,
    2,
    3,
    7,
    8,
    9,
    15,
    16,
    31,
    32,
    33,
    63,
    64,
    65,
    127,
    128,
    255,
    256,
    511,
    4096,
    4097,
    65535,
    65536,
    1 << 31,
    u32::MAX as i128,
    1 << 32,
    i64::MAX as i128,
    u64::MAX as i128,
    -1,
];

const STRINGS: [&str; 52] = [
    "",
    "0x",
    "0x0",
    "-0x1",
    "0xffffffffffffffffffffffffffffffffff",
    "0x8100",
    "accept",
    "reject",
    "$valid$",
    "__HIT__",
    "__MISS__",
    "default",
    "hexstr",
    "field",
    "expression",
    "lookahead",
    "runtime_data",
    "local",
    "header",
    "stack",
    "regular",
    "bool",
    "exact",
    "lpm",
    "ternary",
    "range",
    "optional",
    "+",
    "-",
    "*",
    "<<",
    ">>",
    "%",
    "/",
    "?",
    "valid",
    "d2b",
    "b2d",
    "~",
    "not",
    "and",
    "&",
    "==",
    "assign",
    "add_header",
    "remove_header",
    "mark_to_drop",
    "exit",
    "_jump",
    "_jump_if_zero",
    "modify_field_with_hash_based_offset",
    "register_write",
];

/// One step of a path from the root to a node.
#[derive(Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// Walks from the root choosing a child by each input byte; a byte >= 0xf0 stops early.
fn pick_path(root: &Value, inp: &mut Input) -> Vec<Step> {
    let mut path = Vec::new();
    let mut node = root;
    loop {
        let b = inp.u8();
        if b >= 0xf0 {
            return path;
        }
        match node {
            Value::Array(a) if !a.is_empty() => {
                let i = b as usize % a.len();
                path.push(Step::Index(i));
                node = &a[i];
            }
            Value::Object(m) if !m.is_empty() => {
                let (k, v) = m.iter().nth(b as usize % m.len()).unwrap();
                path.push(Step::Key(k.clone()));
                node = v;
            }
            _ => return path,
        }
    }
}

fn node_mut<'v>(root: &'v mut Value, path: &[Step]) -> &'v mut Value {
    let mut n = root;
    for s in path {
        n = match s {
            Step::Key(k) => n.get_mut(k.as_str()).unwrap(),
            Step::Index(i) => n.get_mut(*i).unwrap(),
        };
    }
    n
}

/// Strings already in the document (names, ops, hex values) for plausible replacements.
pub fn collect_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) if !out.contains(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        Value::Object(m) => m.values().for_each(|x| collect_strings(x, out)),
        _ => {}
    }
}

/// Applies one mutation chosen by the input to `root`.
pub fn mutate(root: &mut Value, pool: &[String], inp: &mut Input) {
    let op = inp.u8() % 12;
    let path = pick_path(root, inp);
    let donor_path = pick_path(root, inp);
    let donor = node_mut(root, &donor_path).clone();
    let pick = inp.u8() as usize;
    let n = node_mut(root, &path);
    match op {
        0 => {
            let x = NUMBERS[pick % NUMBERS.len()];
            *n = if x < 0 {
                Value::from(x as i64)
            } else {
                Value::from(x as u64)
            };
        }
        1 => *n = Value::from(STRINGS[pick % STRINGS.len()]),
        2 if !pool.is_empty() => *n = Value::from(pool[pick % pool.len()].clone()),
        3 => *n = Value::Null,
        4 => *n = Value::Bool(pick & 1 == 1),
        5 => *n = donor,
        6 => *n = Value::Array(vec![]),
        7 => *n = Value::Object(Default::default()),
        8 => match n {
            // remove a child
            Value::Array(a) if !a.is_empty() => {
                a.remove(pick % a.len());
            }
            Value::Object(m) if !m.is_empty() => {
                let k = m.keys().nth(pick % m.len()).unwrap().clone();
                m.remove(&k);
            }
            _ => *n = Value::Null,
        },
        9 => match n {
            // duplicate a child (duplicate names, ids, entries)
            Value::Array(a) if !a.is_empty() => {
                let x = a[pick % a.len()].clone();
                a.push(x);
            }
            Value::Object(m) => {
                m.insert(STRINGS[pick % STRINGS.len()].to_string(), donor);
            }
            _ => {}
        },
        10 => {
            if let Value::Array(a) = n {
                if a.len() > 1 {
                    let i = pick % a.len();
                    let j = (pick / 7) % a.len();
                    a.swap(i, j);
                }
            }
        }
        _ => *n = Value::from(1.5),
    }
}

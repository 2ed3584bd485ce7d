//! Calculations (hash/checksum algorithms over bit-packed field lists) and the v1model
//! checksum verify/update units built on them.

use crate::bits::{mask, write_bits};
use crate::codec::HeaderCodec;
use crate::expr::{self, Env, Expr, Scope};
use crate::json::{self, err, label, R};
use crate::layout::{FieldRef, Layout};
use crate::state::PacketState;
use crate::varbit::VarRef;
use serde_json::Value;
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algo {
    Csum16,
    Crc16,
    Crc32,
    Identity,
    Xor16,
}

#[derive(Debug, Clone)]
enum Input {
    Field(FieldRef),
    Const {
        value: u64,
        width: u32,
    },
    /// A varbit field (of this header): its current bytes.
    Varbit(VarRef, u32),
}

/// One <= 64-bit piece of the packed input, placed at compile time.
#[derive(Debug, Clone, Copy)]
struct Piece {
    /// Word of the packet state, or `u32::MAX` for the constant in `value`.
    word: u32,
    value: u64,
    bit_off: u32,
    width: u32,
    /// Whole bytes when byte-aligned (the common case: IPv4 header fields), else 0.
    aligned_bytes: u32,
}

#[derive(Debug, Clone)]
pub struct Calculation {
    pub algo: Algo,
    pieces: Vec<Piece>,
    pub bits: u32,
    /// A `payload` input (`*_with_payload` checksums): the header of the last field before
    /// it; the valid headers deparsed after that one and the packet's payload follow the
    /// fields in the input.
    pub payload_after: Option<u32>,
    /// The inputs when one is a varbit field: packed per packet at their current lengths
    /// (`pieces` and `bits` then hold the fixed layout at the varbits' maxima, unused).
    dynamic: Option<Box<[Input]>>,
}

/// Packed inputs up to this many bytes are built on the stack.
const STACK_BYTES: usize = 64;

impl Calculation {
    fn new(algo: Algo, inputs: &[Input]) -> Calculation {
        let mut pieces = Vec::new();
        let mut off = 0u32;
        let mut push = |word: u32, value: u64, width: u32| {
            let aligned = off.is_multiple_of(8) && width.is_multiple_of(8);
            pieces.push(Piece {
                word,
                value,
                bit_off: off,
                width,
                aligned_bytes: if aligned { width / 8 } else { 0 },
            });
            off += width;
        };
        for inp in inputs {
            match inp {
                Input::Field(f) => {
                    let n = f.words();
                    let top = f.width - 64 * (n - 1);
                    for k in 0..n {
                        push(f.word + k, 0, if k == 0 { top } else { 64 });
                    }
                }
                Input::Const { value, width } => push(u32::MAX, *value, *width),
                Input::Varbit(v, _) => push(u32::MAX, 0, v.max_bits),
            }
        }
        let has_varbit = inputs.iter().any(|i| matches!(i, Input::Varbit(..)));
        Calculation {
            algo,
            pieces,
            bits: off,
            payload_after: None,
            dynamic: has_varbit.then(|| inputs.to_vec().into_boxed_slice()),
        }
    }

    /// Packs inputs that include a varbit field, each at its current length, then `tail`.
    #[cold]
    #[inline(never)]
    fn compute_dynamic(
        &self,
        inputs: &[Input],
        st: &PacketState,
        buf: &mut Vec<u8>,
        tail: &[u8],
    ) -> u64 {
        buf.clear();
        buf.resize(self.bits.div_ceil(8) as usize, 0);
        let mut off = 0usize;
        for inp in inputs {
            match inp {
                Input::Field(f) => {
                    let n = f.words();
                    let top = f.width - 64 * (n - 1);
                    for k in 0..n {
                        let width = if k == 0 { top } else { 64 };
                        write_bits(buf, off, width, st.w[(f.word + k) as usize]);
                        off += width as usize;
                    }
                }
                Input::Const { value, width } => {
                    write_bits(buf, off, *width, *value);
                    off += *width as usize;
                }
                Input::Varbit(v, _) => off += v.pack(&st.w, buf, off) as usize,
            }
        }
        buf.truncate(off.div_ceil(8));
        buf.extend_from_slice(tail);
        run_algo(self.algo, buf)
    }

    /// As [`Calculation::compute`], with `tail` (the headers after the last field's and the
    /// payload) appended to the packed fields.
    pub fn compute_with_tail(&self, st: &PacketState, buf: &mut Vec<u8>, tail: &[u8]) -> u64 {
        if let Some(d) = &self.dynamic {
            return self.compute_dynamic(d, st, buf, tail);
        }
        let n = self.bits.div_ceil(8) as usize;
        buf.clear();
        buf.resize(n, 0);
        self.pack(st, buf);
        buf.extend_from_slice(tail);
        run_algo(self.algo, buf)
    }

    fn pack(&self, st: &PacketState, data: &mut [u8]) {
        for p in &self.pieces {
            let v = if p.word == u32::MAX {
                p.value
            } else {
                st.w[p.word as usize]
            };
            if p.aligned_bytes > 0 {
                let nb = p.aligned_bytes as usize;
                let o = (p.bit_off / 8) as usize;
                for (i, b) in data[o..o + nb].iter_mut().enumerate() {
                    *b = (v >> (8 * (nb - 1 - i))) as u8;
                }
            } else {
                write_bits(data, p.bit_off as usize, p.width, v);
            }
        }
    }

    /// Packs the inputs MSB-first (zero-padded to a byte) and applies the algorithm; `buf` is
    /// used only for inputs longer than `STACK_BYTES`.
    pub fn compute(&self, st: &PacketState, buf: &mut Vec<u8>) -> u64 {
        if let Some(d) = &self.dynamic {
            return self.compute_dynamic(d, st, buf, &[]);
        }
        let n = self.bits.div_ceil(8) as usize;
        let mut small = [0u8; STACK_BYTES];
        let data: &mut [u8] = if n <= STACK_BYTES {
            &mut small[..n]
        } else {
            buf.clear();
            buf.resize(n, 0);
            buf
        };
        self.pack(st, data);
        run_algo(self.algo, data)
    }
}

/// The value of `calc` for this packet; for a payload input, the valid headers deparsed after
/// the last field's header and the packet's payload (from `pkt`, the bytes ingress parsed)
/// follow the fields, as bmv2 computes TCP and UDP checksums.
#[inline]
pub fn calc_value(
    calc: &Calculation,
    st: &PacketState,
    pkt: &[u8],
    deparse: &[u32],
    codecs: &[HeaderCodec],
    scratch: &mut Vec<u8>,
) -> u64 {
    let Some(after) = calc.payload_after else {
        return calc.compute(st, scratch);
    };
    let mut tail = Vec::new();
    if let Some(pos) = deparse.iter().position(|h| *h == after) {
        for h in &deparse[pos + 1..] {
            if st.valid[*h as usize] {
                codecs[*h as usize].emit_all(&st.w, &mut tail);
            }
        }
    }
    let off = (st.payload_off as usize).min(pkt.len());
    tail.extend_from_slice(&pkt[off..]);
    calc.compute_with_tail(st, scratch, &tail)
}

pub fn run_algo(algo: Algo, data: &[u8]) -> u64 {
    match algo {
        Algo::Csum16 => u64::from(csum16(data)),
        Algo::Crc16 => u64::from(crc16_arc(data)),
        Algo::Crc32 => u64::from(crc32(data)),
        Algo::Identity => data.iter().fold(0u64, |a, b| (a << 8) | u64::from(*b)),
        Algo::Xor16 => {
            let mut x = 0u16;
            for c in data.chunks(2) {
                let hi = u16::from(c[0]) << 8;
                x ^= hi | c.get(1).map_or(0, |b| u16::from(*b));
            }
            u64::from(x)
        }
    }
}

/// Internet checksum (RFC 1071): one's complement of the one's complement sum of 16-bit words.
pub fn csum16(data: &[u8]) -> u16 {
    let mut sum: u64 = 0;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u64::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u64::from(*last) << 8;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// CRC-16/ARC (poly 0x8005 reflected, init 0), bmv2's `crc16`.
pub fn crc16_arc(data: &[u8]) -> u16 {
    let mut crc = 0u16;
    for b in data {
        crc ^= u16::from(*b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xA001
            } else {
                crc >> 1
            };
        }
    }
    crc
}

/// CRC-32 (IEEE, reflected, init and xorout 0xffffffff), bmv2's `crc32`.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for b in data {
        crc ^= u32::from(*b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

pub fn load_calculations(
    root: &Value,
    layout: &Layout,
) -> R<(Vec<Calculation>, HashMap<String, u32>)> {
    let mut out = Vec::new();
    let mut by_name = HashMap::new();
    for (i, c) in json::arr_or_empty(root, "calculations", "top level")?
        .iter()
        .enumerate()
    {
        let ctx = label("calculations", i, c);
        let name = json::str_(c, "name", &ctx)?;
        by_name.insert(name.to_string(), out.len() as u32);
        out.push(load_calculation(c, layout, &ctx)?);
    }
    Ok((out, by_name))
}

/// One `{"algo": ..., "input": [...]}` object: a JSON calculation or an action selector's.
pub fn load_calculation(c: &Value, layout: &Layout, ctx: &str) -> R<Calculation> {
    let algo = match json::str_(c, "algo", ctx)? {
        "csum16" => Algo::Csum16,
        "crc16" => Algo::Crc16,
        "crc32" => Algo::Crc32,
        "identity" => Algo::Identity,
        "xor16" => Algo::Xor16,
        a => return err(ctx, format!("algorithm \"{a}\" not supported")),
    };
    let mut inputs = Vec::new();
    let mut payload_after = None;
    let list = json::arr(c, "input", ctx)?;
    for (i, inp) in list.iter().enumerate() {
        let ty = json::str_(inp, "type", ctx)?;
        if ty == "payload" {
            let last = inputs.iter().rev().find_map(|x| match x {
                Input::Field(f) => Some(f.header),
                Input::Varbit(_, h) => Some(*h),
                Input::Const { .. } => None,
            });
            if i + 1 != list.len() {
                return err(ctx, "a payload input must come last");
            }
            let Some(h) = last else {
                return err(ctx, "a payload input needs a header field before it");
            };
            payload_after = Some(h);
            continue;
        }
        let val = json::get(inp, "value", ctx)?;
        match ty {
            "field" => {
                let f = layout.resolve_field(val, ctx)?;
                inputs.push(match layout.varbit_of(f) {
                    Some(v) => Input::Varbit(v, f.header),
                    None => Input::Field(f),
                });
            }
            "hexstr" => {
                let width = json::u64_(inp, "bitwidth", ctx)?;
                if width == 0 || width > 64 {
                    return err(ctx, format!("constant input of {width} bits not supported"));
                }
                let v = json::hex_u64(json::as_str(val, ctx)?, ctx)?;
                inputs.push(Input::Const {
                    value: v & mask(width as u32),
                    width: width as u32,
                });
            }
            "header" => {
                let h = layout.header(json::as_str(val, ctx)?, ctx)?;
                let info = &layout.headers[h as usize];
                for f in &info.fields {
                    inputs.push(match info.varbit {
                        Some(v) if f.varbit => Input::Varbit(v, h),
                        _ => Input::Field(FieldRef {
                            word: f.word,
                            width: f.width,
                            header: h,
                        }),
                    });
                }
            }
            t => return err(ctx, format!("input type \"{t}\" not supported")),
        }
    }
    let bits: u64 = inputs
        .iter()
        .map(|i| match i {
            Input::Field(f) => u64::from(f.width),
            Input::Const { width, .. } => u64::from(*width),
            Input::Varbit(v, _) => u64::from(v.max_bits),
        })
        .sum();
    if bits > 1 << 20 {
        return err(ctx, format!("input of {bits} bits is too long"));
    }
    let mut calc = Calculation::new(algo, &inputs);
    calc.payload_after = payload_after;
    Ok(calc)
}

/// A `verify_checksum` / `update_checksum` call of the program.
#[derive(Debug, Clone)]
pub struct Checksum {
    pub target: FieldRef,
    pub calc: u32,
    pub verify: bool,
    pub update: bool,
    pub cond: Option<Expr>,
}

pub fn load_checksums(
    root: &Value,
    layout: &Layout,
    calcs: &HashMap<String, u32>,
) -> R<Vec<Checksum>> {
    let mut out = Vec::new();
    for (i, c) in json::arr_or_empty(root, "checksums", "top level")?
        .iter()
        .enumerate()
    {
        let ctx = label("checksums", i, c);
        if let Some(t) = json::opt_str(c, "type", &ctx)? {
            if t != "generic" {
                return err(&ctx, format!("checksum type \"{t}\" not supported"));
            }
        }
        let target = layout.resolve_field(json::get(c, "target", &ctx)?, &ctx)?;
        if target.is_wide() {
            return err(&ctx, "checksum target wider than 64 bits");
        }
        let cname = json::str_(c, "calculation", &ctx)?;
        let Some(calc) = calcs.get(cname) else {
            return err(&ctx, format!("unknown calculation \"{cname}\""));
        };
        let scope = Scope {
            layout,
            params: &[],
            lookahead: false,
        };
        let cond = match json::opt(c, "if_cond") {
            Some(e) => Some(expr::compile(e, &scope, &ctx)?),
            None => None,
        };
        // JSON from older p4c (format 2.7 and before) has neither flag: bmv2 then treated the
        // checksum as P4-14 calculated fields are, verified after parsing and updated before
        // deparsing
        let legacy = json::opt(c, "verify").is_none() && json::opt(c, "update").is_none();
        out.push(Checksum {
            target,
            calc: *calc,
            verify: json::bool_or(c, "verify", legacy, &ctx)?,
            update: json::bool_or(c, "update", legacy, &ctx)?,
            cond,
        });
    }
    Ok(out)
}

impl Checksum {
    pub fn applies(&self, st: &PacketState) -> bool {
        match &self.cond {
            None => true,
            Some(e) => {
                e.eval(&Env {
                    w: &st.w,
                    valid: &st.valid,
                    stack_next: &st.stack_next,
                    params: &[],
                    look: &[],
                }) != 0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vectors() {
        // RFC 1071 example header (checksum field zeroed) -> 0xb861
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(csum16(&h), 0xb861);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc16_arc(b"123456789"), 0xBB3D);
    }

    #[test]
    fn checksum_without_flags_verifies_and_updates() {
        use crate::testprog::{frame, load, skeleton};
        use serde_json::json;
        // older p4c: no "verify"/"update"; the checksum is checked and recomputed
        let mut j = skeleton(json!([]));
        j["header_types"].as_array_mut().unwrap().push(
            json!({"name": "c_t", "id": 3, "fields": [["a", 16, false], ["sum", 16, false]]}),
        );
        j["headers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "c", "id": 3, "header_type": "c_t", "metadata": false}));
        let ops = j["parsers"][0]["parse_states"][0]["parser_ops"]
            .as_array_mut()
            .unwrap();
        ops.push(json!({"op": "extract", "parameters": [{"type": "regular", "value": "c"}]}));
        j["deparsers"][0]["order"] = json!(["ethernet", "c"]);
        j["calculations"] = json!([{"name": "calc", "id": 0, "algo": "csum16",
            "input": [{"type": "field", "value": ["c", "a"]}]}]);
        j["checksums"] = json!([{"name": "cksum", "id": 0, "target": ["c", "sum"],
            "type": "generic", "calculation": "calc"}]);
        let mut p = load(&j);
        let mut st = p.new_state();
        let mut out = Vec::new();
        p.process(&mut st, &frame(0x0800, &[0x12, 0x34, 0, 0]), 1, 0, &mut out);
        assert_eq!(&out[14..], &[0x12, 0x34, 0xed, 0xcb], "updated: !0x1234");
        assert_eq!(
            p.stats().checksum_errors,
            1,
            "verified: the zero checksum was wrong"
        );
    }
}

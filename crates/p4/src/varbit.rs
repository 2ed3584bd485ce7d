//! Variable-length fields (P4-16 `varbit<W>`, bmv2's `"*"` fields): a header may end in one.
//!
//! The value lives in the word arena like a `bit<W>` field of its maximum width (right-aligned,
//! most significant word first) and its current length in bits in one more word after it, so a
//! header copy, a clone's copy and a packet reset carry or clear both with the words. Only the
//! ops made for varbit headers (`extract_VL` into a header or a stack, `assign_VL`, `==` of two
//! varbits, `add_header` / `remove_header`, a deparser or a checksum over such a header) read
//! the length; they are out of line, and programs without varbits run the ops they ran before.

use crate::bits::{bytes_to_words, words_to_bytes, write_bits};
use crate::codec::HeaderCodec;
use crate::expr::{Env, Expr, Scope};
use crate::json::{self, err, R};
use crate::layout::Layout;
use crate::parser::ErrorCodes;
use crate::state::PacketState;
use serde_json::Value;

/// Where a varbit field lives: its value words, its length word and its maximum width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VarRef {
    pub word: u32,
    pub words: u32,
    pub len_word: u32,
    pub max_bits: u32,
}

impl VarRef {
    /// Current length in bits (0 until extracted or assigned, as in bmv2).
    #[inline]
    pub fn len(&self, w: &[u64]) -> u32 {
        w[self.len_word as usize] as u32
    }

    fn value<'a>(&self, w: &'a [u64]) -> &'a [u64] {
        &w[self.word as usize..(self.word + self.words) as usize]
    }

    /// Appends the field's current bytes (its length is always whole bytes).
    pub fn emit(&self, w: &[u64], out: &mut Vec<u8>) {
        words_to_bytes(self.value(w), self.len(w), out);
    }

    /// `assign_VL`: value and length of `src` (another varbit of any maximum that fits).
    /// Out of line (as the other ops here) so the loops that dispatch ops stay as they were.
    #[cold]
    #[inline(never)]
    pub fn assign(&self, src: &VarRef, w: &mut [u64]) {
        // whole bytes that fit (JSON may pair varbits of different maxima)
        let len = src.len(w).min(self.max_bits / 8 * 8);
        let mut bytes = Vec::with_capacity(len.div_ceil(8) as usize);
        words_to_bytes(src.value(w), len, &mut bytes);
        self.set(&bytes, w);
    }

    /// Sets the field to `bytes` (big-endian; its length becomes their bit count).
    fn set(&self, bytes: &[u8], w: &mut [u64]) {
        let dst = &mut w[self.word as usize..(self.word + self.words) as usize];
        bytes_to_words(bytes, self.max_bits, dst);
        w[self.len_word as usize] = (bytes.len() * 8) as u64;
    }

    /// `==` of two varbits, as the P4-16 spec defines it: same length and same value.
    #[cold]
    #[inline(never)]
    pub fn equals(&self, other: &VarRef, w: &[u64]) -> bool {
        if self.len(w) != other.len(w) {
            return false;
        }
        let (a, b) = (self.value(w), other.value(w));
        // right-aligned values of different maxima: compare from the least significant word
        let n = a.len().max(b.len());
        (0..n).all(|k| {
            let at = |v: &[u64]| v.len().checked_sub(k + 1).map_or(0, |i| v[i]);
            at(a) == at(b)
        })
    }

    /// Writes the field's current bits at bit `off` of `data` (which has room); returns them.
    pub fn pack(&self, w: &[u64], data: &mut [u8], off: usize) -> u32 {
        let mut bytes = Vec::new();
        self.emit(w, &mut bytes);
        for (i, b) in bytes.iter().enumerate() {
            write_bits(data, off + 8 * i, 8, u64::from(*b));
        }
        8 * bytes.len() as u32
    }
}

/// Loads an `extract_VL` op: `[{"type": "regular" or "stack", "value": NAME}, {"type":
/// "expression", ...}]`, the header (or the stack's next element) ending in a varbit field;
/// returns where it goes, the length expression and the header's maximum bytes.
pub(crate) fn load_extract(
    hdr: &Value,
    len: &Value,
    scope: &Scope,
    ctx: &str,
) -> R<(VlTarget, Expr, u32)> {
    let l = scope.layout;
    let v = json::as_str(json::get(hdr, "value", ctx)?, ctx)?;
    let (into, h) = match json::str_(hdr, "type", ctx)? {
        "regular" => {
            let h = l.wire_header(v, ctx)?;
            if crate::union::siblings(l, h).is_some() {
                return err(ctx, "extract_VL of a header union member not supported");
            }
            (VlTarget::Header(h), h)
        }
        "stack" => match l.stack_by_name.get(v) {
            Some(&s) => (VlTarget::Stack(s), l.stacks[s as usize].headers[0]),
            None => return err(ctx, format!("unknown header stack \"{v}\"")),
        },
        t => return err(ctx, format!("extract_VL into \"{t}\" not supported")),
    };
    let info = &l.headers[h as usize];
    let Some(var) = info.varbit else {
        return err(ctx, format!("\"{v}\" has no varbit field"));
    };
    Ok((
        into,
        crate::expr::compile(len, scope, ctx)?,
        (info.bits + var.max_bits) / 8,
    ))
}

/// `add_header` / `remove_header` of a wire header ending in a varbit field: as in bmv2, the
/// packet's length moves by the header's current size (fixed bytes plus the varbit's).
#[derive(Debug, Clone, Copy)]
pub struct Validity {
    h: u32,
    fixed_bytes: u32,
    len_word: u32,
    valid: bool,
}

impl Validity {
    /// The op for header `h`, if it is a packet header with a varbit and in no union.
    pub fn of(l: &Layout, h: u32, valid: bool) -> Option<Validity> {
        let info = &l.headers[h as usize];
        let v = info.varbit.filter(|_| !info.metadata)?;
        if crate::union::siblings(l, h).is_some() {
            return None;
        }
        Some(Validity {
            h,
            fixed_bytes: info.bits / 8,
            len_word: v.len_word,
            valid,
        })
    }

    #[cold]
    #[inline(never)]
    pub fn apply(&self, st: &mut PacketState) {
        let bytes = self.fixed_bytes + st.w[self.len_word as usize] as u32 / 8;
        st.set_validity(self.h, self.valid, bytes as i32);
    }
}

/// bmv2's `extract_VL` of a header (or a stack's next element: StackOutOfBounds when there is
/// none, checked first): `len` (evaluated first; it may look ahead at the
/// header's own bits, `look_bits` of them) gives the varbit's length. It must be whole bytes
/// (else ParserInvalidArgument), the packet must hold the header (else PacketTooShort) and the
/// header must fit its `max_length` (else HeaderTooShort), checked in that order as bmv2 does.
pub(crate) struct Extract<'a> {
    pub into: VlTarget,
    pub len: &'a Expr,
    pub max_bytes: u32,
    pub look_bits: u32,
}

impl Extract<'_> {
    #[cold]
    #[inline(never)]
    pub(crate) fn run(
        &self,
        pkt: &[u8],
        cur: &mut usize,
        st: &mut PacketState,
        codecs: &[HeaderCodec],
        stacks: &[Vec<u32>],
        codes: &ErrorCodes,
    ) -> Result<(), u32> {
        let h = match self.into {
            VlTarget::Header(h) => h,
            VlTarget::Stack(s) => {
                let next = st.stack_next[s as usize] as usize;
                match stacks[s as usize].get(next) {
                    Some(h) => *h,
                    None => return Err(codes.stack_out_of_bounds),
                }
            }
        };
        if self.look_bits as usize > (pkt.len() - *cur) * 8 {
            return Err(codes.packet_too_short);
        }
        let env = Env {
            w: &st.w,
            valid: &st.valid,
            stack_next: &st.stack_next,
            params: &[],
            look: &pkt[*cur..],
        };
        let nbits = self.len.eval(&env);
        extract(h, nbits, self.max_bytes, pkt, cur, st, codecs, codes)?;
        if let VlTarget::Stack(s) = self.into {
            st.stack_next[s as usize] += 1;
        }
        Ok(())
    }
}

/// Where an `extract_VL` puts the header: a header, or the next element of a stack.
#[derive(Debug, Clone, Copy)]
pub enum VlTarget {
    Header(u32),
    Stack(u32),
}

#[allow(clippy::too_many_arguments)]
fn extract(
    h: u32,
    nbits: u64,
    max_bytes: u32,
    pkt: &[u8],
    cur: &mut usize,
    st: &mut PacketState,
    codecs: &[HeaderCodec],
    codes: &ErrorCodes,
) -> Result<(), u32> {
    let c = &codecs[h as usize];
    let Some(v) = c.varbit else {
        return Err(codes.invalid_argument);
    };
    if !nbits.is_multiple_of(8) {
        return Err(codes.invalid_argument);
    }
    let fixed = c.bytes as usize;
    let total = usize::try_from(nbits / 8)
        .ok()
        .and_then(|n| n.checked_add(fixed))
        .unwrap_or(usize::MAX);
    if pkt.len() - *cur < total {
        return Err(codes.packet_too_short);
    }
    if total > max_bytes as usize {
        return Err(codes.header_too_short);
    }
    c.extract(&pkt[*cur..*cur + fixed], &mut st.w);
    v.set(&pkt[*cur + fixed..*cur + total], &mut st.w);
    st.valid[h as usize] = true;
    *cur += total;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(word: u32, max_bits: u32) -> VarRef {
        let words = crate::bits::words_for(max_bits);
        VarRef {
            word,
            words,
            len_word: word + words,
            max_bits,
        }
    }

    #[test]
    fn set_emit_assign_and_equality_follow_the_length() {
        let (a, b) = (var(0, 320), var(6, 32));
        let mut w = vec![0u64; 8];
        let bytes: Vec<u8> = (1..=12).collect();
        a.set(&bytes, &mut w);
        assert_eq!(a.len(&w), 96);
        let mut out = Vec::new();
        a.emit(&w, &mut out);
        assert_eq!(out, bytes);
        b.set(&[0xab, 0xcd], &mut w);
        assert!(!a.equals(&b, &w), "lengths differ");
        a.assign(&b, &mut w);
        assert_eq!(a.len(&w), 16);
        assert!(a.equals(&b, &w) && b.equals(&a, &w));
        b.set(&[0x00, 0xab, 0xcd], &mut w);
        assert!(!a.equals(&b, &w), "same value, other length");
        let mut out = Vec::new();
        b.emit(&w, &mut out);
        assert_eq!(out, [0x00, 0xab, 0xcd], "leading zero bytes are kept");
        // into a smaller maximum: the whole bytes that fit (the low ones)
        let small = var(8, 12);
        let mut w2 = w.clone();
        w2.extend([0, 0]);
        small.assign(&b, &mut w2);
        assert_eq!(small.len(&w2), 8);
        let mut out = Vec::new();
        small.emit(&w2, &mut out);
        assert_eq!(out, [0xcd]);
    }

    #[test]
    fn pack_writes_the_current_bytes_at_any_bit_offset() {
        let a = var(0, 64);
        let mut w = vec![0u64; 2];
        a.set(&[0xf0, 0x0f], &mut w);
        let mut data = [0u8; 4];
        assert_eq!(a.pack(&w, &mut data, 4), 16);
        assert_eq!(data, [0x0f, 0x00, 0xf0, 0x00]);
    }
}

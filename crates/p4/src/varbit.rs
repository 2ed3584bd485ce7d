//! Variable-length fields (P4-16 `varbit<W>`, bmv2's `"*"` fields): a header may end in one.
//!
//! The value lives in the word arena like a `bit<W>` field of its maximum width (right-aligned,
//! most significant word first) and its current length in bits in one more word after it, so a
//! header copy, a clone's copy and a packet reset carry or clear both with the words. Only the
//! ops made for varbit headers (`extract_VL` into a header or a stack, `assign_VL`, `==` of two
//! varbits, `add_header` / `remove_header`, a deparser or a checksum over such a header) read
//! the length; they are out of line, and programs without varbits run the ops they ran before. Those ops that need the parser or
//! the layout are in crate::varbit_ops; this module is the field itself.

use crate::bits::{bytes_to_words, words_to_bytes, write_bits};

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
    pub(crate) fn set(&self, bytes: &[u8], w: &mut [u64]) {
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

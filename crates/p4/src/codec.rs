//! Header wire codec: moves a header's bits between packet bytes and the word arena.

use crate::bits::{read_bits, words_for, write_bits};
use crate::layout::Layout;

#[derive(Debug, Clone, Copy)]
struct Chunk {
    word: u32,
    bit_off: u32,
    width: u32,
    /// Whole bytes of a byte-aligned chunk (1..=8), else 0: moved byte by byte, with no call to
    /// memcpy (a variable-length copy per field was an eighth of the packet path).
    aligned_bytes: u32,
}

/// Per-header list of <= 64-bit chunks (wide fields are split, most significant word first).
#[derive(Debug, Clone)]
pub struct HeaderCodec {
    chunks: Vec<Chunk>,
    pub bytes: u32,
}

impl HeaderCodec {
    pub fn build(l: &Layout) -> Vec<HeaderCodec> {
        l.headers
            .iter()
            .map(|h| {
                let mut chunks = Vec::new();
                for f in &h.fields {
                    let n = words_for(f.width);
                    let top = f.width - 64 * (n - 1);
                    let mut off = f.bit_off;
                    for k in 0..n {
                        let w = if k == 0 { top } else { 64 };
                        let aligned = off % 8 == 0 && w % 8 == 0;
                        chunks.push(Chunk {
                            word: f.word + k,
                            bit_off: off,
                            width: w,
                            aligned_bytes: if aligned { w / 8 } else { 0 },
                        });
                        off += w;
                    }
                }
                HeaderCodec {
                    chunks,
                    bytes: h.bits / 8,
                }
            })
            .collect()
    }

    /// Reads the header from `buf` (which holds at least `bytes` bytes) into `w`.
    #[inline]
    pub fn extract(&self, buf: &[u8], w: &mut [u64]) {
        for c in &self.chunks {
            w[c.word as usize] = if c.aligned_bytes > 0 {
                let o = (c.bit_off / 8) as usize;
                buf[o..o + c.aligned_bytes as usize]
                    .iter()
                    .fold(0u64, |v, &b| (v << 8) | u64::from(b))
            } else {
                read_bits(buf, c.bit_off as usize, c.width)
            };
        }
    }

    /// Appends the header's bytes to `out`.
    #[inline]
    pub fn emit(&self, w: &[u64], out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + self.bytes as usize, 0);
        let dst = &mut out[start..];
        for c in &self.chunks {
            // byte-aligned whole bytes, the common case
            if c.aligned_bytes > 0 {
                let nb = c.aligned_bytes as usize;
                let o = (c.bit_off / 8) as usize;
                let v = w[c.word as usize];
                for (i, b) in dst[o..o + nb].iter_mut().enumerate() {
                    *b = (v >> (8 * (nb - 1 - i))) as u8;
                }
            } else {
                write_bits(dst, c.bit_off as usize, c.width, w[c.word as usize]);
            }
        }
    }
}

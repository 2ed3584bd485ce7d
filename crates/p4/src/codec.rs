//! Header wire codec: moves a header's bits between packet bytes and the word arena.
//!
//! At load time a header's fields are cut into <= 64-bit chunks (wide fields split, most
//! significant word first) and runs of chunks that start and end on a byte boundary within 8
//! bytes are merged into groups: IPv4's 13 fields become 3 groups, Ethernet's 3 become 2. A
//! group moves as one big-endian u64 and is split into fields with shifts and masks; only
//! chunks that no group can hold (a run starting mid-byte that is wider than 8 bytes) take the
//! bit-by-bit path.

use crate::bits::{mask, read_bits, words_for, write_bits};
use crate::layout::Layout;

#[derive(Debug, Clone, Copy)]
struct Chunk {
    word: u32,
    bit_off: u32,
    width: u32,
}

/// One field chunk inside a group: its word and its place counted from the group's LSB.
#[derive(Debug, Clone, Copy)]
struct Part {
    word: u32,
    shift: u32,
    width: u32,
}

#[derive(Debug, Clone)]
enum Step {
    /// `bytes` (1..=8) whole bytes at `byte_off` holding `parts`.
    Group {
        byte_off: u32,
        bytes: u32,
        parts: Box<[Part]>,
    },
    /// A chunk no group can hold.
    Bits(Chunk),
}

#[derive(Debug, Clone)]
pub struct HeaderCodec {
    steps: Vec<Step>,
    /// Wire bytes of the fixed-width fields (all of the header unless it has a varbit).
    pub bytes: u32,
    /// The header's varbit field, which follows the fixed fields on the wire.
    pub varbit: Option<crate::varbit::VarRef>,
}

fn chunks_of(h: &crate::layout::HeaderInfo) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    for f in h.fields.iter().filter(|f| !f.varbit) {
        let n = words_for(f.width);
        let top = f.width - 64 * (n - 1);
        let mut off = f.bit_off;
        for k in 0..n {
            let width = if k == 0 { top } else { 64 };
            chunks.push(Chunk {
                word: f.word + k,
                bit_off: off,
                width,
            });
            off += width;
        }
    }
    chunks
}

/// Greedy grouping: from a byte-aligned chunk, take the longest run of chunks that ends on a
/// byte boundary within 64 bits.
fn steps_of(chunks: &[Chunk]) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut i = 0;
    while i < chunks.len() {
        let start = chunks[i].bit_off;
        let mut last = None;
        if start.is_multiple_of(8) {
            let mut j = i;
            while j < chunks.len() && chunks[j].bit_off + chunks[j].width - start <= 64 {
                if (chunks[j].bit_off + chunks[j].width).is_multiple_of(8) {
                    last = Some(j);
                }
                j += 1;
            }
        }
        let Some(last) = last else {
            steps.push(Step::Bits(chunks[i]));
            i += 1;
            continue;
        };
        let end = chunks[last].bit_off + chunks[last].width;
        let parts = chunks[i..=last]
            .iter()
            .map(|c| Part {
                word: c.word,
                shift: end - c.bit_off - c.width,
                width: c.width,
            })
            .collect();
        steps.push(Step::Group {
            byte_off: start / 8,
            bytes: (end - start) / 8,
            parts,
        });
        i = last + 1;
    }
    steps
}

impl HeaderCodec {
    pub fn build(l: &Layout) -> Vec<HeaderCodec> {
        l.headers
            .iter()
            .map(|h| HeaderCodec {
                steps: steps_of(&chunks_of(h)),
                bytes: h.bits / 8,
                varbit: h.varbit,
            })
            .collect()
    }

    /// Reads the header from `buf` (which holds at least `bytes` bytes) into `w`.
    #[inline]
    pub fn extract(&self, buf: &[u8], w: &mut [u64]) {
        for s in &self.steps {
            match s {
                Step::Group {
                    byte_off,
                    bytes,
                    parts,
                } => {
                    let o = *byte_off as usize;
                    let v = buf[o..o + *bytes as usize]
                        .iter()
                        .fold(0u64, |v, &b| (v << 8) | u64::from(b));
                    for p in parts.iter() {
                        w[p.word as usize] = (v >> p.shift) & mask(p.width);
                    }
                }
                Step::Bits(c) => {
                    w[c.word as usize] = read_bits(buf, c.bit_off as usize, c.width);
                }
            }
        }
    }

    /// Appends the header's bytes to `out`, its varbit field's current bytes too.
    pub fn emit_all(&self, w: &[u64], out: &mut Vec<u8>) {
        self.emit(w, out);
        if let Some(v) = &self.varbit {
            v.emit(w, out);
        }
    }

    /// Appends the header's fixed-width bytes to `out` (all of it for a header without a
    /// varbit: the deparser of a program without varbits calls only this).
    #[inline]
    pub fn emit(&self, w: &[u64], out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + self.bytes as usize, 0);
        let dst = &mut out[start..];
        for s in &self.steps {
            match s {
                Step::Group {
                    byte_off,
                    bytes,
                    parts,
                } => {
                    let v = parts.iter().fold(0u64, |v, p| {
                        v | ((w[p.word as usize] & mask(p.width)) << p.shift)
                    });
                    let (o, n) = (*byte_off as usize, *bytes as usize);
                    dst[o..o + n].copy_from_slice(&v.to_be_bytes()[8 - n..]);
                }
                Step::Bits(c) => {
                    write_bits(dst, c.bit_off as usize, c.width, w[c.word as usize]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Widths chosen to produce groups, a wide field split in words, and unaligned runs longer
    /// than 8 bytes (the bit-by-bit path); extract and emit agree with read_bits/write_bits.
    #[test]
    fn groups_and_bit_path_match_bitwise_reference() {
        let widths = [4u32, 4, 8, 16, 3, 13, 48, 128, 4, 64, 60, 7, 1, 72, 8];
        let mut chunks = Vec::new();
        let (mut off, mut word) = (0u32, 0u32);
        for &wd in &widths {
            let n = words_for(wd);
            let top = wd - 64 * (n - 1);
            for k in 0..n {
                let width = if k == 0 { top } else { 64 };
                chunks.push(Chunk {
                    word,
                    bit_off: off,
                    width,
                });
                word += 1;
                off += width;
            }
        }
        assert!(off.is_multiple_of(8));
        let codec = HeaderCodec {
            steps: steps_of(&chunks),
            bytes: off / 8,
            varbit: None,
        };
        assert!(codec.steps.iter().any(|s| matches!(s, Step::Bits(_))));
        assert!(codec.steps.len() < chunks.len());
        let pkt: Vec<u8> = (0..off / 8).map(|i| (i * 73 + 29) as u8).collect();
        let mut w = vec![0u64; word as usize];
        codec.extract(&pkt, &mut w);
        for c in &chunks {
            assert_eq!(
                w[c.word as usize],
                read_bits(&pkt, c.bit_off as usize, c.width),
                "{c:?}"
            );
        }
        let mut out = vec![0xee];
        codec.emit(&w, &mut out);
        assert_eq!(&out[1..], &pkt[..]);
        // values wider than their field are masked on the way out
        let mut wide = w.clone();
        wide[0] |= 0xf0;
        let mut out2 = Vec::new();
        codec.emit(&wide, &mut out2);
        assert_eq!(out2, pkt);
    }
}

//! Bit-level reads and writes on big-endian byte buffers (network order, MSB first).

/// All-ones mask of `width` bits (width 0..=64).
#[inline]
pub fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// Reads `width` (<= 64) bits starting at bit `bit_off`. The caller guarantees the span fits.
#[inline]
pub fn read_bits(buf: &[u8], bit_off: usize, width: u32) -> u64 {
    if width == 0 {
        return 0;
    }
    let start = bit_off / 8;
    let end = (bit_off + width as usize).div_ceil(8);
    let shift = (end - start) * 8 - (bit_off % 8) - width as usize;
    if end - start <= 8 {
        // the common case in 64-bit arithmetic (u128 shifts cost several instructions each)
        let acc = buf[start..end]
            .iter()
            .fold(0u64, |a, &b| (a << 8) | u64::from(b));
        return (acc >> shift) & mask(width);
    }
    let mut acc: u128 = 0;
    for b in &buf[start..end] {
        acc = (acc << 8) | u128::from(*b);
    }
    ((acc >> shift) as u64) & mask(width)
}

/// Writes the low `width` (<= 64) bits of `value` at bit `bit_off`, keeping neighbouring bits.
#[inline]
pub fn write_bits(buf: &mut [u8], bit_off: usize, width: u32, value: u64) {
    if width == 0 {
        return;
    }
    let start = bit_off / 8;
    let end = (bit_off + width as usize).div_ceil(8);
    let span = &mut buf[start..end];
    if span.len() <= 8 {
        let shift = span.len() * 8 - (bit_off % 8) - width as usize;
        let m = mask(width) << shift;
        let acc = span.iter().fold(0u64, |a, &b| (a << 8) | u64::from(b));
        let acc = (acc & !m) | ((value << shift) & m);
        let n = span.len();
        for (i, b) in span.iter_mut().enumerate() {
            *b = (acc >> (8 * (n - 1 - i))) as u8;
        }
        return;
    }
    let mut acc: u128 = 0;
    for b in span.iter() {
        acc = (acc << 8) | u128::from(*b);
    }
    let shift = span.len() * 8 - (bit_off % 8) - width as usize;
    let m = u128::from(mask(width)) << shift;
    acc = (acc & !m) | ((u128::from(value & mask(width)) << shift) & m);
    for (i, b) in span.iter_mut().rev().enumerate() {
        *b = (acc >> (8 * i)) as u8;
    }
}

/// Number of 64-bit words holding a field of `width` bits (at least one).
#[inline]
pub fn words_for(width: u32) -> u32 {
    width.div_ceil(64).max(1)
}

/// Big-endian bytes (any length) to words of a `width`-bit value; false if it does not fit.
pub fn bytes_to_words(bytes: &[u8], width: u32, out: &mut [u64]) -> bool {
    let n = words_for(width) as usize;
    debug_assert_eq!(out.len(), n);
    out.iter_mut().for_each(|w| *w = 0);
    let nbits = width as usize;
    for (i, b) in bytes.iter().rev().enumerate() {
        if *b == 0 {
            continue;
        }
        // bit position of this byte's LSB from the value's LSB
        let lsb = i * 8;
        let highest = lsb + 8 - b.leading_zeros() as usize;
        if highest > nbits {
            return false;
        }
        let word_from_end = lsb / 64;
        let idx = n - 1 - word_from_end;
        out[idx] |= u64::from(*b) << (lsb % 64);
    }
    true
}

/// Words of a `width`-bit value to exactly `ceil(width/8)` big-endian bytes.
pub fn words_to_bytes(words: &[u64], width: u32, out: &mut Vec<u8>) {
    let nbytes = width.div_ceil(8) as usize;
    let n = words.len();
    for k in (0..nbytes).rev() {
        let lsb = k * 8;
        let word_from_end = lsb / 64;
        let v = if word_from_end < n {
            (words[n - 1 - word_from_end] >> (lsb % 64)) as u8
        } else {
            0
        };
        out.push(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_write_unaligned() {
        let mut b = [0u8; 4];
        write_bits(&mut b, 0, 4, 4);
        write_bits(&mut b, 4, 4, 5);
        assert_eq!(b[0], 0x45);
        write_bits(&mut b, 8, 3, 0b101);
        write_bits(&mut b, 11, 13, 0x1abc);
        assert_eq!(read_bits(&b, 8, 3), 0b101);
        assert_eq!(read_bits(&b, 11, 13), 0x1abc);
        assert_eq!(read_bits(&b, 0, 4), 4);
        // neighbours untouched
        write_bits(&mut b, 8, 3, 0);
        assert_eq!(read_bits(&b, 11, 13), 0x1abc);
    }

    /// Every offset and width against a bit-by-bit reference: the 64-bit fast paths and the
    /// 128-bit path agree with it, and writes keep the neighbouring bits.
    #[test]
    fn fast_paths_match_bitwise_reference() {
        let pattern: Vec<u8> = (0..12u32).map(|i| (i * 37 + 11) as u8).collect();
        let bit = |b: &[u8], i: usize| (b[i / 8] >> (7 - i % 8)) & 1;
        for off in 0..24 {
            for width in 1..=64u32 {
                let want = (0..width as usize)
                    .fold(0u64, |v, k| (v << 1) | u64::from(bit(&pattern, off + k)));
                assert_eq!(
                    read_bits(&pattern, off, width),
                    want,
                    "off {off} width {width}"
                );
                let mut b = pattern.clone();
                let value = 0x9e37_79b9_7f4a_7c15u64 & mask(width);
                write_bits(&mut b, off, width, value);
                assert_eq!(read_bits(&b, off, width), value, "off {off} width {width}");
                for i in (0..pattern.len() * 8).filter(|&i| i < off || i >= off + width as usize) {
                    assert_eq!(
                        bit(&b, i),
                        bit(&pattern, i),
                        "bit {i} off {off} width {width}"
                    );
                }
            }
        }
    }

    #[test]
    fn read_64_unaligned() {
        let b = [0xffu8; 10];
        assert_eq!(read_bits(&b, 3, 64), u64::MAX);
        let mut c = [0u8; 10];
        write_bits(&mut c, 5, 64, 0x8000_0000_0000_0001);
        assert_eq!(read_bits(&c, 5, 64), 0x8000_0000_0000_0001);
        assert_eq!(read_bits(&c, 0, 5), 0);
    }

    #[test]
    fn wide_words_roundtrip() {
        let bytes: Vec<u8> = (1..=16).collect();
        let mut w = [0u64; 2];
        assert!(bytes_to_words(&bytes, 128, &mut w));
        assert_eq!(w[0], 0x0102030405060708);
        let mut out = Vec::new();
        words_to_bytes(&w, 128, &mut out);
        assert_eq!(out, bytes);
        let mut one = [0u64; 1];
        assert!(!bytes_to_words(&[0x02, 0x00], 9, &mut one));
        assert!(bytes_to_words(&[0x01, 0xff], 9, &mut one));
        assert_eq!(one[0], 0x1ff);
    }
}

//! A small, fast, non-cryptographic hasher for table keys (the Firefox/rustc "Fx" scheme).
//! Keys come from packets, but table sizes are bounded by the control plane, so hash flooding
//! can only slow lookups of one table, not grow memory.

use std::hash::{BuildHasherDefault, Hasher};

const K: u64 = 0x517c_c1b7_2722_0a95;

#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    h: u64,
}

impl FxHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.h = (self.h.rotate_left(5) ^ w).wrapping_mul(K);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut c = bytes.chunks_exact(8);
        for x in &mut c {
            let mut a = [0u8; 8];
            a.copy_from_slice(x);
            self.add(u64::from_le_bytes(a));
        }
        let r = c.remainder();
        if !r.is_empty() {
            let mut a = [0u8; 8];
            a[..r.len()].copy_from_slice(r);
            self.add(u64::from_le_bytes(a));
        }
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.h
    }
}

pub type FxBuild = BuildHasherDefault<FxHasher>;
pub type FxMap<K, V> = std::collections::HashMap<K, V, FxBuild>;

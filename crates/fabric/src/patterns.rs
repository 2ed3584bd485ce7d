//! Communication patterns over ranks 0..n, as phases of (source rank, destination rank) flows.

use crate::bail;
use crate::error::Result;

pub const PATTERNS: &[&str] = &[
    "bisect",
    "shift",
    "all-to-all",
    "bruck",
    "recdbl",
    "2-neighbor",
    "4-neighbor",
    "6-neighbor",
];

/// splitmix64: small, seedable, good enough for shuffles.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
}

pub type Phase = Vec<(u32, u32)>;

/// Phases of a pattern on n ranks. `rng` is used by the random ones (bisect).
pub fn phases(pattern: &str, n: usize, rng: &mut Rng) -> Result<Vec<Phase>> {
    if n < 2 {
        bail!("a pattern needs at least 2 nodes");
    }
    let n32 = n as u32;
    let shift = |k: u32| (0..n32).map(|i| (i, (i + k) % n32)).collect::<Phase>();
    Ok(match pattern {
        // Random pairs exchanging in both directions (an odd node out stays idle).
        "bisect" => {
            let mut r: Vec<u32> = (0..n32).collect();
            rng.shuffle(&mut r);
            vec![r
                .chunks_exact(2)
                .flat_map(|c| [(c[0], c[1]), (c[1], c[0])])
                .collect()]
        }
        "shift" => (1..n32).map(shift).collect(),
        "all-to-all" => vec![(0..n32)
            .flat_map(|i| (0..n32).filter(move |&j| j != i).map(move |j| (i, j)))
            .collect()],
        "bruck" => (0..)
            .map(|j| 1u32 << j)
            .take_while(|&k| k < n32)
            .map(shift)
            .collect(),
        "recdbl" => (0..)
            .map(|j| 1u32 << j)
            .take_while(|&k| k < n32)
            .map(|k| {
                (0..n32)
                    .map(|i| (i, i ^ k))
                    .filter(|&(_, j)| j < n32)
                    .collect()
            })
            .collect(),
        "2-neighbor" | "4-neighbor" | "6-neighbor" => {
            let half = (pattern.as_bytes()[0] - b'0') as u32 / 2;
            let mut ph = Phase::new();
            for i in 0..n32 {
                for d in 1..=half.min((n32 - 1) / 2).max(1) {
                    ph.push((i, (i + d) % n32));
                    ph.push((i, (i + n32 - d) % n32));
                }
            }
            ph.sort_unstable();
            ph.dedup();
            vec![ph]
        }
        _ => bail!(
            "unknown pattern {pattern:?} (available: {})",
            PATTERNS.join(", ")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let mut r = Rng::new(1);
        assert_eq!(phases("bruck", 8, &mut r).unwrap().len(), 3);
        assert_eq!(phases("bruck", 8, &mut r).unwrap()[2][1], (1, 5));
        assert_eq!(phases("recdbl", 8, &mut r).unwrap()[1][0], (0, 2));
        assert_eq!(phases("shift", 5, &mut r).unwrap().len(), 4);
        assert_eq!(phases("all-to-all", 4, &mut r).unwrap()[0].len(), 12);
        assert_eq!(phases("4-neighbor", 10, &mut r).unwrap()[0].len(), 40);
        let b = &phases("bisect", 6, &mut r).unwrap()[0];
        let mut srcs: Vec<u32> = b.iter().map(|f| f.0).collect();
        srcs.sort();
        assert_eq!(srcs, (0..6).collect::<Vec<_>>());
        assert!(b.iter().all(|&(a, c)| b.contains(&(c, a)) && a != c));
        assert!(phases("zigzag", 4, &mut r).is_err());
    }

    #[test]
    fn rng_is_deterministic_and_spread() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        assert_eq!(a.next_u64(), b.next_u64());
        let mut hits = [0; 4];
        for _ in 0..4000 {
            hits[a.below(4)] += 1;
        }
        assert!(hits.iter().all(|&h| h > 900));
    }
}

//! Queueing delay per egress queue, measured by the TM at dequeue: a log-linear histogram with four
//! buckets per power of two (each bucket at most 25 % wide), so quantiles are known to within that
//! and recording costs a few instructions. Readers get the raw buckets and can merge them.

/// Bucket `i` holds delays in `[lower(i), lower(i + 1))` nanoseconds.
pub const BUCKETS: usize = 252;

#[derive(Clone, Debug)]
/// Queueing delays of one queue: a log-linear histogram (4 buckets per octave) with count, sum
/// and maximum.
pub struct DelayHistogram {
    counts: [u64; BUCKETS],
    count: u64,
    sum_ns: u128,
    max_ns: u64,
}

impl Default for DelayHistogram {
    fn default() -> Self {
        DelayHistogram {
            counts: [0; BUCKETS],
            count: 0,
            sum_ns: 0,
            max_ns: 0,
        }
    }
}

/// The bucket of a delay: exact below 4 ns, then 4 sub-buckets per octave.
pub fn bucket(ns: u64) -> usize {
    if ns < 4 {
        return ns as usize;
    }
    let k = 63 - ns.leading_zeros() as usize; // floor(log2 ns) >= 2
    let sub = ((ns >> (k - 2)) & 3) as usize;
    4 * (k - 1) + sub
}

/// The smallest delay that falls in bucket `i`.
pub fn lower(i: usize) -> u64 {
    if i < 4 {
        return i as u64;
    }
    let (k, sub) = (i / 4 + 1, (i % 4) as u64);
    (4 + sub) << (k - 2)
}

impl DelayHistogram {
    /// Count one packet that waited `ns`.
    pub fn record(&mut self, ns: u64) {
        self.counts[bucket(ns)] += 1;
        self.count += 1;
        self.sum_ns += u128::from(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    /// Packets recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The longest wait recorded.
    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    /// The mean wait (0 when empty).
    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }

    /// The sum of all waits.
    pub fn sum_ns(&self) -> u128 {
        self.sum_ns
    }

    /// The `q` quantile (0..=1), as the middle of its bucket, never above the maximum seen.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let hi = if i + 1 < BUCKETS {
                    lower(i + 1)
                } else {
                    u64::MAX
                };
                let mid = lower(i) + (hi - lower(i)) / 2;
                return mid.min(self.max_ns);
            }
        }
        self.max_ns
    }

    /// Non-empty buckets as (index, count).
    pub fn nonempty(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (i, c))
    }

    /// Forget everything recorded.
    pub fn reset(&mut self) {
        *self = DelayHistogram::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_at_most_a_quarter_wide() {
        for i in 0..BUCKETS - 1 {
            assert!(lower(i) < lower(i + 1), "bucket {i}");
            assert_eq!(bucket(lower(i)), i);
            assert_eq!(bucket(lower(i + 1) - 1), i);
            if i >= 4 {
                assert!((lower(i + 1) - lower(i)) as f64 <= 0.25 * lower(i) as f64);
            }
        }
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn quantiles_of_a_known_mix() {
        let mut h = DelayHistogram::default();
        for _ in 0..990 {
            h.record(10_000);
        }
        for _ in 0..10 {
            h.record(1_000_000);
        }
        let p50 = h.quantile_ns(0.5) as f64;
        let p999 = h.quantile_ns(0.999) as f64;
        assert!((p50 - 10_000.0).abs() <= 0.125 * 10_000.0, "{p50}");
        assert!((p999 - 1e6).abs() <= 0.125 * 1e6, "{p999}");
        assert_eq!(h.max_ns(), 1_000_000);
        assert_eq!(h.count(), 1000);
        assert!((h.mean_ns() - 19_900.0).abs() < 1e-6);
    }
}

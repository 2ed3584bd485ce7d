//! Log-linear histogram of nanosecond values: exact below 2048 ns, then 1024 buckets per power
//! of two (relative error under 0.1 %), so percentiles of millions of samples cost 0.5 MiB.

const SUB: u64 = 1024;

pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
    max: u64,
    sum: f64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    pub fn new() -> Self {
        Histogram {
            counts: vec![0; (2 * SUB + 54 * SUB) as usize],
            total: 0,
            max: 0,
            sum: 0.0,
        }
    }

    fn index(v: u64) -> usize {
        if v < 2 * SUB {
            return v as usize;
        }
        let shift = 63 - v.leading_zeros() as u64 - 10; // >= 1
        (2 * SUB + (shift - 1) * SUB + ((v >> shift) - SUB)) as usize
    }

    /// The largest value that falls in bucket `i` (percentiles report this: never optimistic).
    fn upper(i: usize) -> u64 {
        let i = i as u64;
        if i < 2 * SUB {
            return i;
        }
        let shift = (i - 2 * SUB) / SUB + 1;
        let mantissa = (i - 2 * SUB) % SUB + SUB;
        let top = (u128::from(mantissa + 1) << shift) - 1;
        u64::try_from(top).unwrap_or(u64::MAX)
    }

    pub fn record(&mut self, v: u64) {
        self.counts[Self::index(v)] += 1;
        self.total += 1;
        self.max = self.max.max(v);
        self.sum += v as f64;
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.sum / self.total as f64
        }
    }

    /// The value at quantile `q` (0..=1), at most 0.1 % above the true one, never above the max.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::upper(i).min(self.max);
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_for_small_values_and_tight_for_large() {
        let mut h = Histogram::new();
        for v in 1..=1000 {
            h.record(v);
        }
        assert_eq!(h.quantile(0.5), 500);
        assert_eq!(h.quantile(0.99), 990);
        assert_eq!(h.quantile(1.0), 1000);
        let mut h = Histogram::new();
        for v in [123_456_789u64, 5_000_000, 77_777] {
            h.record(v);
        }
        let p = h.quantile(0.5);
        assert!(p >= 5_000_000 && p as f64 <= 5_000_000.0 * 1.001, "{p}");
        assert_eq!(h.quantile(1.0), 123_456_789);
    }

    #[test]
    fn bucket_bounds_are_consistent() {
        for v in [0u64, 1, 2047, 2048, 2049, 4095, 4096, 1 << 40, u64::MAX / 2] {
            let i = Histogram::index(v);
            assert!(Histogram::upper(i) >= v, "{v}");
            if i > 0 {
                assert!(Histogram::upper(i - 1) < v, "{v}");
            }
        }
    }
}

//! Log-linear histogram of nanosecond values: exact below 2 x 2^B, then 2^B buckets per power of
//! two, so a bucket is at most 1/2^B of its lower bound wide. One type for the switch's
//! per-queue delays (B = 2: 252 buckets, a few instructions a record, raw buckets merged by
//! readers) and the simulator's (B = 10: 56,320 buckets, under 0.1 % relative error).

/// A log-linear histogram with 2^B buckets per power of two, with count, sum and maximum. `N`
/// must be `2^B x (65 - B)` (checked when one is made): the buckets live in the value, so
/// recording indexes an array in place (a large one belongs in a Box).
#[derive(Clone, Debug)]
pub struct LogHistogram<const B: u32, const N: usize> {
    counts: [u64; N],
    count: u64,
    sum: u128,
    max: u64,
}

/// Where in its bucket a quantile is reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantilePoint {
    /// The bucket's middle: within half a bucket either way.
    Middle,
    /// The bucket's largest value: never optimistic.
    Upper,
}

impl<const B: u32, const N: usize> Default for LogHistogram<B, N> {
    fn default() -> Self {
        const {
            assert!(
                N == (1usize << B) * (65 - B as usize),
                "N must be 2^B x (65 - B)"
            )
        };
        LogHistogram {
            counts: [0; N],
            count: 0,
            sum: 0,
            max: 0,
        }
    }
}

impl<const B: u32, const N: usize> LogHistogram<B, N> {
    const SUB: u64 = 1 << B;
    /// Buckets: every u64 value has one.
    pub const BUCKETS: usize = N;

    /// The bucket of a value.
    #[inline]
    pub fn bucket(v: u64) -> usize {
        if v < 2 * Self::SUB {
            return v as usize;
        }
        // v >= 2^(B+1), so its top bit k = 63 - lz is > B and shift = k - B >= 1; the B bits
        // below the top one pick the bucket within the octave (masked, the index stays < N)
        let shift = (63 - v.leading_zeros() - B) as usize;
        let sub = (v >> shift) as usize & (Self::SUB as usize - 1);
        (Self::SUB as usize) * (shift + 1) + sub
    }

    /// The smallest value that falls in bucket `i`.
    pub fn lower(i: usize) -> u64 {
        let i = i as u64;
        if i < 2 * Self::SUB {
            return i;
        }
        let shift = i / Self::SUB - 1;
        (i % Self::SUB + Self::SUB) << shift
    }

    /// The largest value that falls in bucket `i`.
    pub fn upper(i: usize) -> u64 {
        if i + 1 >= Self::BUCKETS {
            u64::MAX
        } else {
            Self::lower(i + 1) - 1
        }
    }

    /// Count one value.
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[Self::bucket(v)] += 1;
        self.count += 1;
        self.sum += u128::from(v);
        self.max = self.max.max(v);
    }

    /// Values recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The largest value recorded (0 when empty).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The sum of all values.
    pub fn sum(&self) -> u128 {
        self.sum
    }

    /// The mean (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// The `q` quantile (0..=1) at `point` of its bucket, never above the maximum (0 when empty).
    pub fn quantile(&self, q: f64, point: QuantilePoint) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = (Self::lower(i), Self::upper(i));
                let v = match point {
                    QuantilePoint::Upper => hi,
                    QuantilePoint::Middle => lo + (hi - lo).div_ceil(2),
                };
                return v.min(self.max);
            }
        }
        self.max
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
        self.counts.fill(0);
        self.count = 0;
        self.sum = 0;
        self.max = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contiguous<const B: u32, const N: usize>() {
        let h = LogHistogram::<B, N>::BUCKETS;
        for i in 0..h - 1 {
            let (lo, next) = (
                LogHistogram::<B, N>::lower(i),
                LogHistogram::<B, N>::lower(i + 1),
            );
            assert!(lo < next, "bucket {i}");
            assert_eq!(LogHistogram::<B, N>::bucket(lo), i);
            assert_eq!(LogHistogram::<B, N>::bucket(next - 1), i);
            assert_eq!(LogHistogram::<B, N>::upper(i), next - 1);
            if i >= 2 << B {
                assert!(
                    (next - lo) as f64 <= lo as f64 / (1u64 << B) as f64,
                    "bucket {i}"
                );
            }
        }
        assert_eq!(LogHistogram::<B, N>::bucket(u64::MAX), h - 1);
        assert_eq!(LogHistogram::<B, N>::upper(h - 1), u64::MAX);
    }

    #[test]
    fn buckets_are_contiguous_and_cover_every_value() {
        contiguous::<2, 252>();
        contiguous::<10, 56320>();
        assert_eq!(LogHistogram::<2, 252>::BUCKETS, 252);
        // the switch's published bounds: exact below 8, then 4 per octave
        assert_eq!(LogHistogram::<2, 252>::lower(8), 8);
        assert_eq!(LogHistogram::<2, 252>::lower(9), 10);
        assert_eq!(LogHistogram::<2, 252>::lower(12), 16);
    }

    #[test]
    fn quantiles_exact_for_small_values_and_tight_for_large() {
        let mut h = Box::<LogHistogram<10, 56320>>::default();
        for v in 1..=1000 {
            h.record(v);
        }
        assert_eq!(h.quantile(0.5, QuantilePoint::Upper), 500);
        assert_eq!(h.quantile(0.99, QuantilePoint::Upper), 990);
        assert_eq!(h.quantile(1.0, QuantilePoint::Upper), 1000);
        let mut h = Box::<LogHistogram<10, 56320>>::default();
        for v in [123_456_789u64, 5_000_000, 77_777] {
            h.record(v);
        }
        let p = h.quantile(0.5, QuantilePoint::Upper);
        assert!(p >= 5_000_000 && p as f64 <= 5_000_000.0 * 1.001, "{p}");
        assert_eq!(h.quantile(1.0, QuantilePoint::Upper), 123_456_789);
    }

    #[test]
    fn middle_quantiles_of_a_known_mix_and_reset() {
        let mut h = LogHistogram::<2, 252>::default();
        for _ in 0..990 {
            h.record(10_000);
        }
        for _ in 0..10 {
            h.record(1_000_000);
        }
        let p50 = h.quantile(0.5, QuantilePoint::Middle) as f64;
        let p999 = h.quantile(0.999, QuantilePoint::Middle) as f64;
        assert!((p50 - 10_000.0).abs() <= 0.125 * 10_000.0, "{p50}");
        assert!((p999 - 1e6).abs() <= 0.125 * 1e6, "{p999}");
        assert_eq!((h.max(), h.count()), (1_000_000, 1000));
        assert!((h.mean() - 19_900.0).abs() < 1e-6);
        assert_eq!(h.nonempty().count(), 2);
        h.reset();
        assert_eq!((h.count(), h.max(), h.nonempty().count()), (0, 0, 0));
        assert_eq!(h.quantile(0.5, QuantilePoint::Middle), 0);
    }
}

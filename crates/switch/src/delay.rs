//! Queueing delay per egress queue, measured by the TM at dequeue: lanes-tm's log-linear
//! histogram with four buckets per power of two (each bucket at most 25 % wide), so quantiles are
//! known to within that and recording costs a few instructions. Readers get the raw buckets
//! (`show_delay`) and merge them; the bounds below are the ones they use.

use lanes_tm::LogHistogram;

/// Queueing delays of one queue in nanoseconds: exact below 8 ns, then 4 buckets per octave.
pub type DelayHistogram = LogHistogram<2, 252>;

/// Bucket `i` holds delays in `[lower(i), lower(i + 1))` nanoseconds.
pub const BUCKETS: usize = DelayHistogram::BUCKETS;

/// The bucket of a delay.
pub fn bucket(ns: u64) -> usize {
    DelayHistogram::bucket(ns)
}

/// The smallest delay that falls in bucket `i`.
pub fn lower(i: usize) -> u64 {
    DelayHistogram::lower(i)
}

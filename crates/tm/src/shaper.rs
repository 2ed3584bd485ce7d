//! A token bucket: the rate limit of one queue.
//!
//! Tokens are bytes. The bucket fills at `rate` up to `burst` and a packet may leave when the
//! bucket holds its size (a packet larger than the bucket may leave when the bucket is full, and
//! leaves it negative). So over any window of length T a queue sends at most rate x T + burst
//! bytes (+ one packet's excess over `burst` if its packets are longer than the bucket), and
//! traffic that conforms to (burst, rate) is never held back. Time is the caller's, in ns.

/// Bytes a shaper bucket holds by default at `rate_bytes_per_s`: one millisecond of the rate plus
/// one full-size Ethernet frame (tc HTB's formula, rate / HZ + MTU, at HZ = 1000). It absorbs the
/// jitter of a sender on a busy host (timer wake-ups are late by tens to hundreds of
/// microseconds) while the class may exceed its rate by at most 1 ms worth of it.
pub fn default_burst_bytes(rate_bytes_per_s: f64) -> u64 {
    (rate_bytes_per_s * 1e-3).round() as u64 + DEFAULT_MTU_BYTES
}

/// The frame size the default burst leaves room for.
pub const DEFAULT_MTU_BYTES: u64 = 1514;

/// Float tolerance on token comparisons, in bytes: the ns rounding of wake-up times must not
/// leave a packet a millionth of a byte short.
const EPS: f64 = 1e-6;

#[derive(Clone, Debug)]
pub(crate) struct TokenBucket {
    bytes_per_ns: f64,
    burst: f64,
    tokens: f64,
    /// Time at which `tokens` was last brought up to date.
    at: f64,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(rate_bytes_per_s: f64, burst_bytes: u64) -> Self {
        TokenBucket {
            bytes_per_ns: rate_bytes_per_s / 1e9,
            burst: burst_bytes as f64,
            tokens: burst_bytes as f64,
            at: f64::NEG_INFINITY,
        }
    }

    /// Change rate and size, keeping the tokens held (at most the new size). The new rate counts
    /// from the last charge on: the bucket is capped anyway, so that costs at most its size.
    pub fn reconfigure(&mut self, rate_bytes_per_s: f64, burst_bytes: u64) {
        self.bytes_per_ns = rate_bytes_per_s / 1e9;
        self.burst = burst_bytes as f64;
        self.tokens = self.tokens.min(self.burst);
    }

    fn tokens_at(&self, now: f64) -> f64 {
        if now <= self.at {
            self.tokens
        } else {
            (self.tokens + (now - self.at) * self.bytes_per_ns).min(self.burst)
        }
    }

    fn refill(&mut self, now: f64) {
        if now > self.at {
            self.tokens = self.tokens_at(now);
            self.at = now;
        }
    }

    /// Tokens a packet of `bytes` needs before it may leave.
    fn need(&self, bytes: u32) -> f64 {
        f64::from(bytes).min(self.burst)
    }

    pub fn allows(&self, now: f64, bytes: u32) -> bool {
        self.tokens_at(now) + EPS >= self.need(bytes)
    }

    /// Earliest time a packet of `bytes` may leave if nothing else is charged meanwhile.
    pub fn ready_at(&self, bytes: u32) -> f64 {
        let short = self.need(bytes) - self.tokens;
        if short <= EPS {
            self.at.max(0.0)
        } else {
            self.at + short / self.bytes_per_ns
        }
    }

    /// Charge a departure of `bytes` at `now`. `since` is the earliest moment the packet could
    /// have left as far as the bucket and its arrival go; if the port kept it waiting beyond
    /// that, the departure is charged as of `now - grace_ns` at the earliest (the bucket must not
    /// lose the tokens it would have spent meanwhile because it was full).
    pub fn charge(&mut self, now: f64, since: f64, grace_ns: f64, bytes: u32) {
        let when = since.max(now - grace_ns).min(now);
        self.refill(when);
        self.tokens -= f64::from(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_burst_is_a_millisecond_of_rate_plus_a_frame() {
        assert_eq!(default_burst_bytes(7.5e6), 7500 + 1514);
        assert_eq!(default_burst_bytes(0.0), 1514);
    }

    #[test]
    fn a_full_bucket_passes_its_burst_then_paces_at_the_rate() {
        // 1 MB/s = 1 byte/us, bucket of 3000 B: two 1500 B packets at once, then one per 1.5 ms
        let mut b = TokenBucket::new(1e6, 3000);
        assert!(b.allows(0.0, 1500));
        b.charge(0.0, 0.0, 0.0, 1500);
        assert!(b.allows(0.0, 1500));
        b.charge(0.0, 0.0, 0.0, 1500);
        assert!(!b.allows(0.0, 1500));
        assert_eq!(b.ready_at(1500), 1.5e6);
        assert!(b.allows(1.5e6, 1500));
    }

    #[test]
    fn packets_longer_than_the_bucket_wait_for_a_full_bucket() {
        let mut b = TokenBucket::new(1e6, 1000);
        assert!(b.allows(0.0, 9000));
        b.charge(0.0, 0.0, 0.0, 9000);
        assert_eq!(b.ready_at(9000), 9e6);
    }

    #[test]
    fn a_departure_the_port_delayed_is_charged_when_it_could_have_left() {
        // a one-packet bucket, the packet ready at 1.5 ms but sent at 1.6 ms (a frame was on the
        // wire): the next one is still ready at 3 ms, not 3.1 ms
        let mut b = TokenBucket::new(1e6, 1500);
        b.charge(0.0, 0.0, 0.0, 1500);
        let ready = b.ready_at(1500);
        b.charge(1.6e6, ready, 0.2e6, 1500);
        assert_eq!(b.ready_at(1500), 3e6);
    }

    #[test]
    fn shrinking_the_bucket_drops_excess_tokens() {
        let mut b = TokenBucket::new(1e6, 10_000);
        b.reconfigure(1e6, 2000);
        assert_eq!(b.tokens_at(0.0), 2000.0);
        assert_eq!(b.tokens_at(1e9), 2000.0);
    }
}

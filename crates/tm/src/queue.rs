//! One class queue: packets in arrival order, its limits, its rate shaper and DRR deficit.

use std::collections::VecDeque;

use crate::{Nanos, QueueConfig, QueueCounters};

pub(crate) struct Entry<T> {
    pub item: T,
    pub bytes: u32,
    pub enq_ns: Nanos,
    pub enq_depth_pkts: u32,
    pub enq_depth_bytes: u64,
    /// Port-wide arrival order, used by the FIFO scheduler after a scheduler change.
    pub seq: u64,
}

pub(crate) struct Queue<T> {
    pub entries: VecDeque<Entry<T>>,
    pub bytes: u64,
    pub cfg: QueueConfig,
    /// Nanoseconds per byte at the configured rate, cached; 0 when not rate-limited.
    ns_per_byte: f64,
    /// Earliest time the head may depart under the rate limit (ns, fractional so that small
    /// packets at high rates keep their exact spacing).
    pub next_departure_ns: f64,
    pub deficit: u64,
    pub counters: QueueCounters,
}

impl<T> Queue<T> {
    pub fn new(cfg: QueueConfig) -> Self {
        let mut q = Queue {
            entries: VecDeque::new(),
            bytes: 0,
            cfg: QueueConfig::default(),
            ns_per_byte: 0.0,
            next_departure_ns: 0.0,
            deficit: 0,
            counters: QueueCounters::default(),
        };
        q.set_config(cfg);
        q
    }

    pub fn set_config(&mut self, cfg: QueueConfig) {
        self.ns_per_byte = cfg.rate_bytes_per_s.map_or(0.0, |r| 1e9 / r);
        self.cfg = cfg;
    }

    pub fn len(&self) -> u32 {
        self.entries.len() as u32
    }

    pub fn is_rate_limited(&self) -> bool {
        self.cfg.rate_bytes_per_s.is_some()
    }

    /// Whether adding `bytes` would break this queue's own limits.
    pub fn would_overflow(&self, bytes: u32) -> bool {
        self.cfg.depth_pkts.is_some_and(|d| self.len() >= d)
            || self
                .cfg
                .depth_bytes
                .is_some_and(|d| self.bytes + u64::from(bytes) > d)
    }

    /// May the head leave at `now` as far as this queue's rate is concerned?
    pub fn rate_allows(&self, now: f64) -> bool {
        !self.is_rate_limited() || self.next_departure_ns <= now
    }

    /// A packet arrives to an empty queue: credit from the idle time is forgotten.
    pub fn wake(&mut self, now: f64) {
        self.next_departure_ns = self.next_departure_ns.max(now);
    }

    /// Charge a departure of `bytes` at `now` to the shaper. `grace_ns` is how late the port
    /// may have made this packet (it was busy sending when the head became eligible, or its
    /// event loop woke late); that lateness is given back so the queue still gets its full rate
    /// on a non-preemptive link, and nothing more. A borrowed departure (capacity nobody else
    /// wanted) is not charged at all.
    pub fn charge(&mut self, now: f64, grace_ns: f64, bytes: u32, borrowed: bool) {
        if self.is_rate_limited() {
            if borrowed {
                self.next_departure_ns = self.next_departure_ns.max(now);
            } else {
                let start = self.next_departure_ns.max(now - grace_ns);
                self.next_departure_ns = start + f64::from(bytes) * self.ns_per_byte;
            }
        }
    }
}

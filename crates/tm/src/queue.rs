//! One class queue: packets in arrival order, its limits, its rate shaper and DRR deficit.

use std::collections::VecDeque;

use crate::shaper::TokenBucket;
use crate::{Nanos, QueueConfig, QueueCounters};

pub(crate) struct Entry<T> {
    pub item: T,
    pub bytes: u32,
    pub enq_ns: Nanos,
    pub enq_depth_pkts: u32,
    pub enq_depth_bytes: u64,
    /// Port-wide arrival order: stranded packets leave oldest first after a change of scheduler.
    pub seq: u64,
}

pub(crate) struct Queue<T> {
    pub entries: VecDeque<Entry<T>>,
    pub bytes: u64,
    pub cfg: QueueConfig,
    /// The rate limit, when the queue has one.
    pub bucket: Option<TokenBucket>,
    pub deficit: u64,
    pub counters: QueueCounters,
}

impl<T> Queue<T> {
    pub fn new(cfg: QueueConfig) -> Self {
        let mut q = Queue {
            entries: VecDeque::new(),
            bytes: 0,
            cfg: QueueConfig::default(),
            bucket: None,
            deficit: 0,
            counters: QueueCounters::default(),
        };
        q.set_config(cfg);
        q
    }

    pub fn set_config(&mut self, cfg: QueueConfig) {
        self.bucket = match (cfg.rate_bytes_per_s, self.bucket.take()) {
            (None, _) => None,
            (Some(rate), None) => Some(TokenBucket::new(rate, cfg.effective_burst_bytes())),
            (Some(rate), Some(mut b)) => {
                b.reconfigure(rate, cfg.effective_burst_bytes());
                Some(b)
            }
        };
        self.cfg = cfg;
    }

    pub fn len(&self) -> u32 {
        self.entries.len() as u32
    }

    /// Whether adding `bytes` would break this queue's own limits.
    pub fn would_overflow(&self, bytes: u32) -> bool {
        self.cfg.depth_pkts.is_some_and(|d| self.len() >= d)
            || self
                .cfg
                .depth_bytes
                .is_some_and(|d| self.bytes + u64::from(bytes) > d)
    }

    /// Whether `bytes` would fit within this queue's limits once one of its packets
    /// (`gone_bytes` long) left.
    pub fn would_fit_without(&self, gone_bytes: u32, bytes: u32) -> bool {
        self.cfg.depth_pkts.is_none_or(|d| self.len() - 1 < d)
            && self
                .cfg
                .depth_bytes
                .is_none_or(|d| self.bytes - u64::from(gone_bytes) + u64::from(bytes) <= d)
    }

    /// May the head leave at `now` as far as this queue's rate is concerned?
    pub fn rate_allows(&self, now: f64) -> bool {
        // the bucket first: most queues have none, and then the head need not be looked at
        match &self.bucket {
            Some(b) => self.entries.front().is_none_or(|h| b.allows(now, h.bytes)),
            None => true,
        }
    }

    /// Earliest time the head may leave under the rate limit (0 when not limited).
    pub fn head_ready_at(&self) -> f64 {
        match (&self.bucket, self.entries.front()) {
            (Some(b), Some(head)) => b.ready_at(head.bytes),
            _ => 0.0,
        }
    }

    /// Charge the departure of the head at `now` to the rate limit. `grace_ns`: how long
    /// the port may have kept it waiting (the frame in flight when it became ready). A borrowed
    /// departure (capacity nobody else wanted, rlsp-drr-borrow) is not charged.
    pub fn charge_head(&mut self, now: f64, grace_ns: f64, borrowed: bool) {
        if let (Some(b), Some(head), false) = (self.bucket.as_mut(), self.entries.front(), borrowed)
        {
            let since = b.ready_at(head.bytes).max(head.enq_ns as f64);
            b.charge(now, since, grace_ns, head.bytes);
        }
    }
}

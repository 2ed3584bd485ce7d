//! Port and queue configuration, validated before it reaches the data path.

use std::fmt;
use std::str::FromStr;

use crate::shaper::default_burst_bytes;

/// Upper bound on class queues per port.
pub const MAX_QUEUES: usize = 32;

/// Which scheduler a port uses. Each is a setting of one mechanism (split.rs) on the same
/// per-class queues, so a port can change scheduler at run time without losing what is queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduler {
    /// One FIFO for the port: every packet in queue 0, priorities and rates ignored (the
    /// thesis's NO-ALG).
    Fifo,
    /// Highest queue index first; queues with a byte rate wait for their departure time.
    Strict,
    /// Deficit round robin over all queues by quantum.
    Drr,
    /// The highest queue strict and rate-limited, the others DRR (thesis Algorithm 1).
    RlspDrr,
    /// As RlspDrr, but the high queue may also use capacity no DRR queue wants.
    RlspDrrBorrow,
}

impl Scheduler {
    /// Every scheduler, in the order `lanes` lists them.
    pub const ALL: [Scheduler; 5] = [
        Scheduler::Fifo,
        Scheduler::Strict,
        Scheduler::Drr,
        Scheduler::RlspDrr,
        Scheduler::RlspDrrBorrow,
    ];

    /// The scheduler's name on command lines and in configuration files.
    pub fn name(self) -> &'static str {
        match self {
            Scheduler::Fifo => "fifo",
            Scheduler::Strict => "strict",
            Scheduler::Drr => "drr",
            Scheduler::RlspDrr => "rlsp-drr",
            Scheduler::RlspDrrBorrow => "rlsp-drr-borrow",
        }
    }

    /// Whether some queues are served by strict priority, the top one among them: a packet of
    /// a higher priority leaves first. (fifo's one queue is strict in the split, split.rs, but it
    /// takes every priority, so no class leaves first.)
    pub fn has_strict(self) -> bool {
        matches!(
            self,
            Scheduler::Strict | Scheduler::RlspDrr | Scheduler::RlspDrrBorrow
        )
    }
}

impl fmt::Display for Scheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Scheduler {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let key = s.to_ascii_lowercase().replace('_', "-");
        let alias = match key.as_str() {
            "no" | "none" | "no-alg" => "fifo",
            "sp" | "strict-priority" => "strict",
            "rl-sp-drr" | "rlspdrr" => "rlsp-drr",
            other => other,
        };
        Scheduler::ALL
            .into_iter()
            .find(|k| k.name() == alias)
            .ok_or_else(|| {
                ConfigError(format!(
                    "unknown scheduler '{s}' (expected one of fifo, strict, drr, rlsp-drr, rlsp-drr-borrow)"
                ))
            })
    }
}

/// What a full queue drops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DropPolicy {
    /// The arriving packet (drop-tail).
    #[default]
    Tail,
    /// A packet drawn at random from the queue and the arrival (random drop on full, RFC 2309's
    /// remedy for lock-out), when dropping that one packet makes room; otherwise the arrival.
    /// Each flow then loses in proportion to what it holds of the queue, i.e. to what it sends.
    /// Drop-tail does not share that way when senders are paced as exactly as the port: the slot
    /// a departure frees goes to whichever packet arrives first after it, the same sender every
    /// time, and the other is locked out (measured: 48 and 0.3 Mb/s of a 50 Mb/s port). Any
    /// deterministic choice (drop-front too) can be locked out the same way.
    Random,
}

impl fmt::Display for DropPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DropPolicy::Tail => "tail",
            DropPolicy::Random => "random",
        })
    }
}

impl FromStr for DropPolicy {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "tail" | "drop-tail" => Ok(DropPolicy::Tail),
            "random" | "random-drop" => Ok(DropPolicy::Random),
            _ => Err(ConfigError(format!(
                "unknown drop policy '{s}' (expected tail or random)"
            ))),
        }
    }
}

/// One queue's settings. `None` means unlimited / not rate-limited.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueConfig {
    /// Byte rate in bytes per second (strict queues, and the high queue of rlsp-drr).
    pub rate_bytes_per_s: Option<f64>,
    /// Size of the rate limit's token bucket in bytes: how much the queue may send at once
    /// after it was idle. `None`: [`default_burst_bytes`] of the rate.
    pub burst_bytes: Option<u64>,
    /// DRR quantum in bytes.
    pub quantum: u32,
    /// Most packets the queue holds (bmv2's queue depth).
    pub depth_pkts: Option<u32>,
    /// Most bytes the queue holds.
    pub depth_bytes: Option<u64>,
}

impl Default for QueueConfig {
    fn default() -> Self {
        // bmv2's default queue depth is 64 packets; a quantum of one MTU keeps DRR O(1).
        QueueConfig {
            rate_bytes_per_s: None,
            burst_bytes: None,
            quantum: 1514,
            depth_pkts: Some(64),
            depth_bytes: None,
        }
    }
}

impl QueueConfig {
    /// The token bucket size in use: the configured burst, or the default for the rate.
    pub fn effective_burst_bytes(&self) -> u64 {
        self.burst_bytes
            .unwrap_or_else(|| default_burst_bytes(self.rate_bytes_per_s.unwrap_or(0.0)))
    }

    /// A one-line reason if the settings cannot be used.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let Some(r) = self.rate_bytes_per_s {
            if !(r.is_finite() && r > 0.0) {
                return Err(ConfigError(format!(
                    "queue rate must be a positive number of bytes/s, got {r}"
                )));
            }
        }
        if self.burst_bytes == Some(0) {
            return Err(ConfigError("queue burst must be at least 1 byte".into()));
        }
        if self.quantum == 0 {
            return Err(ConfigError("queue quantum must be at least 1 byte".into()));
        }
        if self.depth_pkts == Some(0) || self.depth_bytes == Some(0) {
            return Err(ConfigError("queue depth must be at least 1".into()));
        }
        Ok(())
    }
}

/// One egress port's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct PortConfig {
    /// Line rate in bits per second.
    pub rate_bps: f64,
    /// How the port picks the next packet among its queues.
    pub scheduler: Scheduler,
    /// The class queues, lowest priority first (queue i serves priority i).
    pub queues: Vec<QueueConfig>,
    /// Buffer shared by all queues of the port, in bytes.
    pub buffer_bytes: Option<u64>,
    /// Bytes added to every packet's wire time (preamble, FCS, inter-frame gap); 0 by default.
    pub overhead_bytes: u32,
    /// The port's pacing bound, in ns of line time: a caller that comes late may have the port
    /// send back to back until it is back on schedule, but never more than this far behind it.
    /// So over any window of length T the port releases at most rate x (T + burst_ns) bytes
    /// plus one frame (a caller that sends `ahead` ns early, `Port::dequeue_ahead`, that much
    /// more). Time is whole nanoseconds, so at least 1 (else every packet loses the
    /// fraction of a ns its wire time ends on: 0.4 % of a 100 Gb/s link). A real event loop
    /// wakes late now and then and sets more, so the long-run rate stays exact.
    pub burst_ns: u64,
    /// What a full queue drops: the arrival (tail, the default) or a random packet (random).
    pub drop: DropPolicy,
}

impl PortConfig {
    /// A port of `queues` default queues, no shared buffer limit, no overhead, 1 ns of pacing slack.
    pub fn new(rate_bps: f64, scheduler: Scheduler, queues: usize) -> Self {
        PortConfig {
            rate_bps,
            scheduler,
            queues: vec![QueueConfig::default(); queues],
            buffer_bytes: None,
            overhead_bytes: 0,
            burst_ns: 1,
            drop: DropPolicy::Tail,
        }
    }

    /// A one-line reason (naming the queue) if the port cannot be built from these settings.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(self.rate_bps.is_finite() && self.rate_bps > 0.0) {
            return Err(ConfigError(format!(
                "port rate must be a positive number of bits/s, got {}",
                self.rate_bps
            )));
        }
        let n = self.queues.len();
        if n == 0 || n > MAX_QUEUES {
            return Err(ConfigError(format!(
                "a port has 1 to {MAX_QUEUES} queues, got {n}"
            )));
        }
        if self.buffer_bytes == Some(0) {
            return Err(ConfigError("port buffer must be at least 1 byte".into()));
        }
        for (i, q) in self.queues.iter().enumerate() {
            q.validate()
                .map_err(|e| ConfigError(format!("queue {i}: {}", e.0)))?;
        }
        Ok(())
    }
}

/// A configuration that cannot be used, with a one-line reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// Nanoseconds per byte at `rate_bps` bits per second, which must be positive and finite.
pub(crate) fn ns_per_byte(rate_bps: f64) -> Result<f64, ConfigError> {
    if !(rate_bps.is_finite() && rate_bps > 0.0) {
        return Err(ConfigError(format!(
            "port rate must be a positive number of bits/s, got {rate_bps}"
        )));
    }
    Ok(8e9 / rate_bps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_names_round_trip_and_aliases() {
        for k in Scheduler::ALL {
            assert_eq!(k.name().parse::<Scheduler>().unwrap(), k);
        }
        assert_eq!("no".parse::<Scheduler>().unwrap(), Scheduler::Fifo);
        assert_eq!(
            "RL_SP_DRR".parse::<Scheduler>().unwrap(),
            Scheduler::RlspDrr
        );
        assert!("wfq".parse::<Scheduler>().is_err());
    }

    #[test]
    fn validation_names_the_problem() {
        let mut c = PortConfig::new(1e8, Scheduler::Drr, 8);
        c.queues[3].quantum = 0;
        assert_eq!(
            c.validate().unwrap_err().0,
            "queue 3: queue quantum must be at least 1 byte"
        );
        let c = PortConfig::new(1e8, Scheduler::Drr, 33);
        assert!(c.validate().is_err());
        let c = PortConfig::new(-1.0, Scheduler::Drr, 8);
        assert!(c.validate().is_err());
    }
}

//! lanes traffic manager core.
//!
//! One [`Port`] per egress port: N class queues, a shared buffer, a scheduler and line-rate
//! pacing. Nothing here reads a clock or does I/O: every call takes `now` in nanoseconds, so the
//! same code runs under the switch (monotonic time) and the simulator (virtual time).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod config;
mod drr;
mod histogram;
mod port;
mod queue;
mod shaper;
mod stats;

pub use config::{ConfigError, DropPolicy, PortConfig, QueueConfig, Scheduler, MAX_QUEUES};
pub use histogram::{LogHistogram, QuantilePoint};
pub use port::{Dequeued, EnqueueOutcome, Port};
pub use shaper::{default_burst_bytes, DEFAULT_MTU_BYTES};
pub use stats::{DropReason, QueueCounters, QueueStatus};

/// Nanoseconds, monotonic or virtual: the only notion of time in this crate.
pub type Nanos = u64;

#[cfg(test)]
mod port_tests;

//! lanes traffic manager core.
//!
//! One [`Port`] per egress port: N class queues, a shared buffer, a scheduler and line-rate
//! pacing. Nothing here reads a clock or does I/O: every call takes `now` in nanoseconds, so the
//! same code runs under the switch (monotonic time) and the simulator (virtual time).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod bmv2;
mod config;
mod drr;
mod histogram;
mod model;
mod port;
mod queue;
mod shaper;
mod split;
mod stats;

pub use bmv2::{Bmv2Port, BMV2_OUTPUT_BUFFER_PKTS};
pub use config::{ConfigError, DropPolicy, PortConfig, QueueConfig, Scheduler, MAX_QUEUES};
pub use histogram::{LogHistogram, QuantilePoint};
pub use model::{TmModel, TmPort};
pub use port::{Dequeued, EnqueueOutcome, Port};
pub use shaper::{default_burst_bytes, DEFAULT_MTU_BYTES};
pub use stats::{DropReason, QueueCounters, QueueStatus};

/// Nanoseconds, monotonic or virtual: the only notion of time in this crate.
pub type Nanos = u64;

#[cfg(test)]
mod bmv2_tests;
#[cfg(test)]
mod fifo_tests;
#[cfg(test)]
mod port_tests;

//! Which TM a port runs: lanes's paced one (the default) or the model of bmv2's, chosen when
//! the port is made.

use std::fmt;
use std::str::FromStr;

use crate::bmv2::{Bmv2Port, BMV2_OUTPUT_BUFFER_PKTS};
use crate::config::{ConfigError, PortConfig, QueueConfig, Scheduler};
use crate::port::{Dequeued, EnqueueOutcome, Port};
use crate::stats::QueueStatus;
use crate::Nanos;

/// The TM model of a port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TmModel {
    /// lanes: the scheduler picks a packet only when the port may send (pacing).
    #[default]
    Paced,
    /// bmv2 as the thesis ran it: egress queues served unpaced into an output buffer of this
    /// many packets, drained at line rate (crate::bmv2).
    Bmv2 {
        /// Packets the output buffer holds.
        output_pkts: u32,
    },
}

impl TmModel {
    /// bmv2's model with bmv2's output buffer of 128 packets.
    pub const BMV2: TmModel = TmModel::Bmv2 {
        output_pkts: BMV2_OUTPUT_BUFFER_PKTS,
    };

    /// The model's name on command lines.
    pub fn name(self) -> &'static str {
        match self {
            TmModel::Paced => "lanes",
            TmModel::Bmv2 { .. } => "bmv2",
        }
    }
}

impl fmt::Display for TmModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TmModel {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "lanes" | "paced" => Ok(TmModel::Paced),
            "bmv2" => Ok(TmModel::BMV2),
            _ => Err(ConfigError(format!(
                "unknown TM model '{s}' (expected lanes or bmv2)"
            ))),
        }
    }
}

/// A port's TM under either model. The model is fixed when the port is made; each call is one
/// match on it, which a port that never changes model always predicts. The paced arm inlines as
/// `Port`'s calls did; the model's methods stay out of line so they do not grow the callers.
pub enum TmPort<T> {
    /// lanes's paced TM.
    Paced(Port<T>),
    /// The bmv2 model.
    Bmv2(Bmv2Port<T>),
}

macro_rules! both {
    ($self:expr, $p:ident => $e:expr) => {
        match $self {
            TmPort::Paced($p) => $e,
            TmPort::Bmv2($p) => $e,
        }
    };
}

impl<T> TmPort<T> {
    /// A port of `model` with these settings.
    pub fn new(cfg: PortConfig, model: TmModel) -> Result<Self, ConfigError> {
        Ok(match model {
            TmModel::Paced => TmPort::Paced(Port::new(cfg)?),
            TmModel::Bmv2 { output_pkts } => TmPort::Bmv2(Bmv2Port::new(cfg, output_pkts)?),
        })
    }

    /// The model the port runs.
    pub fn model(&self) -> TmModel {
        match self {
            TmPort::Paced(_) => TmModel::Paced,
            TmPort::Bmv2(p) => TmModel::Bmv2 {
                output_pkts: p.output_capacity(),
            },
        }
    }

    /// See [`Port::enqueue`].
    #[inline(always)]
    pub fn enqueue(&mut self, now: Nanos, qid: usize, bytes: u32, item: T) -> EnqueueOutcome<T> {
        both!(self, p => p.enqueue(now, qid, bytes, item))
    }

    /// See [`Port::dequeue`].
    #[inline(always)]
    pub fn dequeue(&mut self, now: Nanos) -> Option<Dequeued<T>> {
        both!(self, p => p.dequeue(now))
    }

    /// See [`Port::dequeue_ahead`].
    #[inline(always)]
    pub fn dequeue_ahead(&mut self, now: Nanos, ahead: Nanos) -> Option<Dequeued<T>> {
        both!(self, p => p.dequeue_ahead(now, ahead))
    }

    /// See [`Port::next_event_ns`].
    #[inline(always)]
    pub fn next_event_ns(&self, now: Nanos) -> Option<Nanos> {
        both!(self, p => p.next_event_ns(now))
    }

    /// See [`Port::leads`].
    #[inline(always)]
    pub fn leads(&self, qid: usize) -> bool {
        both!(self, p => p.leads(qid))
    }

    /// See [`Port::num_queues`].
    pub fn num_queues(&self) -> usize {
        both!(self, p => p.num_queues())
    }

    /// See [`Port::scheduler`].
    pub fn scheduler(&self) -> Scheduler {
        both!(self, p => p.scheduler())
    }

    /// See [`Port::set_scheduler`].
    pub fn set_scheduler(&mut self, s: Scheduler) {
        both!(self, p => p.set_scheduler(s))
    }

    /// See [`Port::rate_bps`].
    pub fn rate_bps(&self) -> f64 {
        both!(self, p => p.rate_bps())
    }

    /// See [`Port::set_rate_bps`].
    pub fn set_rate_bps(&mut self, rate_bps: f64) -> Result<(), ConfigError> {
        both!(self, p => p.set_rate_bps(rate_bps))
    }

    /// See [`Port::set_buffer_bytes`].
    pub fn set_buffer_bytes(&mut self, limit: Option<u64>) {
        both!(self, p => p.set_buffer_bytes(limit))
    }

    /// See [`Port::len_pkts`].
    pub fn len_pkts(&self) -> u32 {
        both!(self, p => p.len_pkts())
    }

    /// See [`Port::len_bytes`].
    pub fn len_bytes(&self) -> u64 {
        both!(self, p => p.len_bytes())
    }

    /// See [`Port::is_empty`].
    pub fn is_empty(&self) -> bool {
        both!(self, p => p.is_empty())
    }

    /// See [`Port::queue_len`].
    pub fn queue_len(&self, qid: usize) -> Option<u32> {
        both!(self, p => p.queue_len(qid))
    }

    /// See [`Port::queue_status`].
    pub fn queue_status(&self, qid: usize) -> Option<QueueStatus> {
        both!(self, p => p.queue_status(qid))
    }

    /// See [`Port::queue_config`].
    pub fn queue_config(&self, qid: usize) -> Option<&QueueConfig> {
        both!(self, p => p.queue_config(qid))
    }

    /// See [`Port::set_queue_config`].
    pub fn set_queue_config(&mut self, qid: usize, cfg: QueueConfig) -> Result<(), ConfigError> {
        both!(self, p => p.set_queue_config(qid, cfg))
    }

    /// What a full queue drops (the bmv2 model: always the arrival).
    pub fn drop_policy(&self) -> crate::DropPolicy {
        match self {
            TmPort::Paced(p) => p.drop_policy(),
            TmPort::Bmv2(_) => crate::DropPolicy::Tail,
        }
    }
}

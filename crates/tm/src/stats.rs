//! Per-queue counters and the status snapshot the control plane reads.

use crate::QueueConfig;

/// Why a packet was refused at enqueue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The queue's own packet or byte limit was reached.
    QueueFull,
    /// The port's shared buffer was full.
    BufferFull,
}

/// Monotonic counters of one queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueCounters {
    /// Packets accepted into the queue.
    pub enq_pkts: u64,
    /// Bytes accepted into the queue.
    pub enq_bytes: u64,
    /// Packets that left the queue.
    pub deq_pkts: u64,
    /// Bytes that left the queue.
    pub deq_bytes: u64,
    /// Packets refused because the queue was at its depth.
    pub drop_queue_full_pkts: u64,
    /// Packets refused because the port's shared buffer was full.
    pub drop_buffer_full_pkts: u64,
    /// Bytes refused, for either reason.
    pub drop_bytes: u64,
}

impl QueueCounters {
    /// Packets refused, for either reason.
    pub fn drop_pkts(&self) -> u64 {
        self.drop_queue_full_pkts + self.drop_buffer_full_pkts
    }

    pub(crate) fn count_drop(&mut self, reason: DropReason, bytes: u32) {
        match reason {
            DropReason::QueueFull => self.drop_queue_full_pkts += 1,
            DropReason::BufferFull => self.drop_buffer_full_pkts += 1,
        }
        self.drop_bytes += u64::from(bytes);
    }
}

/// What `show_queues` prints: live depth, configuration and counters of one queue.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueStatus {
    /// Packets queued now.
    pub depth_pkts: u32,
    /// Bytes queued now.
    pub depth_bytes: u64,
    /// The DRR deficit the queue holds, in bytes.
    pub deficit: u64,
    /// Its settings.
    pub config: QueueConfig,
    /// Its counters since the port was made.
    pub counters: QueueCounters,
}

//! What the data plane counts: per port, the event loop, and why packets were dropped.

/// Per-port counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortCounters {
    /// Frames received.
    pub rx_pkts: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Frames sent.
    pub tx_pkts: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Frames the kernel refused to send, or PacketIns dropped for a slow controller.
    pub tx_errors: u64,
    /// The most frames taken from this port's receive ring in one go, until the ring was empty,
    /// since `show_rx reset`: how far the input side fell behind the wire (the thesis's input
    /// buffer occupancy; ours is the kernel's ring of 512 slots).
    pub rx_backlog_max: u64,
    /// Waits of the event loop that this port's arrivals ended (each wake-up counted at every
    /// port that had a frame then).
    pub rx_wakeups: u64,
}

/// What the event loop tells the data plane about its receive rings.
impl super::Dataplane {
    /// Record that `frames` frames were taken from port `num`'s receive ring before it ran empty.
    pub fn note_rx_backlog(&mut self, num: u32, frames: u64) {
        if let Some(p) = self.port_mut(num) {
            p.counters.rx_backlog_max = p.counters.rx_backlog_max.max(frames);
        }
    }

    /// The event loop's wait ended with a frame at port `num`'s receive ring.
    pub fn note_rx_wakeup(&mut self, num: u32) {
        if let Some(p) = self.port_mut(num) {
            p.counters.rx_wakeups += 1;
        }
    }
}

/// What the event loop did instead of sleeping (`stats_json`'s "event_loop").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct LoopCounters {
    /// Times the loop looked at the receive rings for a frame instead of sleeping (an expected
    /// answer, reply_poll.rs, or `--poll-us`).
    pub looks: u64,
    /// Those that a frame ended (a wake-up saved).
    pub looks_answered: u64,
    /// Turns of the loop: one per wake-up or look.
    pub turns: u64,
    /// Turns that sent at least one frame.
    pub turns_sent: u64,
    /// Turns that took frames but sent none (their frames wait behind others or were dropped).
    pub turns_rx_only: u64,
    /// Turns that neither took nor sent a frame (a wake-up for nothing: control, or early).
    pub turns_idle: u64,
    /// Waits a receiving port's arrival ended (a frame on a port the loop listened to).
    pub woken_by_arrival: u64,
    /// Waits the timer ended (a departure due, or the early wake-up before one).
    pub woken_by_timer: u64,
    /// Waits only control ended (a table write, a PacketOut, stop).
    pub woken_by_control: u64,
    /// Turns that did not wait: a receive ring still held frames after a full batch.
    pub woken_by_backlog: u64,
}

/// What became of a frame [`crate::Dataplane::service`] handed to its sender; the port's tx
/// counters follow it, so a frame is counted once, when its fate is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxOutcome {
    /// Sent: count it now.
    Sent,
    /// Held for a batched send: the sender reports it with `tx_sent` or `tx_refused` after.
    Pending,
    /// Refused: a transmit error.
    Refused,
}

/// Why packets were dropped, switch-wide (`stats_json`'s "drops", field by field).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct DropCounters {
    /// Frames received before a program was loaded.
    pub no_program: u64,
    /// Frames longer than MAX_FRAME.
    pub oversize: u64,
    /// Frames the parser rejected.
    pub parser: u64,
    /// Frames the ingress control dropped.
    pub ingress: u64,
    /// Frames the egress control dropped (or queued under a program since replaced).
    pub egress: u64,
    /// Frames sent to a port the switch does not have.
    pub unknown_port: u64,
    /// Frames refused by a full queue.
    pub queue_full: u64,
    /// Frames refused by a port's full shared buffer.
    pub buffer_full: u64,
    /// Frames dropped because the switch held MAX_SLOTS packets.
    pub no_buffer: u64,
    /// Clones asked for with a mirror session that is not configured.
    pub no_mirror_session: u64,
    /// Clones of clones deeper than MAX_CLONE_GENERATIONS.
    pub clone_depth: u64,
    /// Frames sent to a multicast group that has no copies to make.
    pub no_multicast_group: u64,
    /// Resubmissions and recirculations beyond MAX_PASSES.
    pub pass_limit: u64,
    /// Digests dropped because the controller did not take them in time.
    pub digests: u64,
}

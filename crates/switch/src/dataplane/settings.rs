//! What the data plane is configured with beside its program: every port's TM settings and the
//! mirror sessions' destinations.

use lanes_tm::{DropPolicy, Scheduler, TmModel};

/// Where a mirror (clone) session sends its copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MirrorSession {
    /// The egress port (None: copies go to the multicast group only).
    pub port: Option<u32>,
    /// A multicast group the copies are replicated to as well (bmv2's `mirroring_add_mc`): one
    /// copy per (port, rid) of the group, with that `egress_rid`.
    pub mgid: Option<u32>,
    /// Copies are cut to this many bytes when deparsed (None: whole packets).
    pub truncate: Option<u32>,
}

/// Settings of every egress port's TM.
#[derive(Clone, Debug)]
pub struct TmDefaults {
    /// Line rate of ports given no rate of their own, bits per second.
    pub rate_bps: f64,
    /// Scheduler of every port.
    pub scheduler: Scheduler,
    /// Class queues per port (bmv2's --priority-queues).
    pub queues: usize,
    /// Packets per queue (bmv2's queue depth).
    pub depth_pkts: u32,
    /// Bytes each port's queues may hold together (None: no limit).
    pub buffer_bytes: Option<u64>,
    /// How much lateness of the event loop a port may make up (see lanes_tm::PortConfig).
    pub port_burst_ns: u64,
    /// What a full queue drops (the arrival, or a random packet: lanes_tm::DropPolicy).
    pub drop: DropPolicy,
    /// Which TM every port runs: lanes's paced one, or the model of bmv2's (lanes_tm::TmModel).
    pub model: TmModel,
}

impl Default for TmDefaults {
    fn default() -> Self {
        TmDefaults {
            rate_bps: 10e9,
            scheduler: Scheduler::Strict,
            queues: 8,
            depth_pkts: 64,
            buffer_bytes: None,
            // a timer wake-up on a busy VM can be 100 us late; making that up keeps the port at
            // its line rate (bursts stay within this much of the port's schedule)
            port_burst_ns: 500_000,
            drop: DropPolicy::Tail,
            model: TmModel::Paced,
        }
    }
}

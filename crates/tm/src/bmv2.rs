//! A model of bmv2's traffic manager as the thesis ran it (simple_switch with its queueing
//! extension), to show in a run what lanes's paced TM is compared against.
//!
//! Model
//!
//! - Egress queues (bmv2's priority queues, 64 packets each by default): a packet gets its
//!   departure time when it is *enqueued*, as bmv2's rate-limited priority queues compute it:
//!   `max(now, the queue's previous departure + bytes / rate)` for a queue with a byte rate (the
//!   thesis's bytes-per-second version of bmv2's packets-per-second limit), `now` for a queue
//!   without one. A delayed packet keeps its departure time however long it then waits.
//! - The scheduler (bmv2's egress thread) moves packets from the egress queues into the port's
//!   output buffer whenever that buffer has room, without pacing: strict takes the highest queue
//!   whose head's departure time has come; rlsp-drr (thesis Algorithm 1) the top queue if its head
//!   is due, else the DRR queue whose deficit covers its head; drr only DRR; fifo one queue.
//! - The output buffer (bmv2's, 128 packets) is a FIFO drained at the port's line rate (the
//!   transmit thread and the link). While it is full the scheduler waits, and every class waits
//!   behind what it holds: that is how the thesis's high class came to queue behind low-class
//!   packets under RL-SP-DRR, whose DRR queues are never held back by a rate.
//!
//! Not modelled: bmv2's input buffer (1024 packets shared by all ports; the ingress thread keeps
//! it nearly empty at these rates, thesis 5.2), its sharing of one output buffer and one egress
//! thread by several ports, and its processing time per packet.
//!
//! Like [`crate::Port`] it has no clock: every call takes `now`. Moves into the output buffer
//! happen inside those calls, at the time given; [`Bmv2Port::next_event_ns`] names the next
//! moment something can change without an arrival.

use std::collections::VecDeque;

use crate::config::{ConfigError, DropPolicy, PortConfig, QueueConfig, Scheduler};
use crate::drr::ActiveList;
use crate::port::{Dequeued, EnqueueOutcome};
use crate::split::{Split, WhenHeld};
use crate::stats::{DropReason, QueueCounters, QueueStatus};
use crate::Nanos;

/// bmv2's output buffer: packets between the egress threads and the transmit thread.
pub const BMV2_OUTPUT_BUFFER_PKTS: u32 = 128;

struct Waiting<T> {
    item: T,
    bytes: u32,
    enq_ns: Nanos,
    /// When bmv2's scheduler may take it (computed at enqueue).
    depart_ns: f64,
    enq_depth_pkts: u32,
    enq_depth_bytes: u64,
}

/// A packet in the output buffer, with what it carries for telemetry.
struct Moved<T> {
    w: Waiting<T>,
    qid: usize,
    deq_depth_pkts: u32,
    deq_depth_bytes: u64,
}

struct EgressQueue<T> {
    entries: VecDeque<Waiting<T>>,
    bytes: u64,
    cfg: QueueConfig,
    /// Departure time given to the last packet enqueued (bmv2's `last_sent`).
    last_depart_ns: f64,
    deficit: u64,
    counters: QueueCounters,
}

impl<T> EgressQueue<T> {
    fn head_due(&self, now: f64) -> bool {
        self.entries.front().is_some_and(|h| h.depart_ns <= now)
    }
}

/// One egress port as bmv2 + the thesis's scheduler: egress queues served without pacing into
/// an output buffer drained at line rate (see the module's Model).
pub struct Bmv2Port<T> {
    queues: Vec<EgressQueue<T>>,
    scheduler: Scheduler,
    /// The scheduler as a setting of the strict/DRR split (split.rs).
    split: Split,
    active: ActiveList,
    out: VecDeque<Moved<T>>,
    out_capacity: usize,
    buffer_limit: Option<u64>,
    /// Bytes in the egress queues (the output buffer counts packets only, as bmv2's).
    queued_bytes: u64,
    rate_bps: f64,
    ns_per_byte: f64,
    overhead_bytes: u32,
    burst_ns: f64,
    tx_free_at: f64,
}

impl<T> Bmv2Port<T> {
    /// A port with these settings and an output buffer of `output_pkts` packets.
    pub fn new(cfg: PortConfig, output_pkts: u32) -> Result<Self, ConfigError> {
        cfg.validate()?;
        if output_pkts == 0 {
            return Err(ConfigError(
                "bmv2 model: output buffer must hold at least 1 packet".into(),
            ));
        }
        if cfg.drop != DropPolicy::Tail {
            return Err(ConfigError(
                "bmv2 model: a full queue drops the arrival (drop tail) only".into(),
            ));
        }
        let n = cfg.queues.len();
        let queues = cfg
            .queues
            .into_iter()
            .map(|c| EgressQueue {
                entries: VecDeque::new(),
                bytes: 0,
                cfg: c,
                last_depart_ns: f64::NEG_INFINITY,
                deficit: 0,
                counters: QueueCounters::default(),
            })
            .collect();
        let mut port = Bmv2Port {
            queues,
            scheduler: cfg.scheduler,
            split: Split::of(cfg.scheduler, n),
            active: ActiveList::new(),
            out: VecDeque::with_capacity(output_pkts as usize),
            out_capacity: output_pkts as usize,
            buffer_limit: cfg.buffer_bytes,
            queued_bytes: 0,
            rate_bps: 0.0,
            ns_per_byte: 0.0,
            overhead_bytes: cfg.overhead_bytes,
            burst_ns: cfg.burst_ns as f64,
            tx_free_at: 0.0,
        };
        port.set_rate_bps(cfg.rate_bps)?;
        Ok(port)
    }

    /// How many class queues the port has.
    pub fn num_queues(&self) -> usize {
        self.queues.len()
    }

    /// The scheduler in use.
    pub fn scheduler(&self) -> Scheduler {
        self.scheduler
    }

    /// The line rate in bits per second.
    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    /// Packets in the egress queues and the output buffer.
    pub fn len_pkts(&self) -> u32 {
        self.queues
            .iter()
            .map(|q| q.entries.len() as u32)
            .sum::<u32>()
            + self.out.len() as u32
    }

    /// Bytes in the egress queues and the output buffer.
    pub fn len_bytes(&self) -> u64 {
        self.queued_bytes + self.out.iter().map(|m| u64::from(m.w.bytes)).sum::<u64>()
    }

    /// Packets in the output buffer.
    pub fn output_len(&self) -> usize {
        self.out.len()
    }

    /// Packets the output buffer holds at most.
    pub fn output_capacity(&self) -> u32 {
        self.out_capacity as u32
    }

    /// Whether nothing is queued anywhere in the port.
    pub fn is_empty(&self) -> bool {
        self.out.is_empty()
            && self.queued_bytes == 0
            && self.queues.iter().all(|q| q.entries.is_empty())
    }

    /// Whether the packet just queued leaves as soon as the port is free: it is the only
    /// packet the port holds.
    #[inline(never)]
    pub fn leads(&self, _qid: usize) -> bool {
        self.len_pkts() == 1
    }

    /// Packets egress queue `qid` holds.
    pub fn queue_len(&self, qid: usize) -> Option<u32> {
        self.queues.get(qid).map(|q| q.entries.len() as u32)
    }

    /// Depth, settings and counters of egress queue `qid`.
    pub fn queue_status(&self, qid: usize) -> Option<QueueStatus> {
        self.queues.get(qid).map(|q| QueueStatus {
            depth_pkts: q.entries.len() as u32,
            depth_bytes: q.bytes,
            deficit: q.deficit,
            config: q.cfg.clone(),
            counters: q.counters,
        })
    }

    /// Change the line rate (bits per second, positive).
    pub fn set_rate_bps(&mut self, rate_bps: f64) -> Result<(), ConfigError> {
        self.ns_per_byte = crate::config::ns_per_byte(rate_bps)?;
        self.rate_bps = rate_bps;
        Ok(())
    }

    /// Limit the bytes the egress queues hold together (None: no limit).
    pub fn set_buffer_bytes(&mut self, limit: Option<u64>) {
        self.buffer_limit = limit;
    }

    /// Replace one queue's settings; the departure times already given stay.
    pub fn set_queue_config(&mut self, qid: usize, cfg: QueueConfig) -> Result<(), ConfigError> {
        cfg.validate()?;
        let n = self.queues.len();
        let q = self
            .queues
            .get_mut(qid)
            .ok_or_else(|| ConfigError(format!("queue {qid} does not exist (port has {n})")))?;
        q.cfg = cfg;
        Ok(())
    }

    /// The settings of queue `qid`.
    pub fn queue_config(&self, qid: usize) -> Option<&QueueConfig> {
        self.queues.get(qid).map(|q| &q.cfg)
    }

    /// Change the scheduler; queued packets stay and are served by the new one.
    pub fn set_scheduler(&mut self, scheduler: Scheduler) {
        self.scheduler = scheduler;
        self.split = Split::of(scheduler, self.queues.len());
        self.active.clear();
        for (i, q) in self.queues.iter_mut().enumerate() {
            q.deficit = 0;
            if i < self.split.strict_from && !q.entries.is_empty() {
                self.active.push_back(i);
            }
        }
    }

    fn is_drr(&self, qid: usize) -> bool {
        qid < self.split.strict_from
    }

    /// Offer a packet to egress queue `qid` (clamped to the top queue; queue 0 under fifo). Its
    /// departure time is fixed now; it moves on to the output buffer at once if that has room.
    #[inline(never)]
    pub fn enqueue(&mut self, now: Nanos, qid: usize, bytes: u32, item: T) -> EnqueueOutcome<T> {
        let qid = qid.min(self.split.top);
        let nowf = now as f64;
        let drr = self.is_drr(qid);
        let over_buffer = self
            .buffer_limit
            .is_some_and(|b| self.queued_bytes + u64::from(bytes) > b);
        let q = &mut self.queues[qid];
        let full = q
            .cfg
            .depth_pkts
            .is_some_and(|d| q.entries.len() as u32 >= d)
            || q.cfg
                .depth_bytes
                .is_some_and(|d| q.bytes + u64::from(bytes) > d);
        let reason = if full {
            Some(DropReason::QueueFull)
        } else if over_buffer {
            Some(DropReason::BufferFull)
        } else {
            None
        };
        if let Some(reason) = reason {
            q.counters.count_drop(reason, bytes);
            return EnqueueOutcome::Dropped(item, reason);
        }
        // bmv2: departure = max(now, last departure + this packet's time at the queue's rate);
        // DRR queues are not timed (thesis Algorithm 1: their departure time is the arrival), nor
        // are queues no rate holds back (fifo)
        let timed = !drr && self.split.when_held != WhenHeld::Send;
        let depart_ns = match q.cfg.rate_bytes_per_s {
            Some(rate) if timed => {
                let d = nowf.max(q.last_depart_ns + f64::from(bytes) * 1e9 / rate);
                q.last_depart_ns = d;
                d
            }
            _ => nowf,
        };
        let was_empty = q.entries.is_empty();
        q.entries.push_back(Waiting {
            item,
            bytes,
            enq_ns: now,
            depart_ns,
            enq_depth_pkts: q.entries.len() as u32,
            enq_depth_bytes: q.bytes,
        });
        q.bytes += u64::from(bytes);
        q.counters.enq_pkts += 1;
        q.counters.enq_bytes += u64::from(bytes);
        self.queued_bytes += u64::from(bytes);
        if was_empty && drr {
            q.deficit = 0;
            self.active.push_back(qid);
        }
        self.fill_output(nowf);
        EnqueueOutcome::Queued
    }

    /// The next packet onto the wire at `now`, or `None` while the port is sending or the
    /// output buffer is empty. The scheduler refills the output buffer before and after.
    #[inline]
    pub fn dequeue(&mut self, now: Nanos) -> Option<Dequeued<T>> {
        self.dequeue_ahead(now, 0)
    }

    /// See [`crate::Port::dequeue_ahead`].
    #[inline(never)]
    pub fn dequeue_ahead(&mut self, now: Nanos, ahead: Nanos) -> Option<Dequeued<T>> {
        let real_now = now as f64;
        let now = now.saturating_add(ahead);
        let nowf = now as f64;
        self.fill_output(nowf);
        if self.out.is_empty() || nowf < self.tx_free_at {
            return None;
        }
        let m = self.out.pop_front().expect("output buffer is not empty");
        let start = self.tx_free_at.max(real_now - self.burst_ns);
        let wire_ns = f64::from(m.w.bytes + self.overhead_bytes) * self.ns_per_byte;
        self.tx_free_at = start + wire_ns;
        self.fill_output(nowf);
        Some(Dequeued {
            item: m.w.item,
            qid: m.qid,
            bytes: m.w.bytes,
            enq_ns: m.w.enq_ns,
            queued_ns: now.saturating_sub(m.w.enq_ns),
            enq_depth_pkts: m.w.enq_depth_pkts,
            enq_depth_bytes: m.w.enq_depth_bytes,
            deq_depth_pkts: m.deq_depth_pkts,
            deq_depth_bytes: m.deq_depth_bytes,
        })
    }

    /// The earliest time [`Bmv2Port::dequeue`] can return a packet if nothing else arrives,
    /// or `None` when the port holds nothing.
    #[inline(never)]
    pub fn next_event_ns(&self, now: Nanos) -> Option<Nanos> {
        let port_ready = self.tx_free_at.max(now as f64);
        if !self.out.is_empty() {
            return Some(port_ready.ceil() as Nanos);
        }
        // the output buffer is empty, so what is left waits for its departure time
        let due = self
            .queues
            .iter()
            .filter_map(|q| q.entries.front().map(|h| h.depart_ns))
            .fold(f64::INFINITY, f64::min);
        due.is_finite().then(|| port_ready.max(due).ceil() as Nanos)
    }

    /// bmv2's egress thread: move packets into the output buffer while it has room and a
    /// queue may send.
    fn fill_output(&mut self, now: f64) {
        while self.out.len() < self.out_capacity {
            let Some(qid) = self.select(now) else {
                return;
            };
            let drr = self.is_drr(qid);
            let q = &mut self.queues[qid];
            let w = q.entries.pop_front().expect("selected queue is not empty");
            q.bytes -= u64::from(w.bytes);
            q.counters.deq_pkts += 1;
            q.counters.deq_bytes += u64::from(w.bytes);
            self.queued_bytes -= u64::from(w.bytes);
            if drr && q.entries.is_empty() {
                q.deficit = 0;
                self.active.pop_front();
            }
            let (deq_depth_pkts, deq_depth_bytes) = (q.entries.len() as u32, q.bytes);
            self.out.push_back(Moved {
                w,
                qid,
                deq_depth_pkts,
                deq_depth_bytes,
            });
        }
    }

    /// Which queue the scheduler takes from at `now`.
    /// The strict queues the setting feeds, highest first (bmv2 has no stranded packets: one in
    /// a queue the setting does not feed waits for a setting that does); then DRR.
    fn select(&mut self, now: f64) -> Option<usize> {
        let top = self.split.top;
        for qid in (self.split.strict_from..=top).rev() {
            if self.queues[qid].head_due(now) {
                return Some(qid);
            }
        }
        if let Some(qid) = self.drr_pick() {
            return Some(qid);
        }
        if self.split.when_held == WhenHeld::Borrow && !self.queues[top].entries.is_empty() {
            return Some(top);
        }
        None
    }

    /// Deficit round robin over the DRR queues (thesis listing 4.3).
    fn drr_pick(&mut self) -> Option<usize> {
        loop {
            let qid = self.active.front()?;
            let q = &mut self.queues[qid];
            if self.active.front_fresh {
                q.deficit += u64::from(q.cfg.quantum);
                self.active.front_fresh = false;
            }
            let head = u64::from(q.entries.front().expect("active queue is not empty").bytes);
            if q.deficit >= head {
                q.deficit -= head;
                return Some(qid);
            }
            self.active.rotate();
        }
    }
}

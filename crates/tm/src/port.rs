//! One egress port: class queues, shared buffer, scheduler and line-rate pacing.
//!
//! Algorithm
//!
//! One mechanism, as Linux's sch_ets: queues are numbered 0..N, a higher number a higher priority
//! (bmv2's `priority`); the queues at or above `strict_from` are strict, the ones below share the
//! rest by deficit round robin. Every scheduler is a setting of it (split.rs):
//!
//! | scheduler       | arrivals go to | strict queues | a strict queue held by its rate, if no other may send |
//! |-----------------|----------------|---------------|-------------------------------------------------------|
//! | fifo            | queue 0        | all           | sends, charged to its bucket                          |
//! | strict          | their priority | all           | waits                                                 |
//! | drr             | their priority | none          | -                                                     |
//! | rlsp-drr        | their priority | the top one   | waits                                                 |
//! | rlsp-drr-borrow | their priority | the top one   | sends, uncharged (it borrows)                         |
//!
//! So fifo is strict priority over the one queue it feeds, which no rate holds back: its packets
//! leave in arrival order, back to back.
//!
//! - Enqueue: the priority is clamped to the highest queue the setting feeds (`top`: the port's
//!   top queue, 0 under fifo). A packet is refused if its queue is at its packet or byte depth, or
//!   the port's shared buffer is full. A queue that becomes non-empty joins the DRR round (if it
//!   is a DRR queue) with a zero deficit.
//! - Dequeue, only when the port is free (`now >= tx_free_at`): the highest non-empty strict queue
//!   whose token bucket holds its head sends; else the DRR queue at the front of the round sends if
//!   its deficit covers its head (it adds its quantum once per visit), otherwise it goes to the
//!   back of the round; else the highest non-empty strict queue sends anyway if the setting says
//!   so (borrowing: uncharged; fifo: charged). A queue that empties leaves the round and loses its
//!   deficit.
//! - A change of scheduler leaves every packet where it is. Packets in a queue the new setting does
//!   not feed (after a change to fifo: any queue but 0) are stranded: until they are gone the port
//!   sends the oldest head of all its queues first, whatever the rates, so no packet overtakes one
//!   that arrived before it; then the split serves as set.
//! - Token buckets (shaper.rs): a rate-limited queue's bucket fills at its rate up to its burst;
//!   a departure is charged when it leaves, but no earlier than the moment the head became ready
//!   minus the frame that was on the wire then, so a non-preemptive link does not cost the class
//!   its rate. Over any window T a queue sends at most rate x T + burst (+ that frame's share).
//! - Pacing: a departure occupies the port for its wire time (bytes + overhead at line rate); a
//!   caller that comes late may send back to back until the port is on schedule again, at most
//!   `burst_ns` behind it. A caller that sends ahead (`dequeue_ahead`) is judged late or not at
//!   its real time, not the time it sends for.
//! - `next_event_ns` tells an event loop when to call `dequeue` next: when the port is free if a
//!   DRR queue has work, or a strict queue may send past its rate (borrowing, fifo), or packets
//!   are stranded; else when the earliest strict head's bucket allows.

use crate::config::{ConfigError, DropPolicy, PortConfig, QueueConfig, Scheduler};
use crate::drr::ActiveList;
use crate::queue::{Entry, Queue};
use crate::split::{Split, WhenHeld};
use crate::stats::{DropReason, QueueStatus};
use crate::Nanos;

/// Result of [`Port::enqueue`]. A dropped packet is handed back so the caller can reuse its buffer:
/// the arrival, or under [`DropPolicy::Random`] the queued packet drawn (the arrival is queued).
#[derive(Debug, PartialEq, Eq)]
pub enum EnqueueOutcome<T> {
    /// The packet is in its queue.
    Queued,
    /// A packet was dropped, and why: the arrival, or under random drop the queued one drawn.
    Dropped(T, DropReason),
}

/// A packet leaving the TM, with the telemetry bmv2 exposes as standard_metadata.
#[derive(Debug, PartialEq, Eq)]
pub struct Dequeued<T> {
    /// What the caller enqueued (the switch: its packet buffer's slot).
    pub item: T,
    /// The queue it left from.
    pub qid: usize,
    /// Its size as enqueued.
    pub bytes: u32,
    /// When it was enqueued.
    pub enq_ns: Nanos,
    /// Time spent queued (bmv2's deq_timedelta, here in ns).
    pub queued_ns: Nanos,
    /// Packets in its queue when it arrived (bmv2's enq_qdepth).
    pub enq_depth_pkts: u32,
    /// Bytes in its queue when it arrived.
    pub enq_depth_bytes: u64,
    /// Depth of the queue left behind by this packet.
    pub deq_depth_pkts: u32,
    /// Bytes left in its queue behind it.
    pub deq_depth_bytes: u64,
}

/// One egress port's traffic manager; `T` is what a queued packet carries (see the module's
/// Algorithm).
pub struct Port<T> {
    queues: Vec<Queue<T>>,
    scheduler: Scheduler,
    /// The scheduler as a setting of the strict/DRR split.
    split: Split,
    /// Bit i set when queue i holds packets.
    nonempty: u32,
    /// Bit i set when queue i held packets when the setting stopped feeding it (see Algorithm);
    /// a bit may outlive its queue's last packet until the next selection clears it.
    stranded: u32,
    active: ActiveList,
    buffer_limit: Option<u64>,
    buffer_used: u64,
    rate_bps: f64,
    ns_per_byte: f64,
    overhead_bytes: u32,
    burst_ns: f64,
    /// When the port finishes the packet it is sending: nothing is chosen before then.
    tx_free_at: f64,
    /// Wire time of the packet sent last: the most a ready queue can have been kept waiting by it.
    last_wire_ns: f64,
    seq: u64,
    drop: DropPolicy,
    /// Draws random drop's victims: seeded, so a run with the same arrivals drops the same packets.
    rng: XorShift,
}

/// xorshift64*: a few instructions per draw, statistically plenty for picking drop victims.
struct XorShift(u64);

impl XorShift {
    /// A number in [0, n), n >= 1 (the multiply-shift range reduction: no modulo bias to speak of).
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        ((u128::from(x) * u128::from(n)) >> 64) as u64
    }
}

impl<T> Port<T> {
    /// A port with these settings, or the reason they cannot be used.
    pub fn new(cfg: PortConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let n = cfg.queues.len();
        let mut port = Port {
            queues: cfg.queues.into_iter().map(Queue::new).collect(),
            scheduler: cfg.scheduler,
            split: Split::of(cfg.scheduler, n),
            nonempty: 0,
            stranded: 0,
            active: ActiveList::new(),
            buffer_limit: cfg.buffer_bytes,
            buffer_used: 0,
            rate_bps: 0.0,
            ns_per_byte: 0.0,
            overhead_bytes: cfg.overhead_bytes,
            burst_ns: cfg.burst_ns as f64,
            tx_free_at: 0.0,
            last_wire_ns: 0.0,
            seq: 0,
            drop: cfg.drop,
            rng: XorShift(0x9E37_79B9_7F4A_7C15),
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

    /// What a full queue drops.
    pub fn drop_policy(&self) -> DropPolicy {
        self.drop
    }

    /// Change what a full queue drops from now on (nothing queued is touched).
    pub fn set_drop_policy(&mut self, drop: DropPolicy) {
        self.drop = drop;
    }

    /// The line rate in bits per second.
    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    /// Packets queued, all queues.
    pub fn len_pkts(&self) -> u32 {
        self.queues.iter().map(Queue::len).sum()
    }

    /// Bytes queued, all queues (what the shared buffer holds).
    pub fn len_bytes(&self) -> u64 {
        self.buffer_used
    }

    /// Whether no queue holds a packet.
    pub fn is_empty(&self) -> bool {
        self.nonempty == 0
    }

    /// Whether the one packet queue `qid` holds leads the port: it is the only packet queued,
    /// or `qid` is strict and no higher strict queue holds packets. Such a packet leaves as soon
    /// as the port is free (and its queue's bucket allows); any other waits for the packets
    /// ahead of it. An event loop uses this to tell arrivals worth waking for.
    pub fn leads(&self, qid: usize) -> bool {
        let qid = qid.min(self.split.top);
        if self.queues[qid].len() != 1 {
            return false;
        }
        if self.nonempty == 1 << qid {
            return true;
        }
        // (a stranded packet lies in a queue above any fed one, so this fails while one does)
        qid >= self.split.strict_from && self.nonempty >> qid == 1
    }

    /// Packets queue `qid` holds, if the port has it (what [`Self::queue_status`] gives as
    /// `depth_pkts`, without copying the rest; an event loop asks it every turn).
    pub fn queue_len(&self, qid: usize) -> Option<u32> {
        self.queues.get(qid).map(Queue::len)
    }

    /// Depth, settings and counters of queue `qid`, if the port has it.
    pub fn queue_status(&self, qid: usize) -> Option<QueueStatus> {
        self.queues.get(qid).map(|q| QueueStatus {
            depth_pkts: q.len(),
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

    /// Limit the bytes all queues hold together (None: no limit).
    pub fn set_buffer_bytes(&mut self, limit: Option<u64>) {
        self.buffer_limit = limit;
    }

    /// Replace one queue's configuration. Queued packets stay, even above a smaller new depth.
    pub fn set_queue_config(&mut self, qid: usize, cfg: QueueConfig) -> Result<(), ConfigError> {
        cfg.validate()?;
        let n = self.queues.len();
        let q = self
            .queues
            .get_mut(qid)
            .ok_or_else(|| ConfigError(format!("queue {qid} does not exist (port has {n})")))?;
        q.set_config(cfg);
        Ok(())
    }

    /// The settings of queue `qid`, if the port has it.
    pub fn queue_config(&self, qid: usize) -> Option<&QueueConfig> {
        self.queues.get(qid).map(|q| &q.cfg)
    }

    /// Change the scheduler; queued packets stay where they are and are served by the new one
    /// (those in a queue it does not feed first, oldest first: see the module's Algorithm).
    pub fn set_scheduler(&mut self, scheduler: Scheduler) {
        self.scheduler = scheduler;
        self.split = Split::of(scheduler, self.queues.len());
        self.stranded = self.nonempty & !self.split.fed_mask();
        self.active.clear();
        for (i, q) in self.queues.iter_mut().enumerate() {
            q.deficit = 0;
            if i < self.split.strict_from && !q.entries.is_empty() {
                self.active.push_back(i);
            }
        }
    }

    /// Offer a packet of `bytes` to queue `qid` (clamped to the highest queue, as a priority
    /// beyond the port's queues means "top class"). Under FIFO every packet goes to queue 0.
    pub fn enqueue(&mut self, now: Nanos, qid: usize, bytes: u32, item: T) -> EnqueueOutcome<T> {
        let qid = qid.min(self.split.top);
        let q = &mut self.queues[qid];
        let reason = if q.would_overflow(bytes) {
            Some(DropReason::QueueFull)
        } else if self
            .buffer_limit
            .is_some_and(|b| self.buffer_used + u64::from(bytes) > b)
        {
            Some(DropReason::BufferFull)
        } else {
            None
        };
        // judged before a drop: a random drop may take the only packet just before the arrival
        // comes in, and the queue must not join the DRR round a second time
        let was_empty = q.entries.is_empty();
        let mut displaced = None;
        if let Some(reason) = reason {
            // random drop: the victim is drawn from the queued packets and the arrival alike
            let pick = if reason == DropReason::QueueFull && self.drop == DropPolicy::Random {
                let r = self.rng.below(q.entries.len() as u64 + 1) as usize;
                q.entries.get(r).map(|e| (r, e.bytes))
            } else {
                None
            };
            let room = pick.filter(|&(_, b)| {
                q.would_fit_without(b, bytes)
                    && self
                        .buffer_limit
                        .is_none_or(|lim| self.buffer_used - u64::from(b) + u64::from(bytes) <= lim)
            });
            let Some((r, _)) = room else {
                q.counters.count_drop(reason, bytes);
                return EnqueueOutcome::Dropped(item, reason);
            };
            let gone = q.entries.remove(r).expect("drawn from the queue's indices");
            q.bytes -= u64::from(gone.bytes);
            self.buffer_used -= u64::from(gone.bytes);
            q.counters.count_drop(reason, gone.bytes);
            displaced = Some(gone.item);
        }
        q.entries.push_back(Entry {
            item,
            bytes,
            enq_ns: now,
            enq_depth_pkts: q.len(),
            enq_depth_bytes: q.bytes,
            seq: self.seq,
        });
        q.bytes += u64::from(bytes);
        q.counters.enq_pkts += 1;
        q.counters.enq_bytes += u64::from(bytes);
        self.seq += 1;
        self.buffer_used += u64::from(bytes);
        if was_empty {
            self.nonempty |= 1 << qid;
            if qid < self.split.strict_from {
                q.deficit = 0;
                self.active.push_back(qid);
            }
        }
        match displaced {
            Some(head) => EnqueueOutcome::Dropped(head, DropReason::QueueFull),
            None => EnqueueOutcome::Queued,
        }
    }

    /// The next packet to put on the wire at `now`, or `None` if the port is still sending or
    /// no queue may send yet. The scheduling decision is made here, at the moment the port can
    /// transmit, never earlier.
    pub fn dequeue(&mut self, now: Nanos) -> Option<Dequeued<T>> {
        self.dequeue_ahead(now, 0)
    }

    /// [`Port::dequeue`] for a caller that sends what is due up to `ahead` ns after `now`
    /// (a batching event loop): the packet goes out as if at `now + ahead`, but whether the
    /// caller came late, and so how far the port may catch up, is judged at `now`. Judged at
    /// `now + ahead`, a window as long as `burst_ns` would leave no catch-up at all, and every
    /// late wake-up would cost the port line time.
    pub fn dequeue_ahead(&mut self, now: Nanos, ahead: Nanos) -> Option<Dequeued<T>> {
        if self.nonempty == 0 {
            return None;
        }
        let real_now = now as f64;
        let now = now.saturating_add(ahead);
        let nowf = now as f64;
        if nowf < self.tx_free_at {
            return None;
        }
        let (qid, borrowed) = self.select(nowf)?;
        let q = &mut self.queues[qid];
        if qid >= self.split.strict_from {
            // the frame in flight may have held the head past the moment its bucket allowed it:
            // that wait is not charged (a non-preemptive link must not cost the class its rate);
            // a late caller is covered by the bucket itself, which kept filling meanwhile
            q.charge_head(nowf, self.last_wire_ns, borrowed);
        }
        let e = q.entries.pop_front().expect("selected queue is not empty");
        q.bytes -= u64::from(e.bytes);
        q.counters.deq_pkts += 1;
        q.counters.deq_bytes += u64::from(e.bytes);
        if q.entries.is_empty() {
            self.nonempty &= !(1 << qid);
            if qid < self.split.strict_from {
                q.deficit = 0;
                self.active.pop_front();
            }
        }
        let (deq_depth_pkts, deq_depth_bytes) = (q.len(), q.bytes);
        self.buffer_used -= u64::from(e.bytes);
        // a port behind its schedule (the caller came late) catches up by at most burst_ns
        let start = self.tx_free_at.max(real_now - self.burst_ns);
        self.last_wire_ns = f64::from(e.bytes + self.overhead_bytes) * self.ns_per_byte;
        self.tx_free_at = start + self.last_wire_ns;
        Some(Dequeued {
            item: e.item,
            qid,
            bytes: e.bytes,
            enq_ns: e.enq_ns,
            queued_ns: now.saturating_sub(e.enq_ns),
            enq_depth_pkts: e.enq_depth_pkts,
            enq_depth_bytes: e.enq_depth_bytes,
            deq_depth_pkts,
            deq_depth_bytes,
        })
    }

    /// The earliest time at which [`Port::dequeue`] can return a packet if nothing else
    /// arrives, or `None` when the port is empty. An event loop sleeps until then.
    pub fn next_event_ns(&self, now: Nanos) -> Option<Nanos> {
        if self.nonempty == 0 {
            return None;
        }
        let port_ready = self.tx_free_at.max(now as f64);
        let when = if self.nonempty & self.split.ready_mask != 0 || self.stranded != 0 {
            port_ready
        } else {
            let mut earliest = f64::INFINITY;
            for qid in bits(self.nonempty) {
                let q = &self.queues[qid];
                earliest = earliest.min(q.head_ready_at());
            }
            port_ready.max(earliest)
        };
        Some(when.ceil() as Nanos)
    }

    /// Which queue sends now, and whether it borrows capacity beyond its rate.
    fn select(&mut self, now: f64) -> Option<(usize, bool)> {
        if self.stranded != 0 {
            if let Some(qid) = self.oldest_head() {
                return Some((qid, false));
            }
        }
        let strict = self.nonempty & !self.split.drr_mask;
        for qid in bits_high_first(strict) {
            if self.queues[qid].rate_allows(now) {
                return Some((qid, false));
            }
        }
        if let Some(qid) = self.drr_pick() {
            return Some((qid, false));
        }
        if strict == 0 {
            return None;
        }
        let highest = 31 - strict.leading_zeros() as usize;
        match self.split.when_held {
            WhenHeld::Wait => None,
            WhenHeld::Borrow => Some((highest, true)),
            WhenHeld::Send => Some((highest, false)),
        }
    }

    /// Deficit round robin (Shreedhar & Varghese): the front queue gets its quantum once per
    /// round and sends while its deficit covers the head packet, then goes to the back.
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

    /// While packets are stranded: the queue whose head arrived first, of all queues (None once
    /// the stranded queues are empty). Only after a change of scheduler, so out of line.
    #[cold]
    #[inline(never)]
    fn oldest_head(&mut self) -> Option<usize> {
        self.stranded &= self.nonempty;
        if self.stranded == 0 {
            return None;
        }
        bits(self.nonempty)
            .min_by_key(|&qid| self.queues[qid].entries.front().map_or(u64::MAX, |e| e.seq))
    }
}

fn bits(mut mask: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            i
        })
    })
}

fn bits_high_first(mut mask: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let i = 31 - mask.leading_zeros() as usize;
            mask &= !(1 << i);
            i
        })
    })
}

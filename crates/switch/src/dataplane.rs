//! The packet path without I/O: ingress pipeline -> TM enqueue; when a port may send: TM
//! dequeue -> egress pipeline -> deparsed frame handed to a transmit callback. The event loop
//! (switch.rs) owns the sockets and calls in here; tests and benchmarks call it directly.
//!
//! Clones (mirroring) as in bmv2's simple_switch: a mirror session maps a session id to an
//! egress port (and an optional truncation length). A clone asked for in ingress (I2E) or in
//! egress (E2E) is a new packet in its own buffer, queued in the TM of the session's port (the
//! queue its priority picks: 0 unless the program's field list keeps `priority`), and run
//! through egress there (see `lanes_p4::Program::ingress_clone` and `egress_clone` for what the
//! copy holds). A clone to a session that is not configured is counted (`no_mirror_session`)
//! and not made. A clone of a clone is allowed, as in bmv2, but at most [`MAX_CLONE_GENERATIONS`]
//! deep: a program that clones every packet in egress makes a bounded chain of copies per
//! received packet, not an endless one; the copy that would go deeper is counted
//! (`clone_depth`) and not made. Mirror sessions belong to the switch, not the program: they
//! stay when a new program is loaded.
//!
//! Multicast as in simple_switch: a packet whose ingress set `mcast_grp` leaves once per
//! (port, rid) of the group in the replication engine ([`Pre`]), each copy queued in its port's
//! TM (the queue its priority picks) and run through egress with `egress_rid` set; the group
//! wins over `egress_spec`. A group with no copies (not created, or empty) drops the packet and
//! counts it (`no_multicast_group`). Groups, like mirror sessions, stay across program loads.
//!
//! Resubmission and recirculation as in simple_switch: a packet whose ingress asked for
//! `resubmit` goes through ingress again as it was received (it is not forwarded); one whose
//! egress asked for `recirculate` goes through ingress again as egress emitted it (it is not
//! sent). Both keep the port they came in on and the program's field list; a packet may take at
//! most [`MAX_PASSES`] such passes, the one beyond is dropped and counted (`pass_limit`).

mod copies;
mod counters;
mod leading;
mod mirrors;
mod portless;
mod queues;
mod setting_error;
mod settings;
mod top_class;
mod trace_log;
pub use counters::{DropCounters, LoopCounters, PortCounters, TxOutcome};
pub use queues::PPS_FRAME_BYTES;
pub use setting_error::{SettingError, THRIFT_SESSION_NOT_FOUND};
pub use settings::{MirrorSession, TmDefaults};
use top_class::near_top_of_top_class;
pub use top_class::TOP_CLASS_WAKE_DEPTH;
pub use trace_log::TraceLog;

use crate::batch_window::BatchWindow;
use crate::delay::DelayHistogram;
use crate::pre::Pre;
use crate::queue_cfg::QueueConfigTracker;
use lanes_p4::p4info::P4Names;
use lanes_p4::{Digest, EgressMeta, IngressResult, PacketState, Program};
use lanes_tm::{
    ConfigError, DropReason as TmDrop, EnqueueOutcome, PortConfig, QueueConfig, TmPort,
};
use std::collections::BTreeMap;
use std::sync::Arc;

/// bmv2 port numbers go up to 511 (511 itself is the drop port).
pub const MAX_PORTS: usize = 512;
/// Largest frame a port accepts; longer ones are counted and dropped.
pub const MAX_FRAME: usize = 9216 + 18;
/// Packets the switch holds at most (all queues of all ports).
const MAX_SLOTS: usize = 1 << 16;
/// Largest mirror session id (bmv2's simple_switch: 15 bits).
pub const MAX_MIRROR_SESSION: u32 = 32767;
/// How many clones deep a copy may be: a received packet is generation 0, its clone 1, a clone
/// of that clone 2, ... A clone that would be deeper is counted (`clone_depth`) and not made.
pub const MAX_CLONE_GENERATIONS: u8 = 4;

/// How many times a packet may be resubmitted or recirculated (in all); the pass that would go
/// beyond is counted (`pass_limit`) and the packet dropped, so a program that recirculates
/// every packet cannot keep the switch busy forever.
pub const MAX_PASSES: u8 = 16;

/// One port: its traffic manager, counters and queueing-delay histograms.
pub struct EgressPort {
    /// The port number (bmv2's).
    pub num: u32,
    /// Its traffic manager; queued items are packet buffer slots.
    pub tm: TmPort<u32>,
    /// What it received and sent.
    pub counters: PortCounters,
    /// Queueing delay per queue, recorded at dequeue.
    pub delay: Vec<DelayHistogram>,
    /// Queues (bit per qid) that received a leading frame since the loop last asked
    /// ([`Dataplane::leading_left_queued`]).
    leading_taken: u32,
}

struct Slot {
    frame: Vec<u8>,
    len: usize,
    /// The port the packet came in on (resubmitted and recirculated packets keep it).
    in_port: u32,
    state: Option<PacketState>,
}

/// The packet path without I/O: program, ports with their TMs, packet buffers, counters.
pub struct Dataplane {
    program: Option<Program>,
    /// The program's tables, actions and externs by name, for the command port.
    names: Option<Arc<P4Names>>,
    tracker: QueueConfigTracker,
    /// The ports, in the order they were added.
    pub ports: Vec<EgressPort>,
    index: Vec<u16>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    out: Vec<u8>,
    /// Drops by reason, switch-wide.
    pub drops: DropCounters,
    /// What the event loop did instead of sleeping.
    pub event_loop: LoopCounters,
    defaults: TmDefaults,
    /// Port whose output goes to the controller (P4Runtime PacketIn) instead of a wire.
    cpu_port: Option<u32>,
    packet_ins: std::collections::VecDeque<Vec<u8>>,
    mirrors: BTreeMap<u32, MirrorSession>,
    /// The packet replication engine: multicast groups.
    pub pre: Pre,
    digests: std::collections::VecDeque<Digest>,
    /// Whether the last frame given to `ingress` leads its port (it leaves as soon as the port
    /// is free), for the event loop's choice of which arrivals wake it.
    rx_leads: bool,
    /// Whether a frame of a port's top strict class counts as leading even behind others of its
    /// class (see [`Dataplane::set_wake_for_top_class`]).
    wake_top_class: bool,
    /// The per-packet log each installed program writes (None: off).
    trace_log: Option<TraceLog>,
}

/// Digests kept for a controller that reads slowly; older ones are dropped first (and counted).
const MAX_DIGESTS: usize = 16384;

/// Where ingress's digests go: the data plane's queue, bounded.
struct DigestSink<'a>(
    &'a mut std::collections::VecDeque<Digest>,
    &'a mut DropCounters,
);

impl Extend<Digest> for DigestSink<'_> {
    fn extend<I: IntoIterator<Item = Digest>>(&mut self, it: I) {
        for d in it {
            if self.0.len() == MAX_DIGESTS {
                self.0.pop_front();
                self.1.digests += 1;
            }
            self.0.push_back(d);
        }
    }
}

/// PacketIns kept for a controller that reads slowly; older ones are dropped first.
const MAX_PACKET_INS: usize = 4096;

const NO_PORT: u16 = u16::MAX;

impl Dataplane {
    /// A data plane with no ports and no program; ports get `defaults`.
    pub fn new(defaults: TmDefaults) -> Self {
        Dataplane {
            program: None,
            names: None,
            tracker: QueueConfigTracker::default(),
            ports: vec![],
            index: vec![NO_PORT; MAX_PORTS],
            slots: vec![],
            free: vec![],
            out: Vec::with_capacity(MAX_FRAME + 64),
            drops: DropCounters::default(),
            event_loop: LoopCounters::default(),
            defaults,
            cpu_port: None,
            packet_ins: std::collections::VecDeque::new(),
            mirrors: BTreeMap::new(),
            pre: Pre::default(),
            digests: std::collections::VecDeque::new(),
            rx_leads: false,
            wake_top_class: false,
            trace_log: None,
        }
    }

    /// Whether the last frame given to [`Dataplane::ingress`] leads its port's queues (see
    /// `lanes_tm::Port::leads`); false if it waits behind others, was multicast or dropped.
    pub fn last_rx_leads(&self) -> bool {
        self.rx_leads
    }

    /// Also count a frame of its port's top strict class as leading when up to
    /// [`TOP_CLASS_WAKE_DEPTH`] packets of that class are ahead of it. Those leave before every
    /// other class, so within a few frame times, and the loop that batches departures would
    /// otherwise read such a frame only at its next turn, up to a batch window later: the wait a
    /// dense or bursty high class sees. Costs a wake-up per such arrival.
    pub fn set_wake_for_top_class(&mut self, on: bool) {
        self.wake_top_class = on;
    }

    /// Make `num` the CPU port: an egress port (with its own TM, at the default rate) whose
    /// frames are kept for the controller, and the ingress port of injected PacketOuts.
    pub fn set_cpu_port(&mut self, num: u32) -> Result<(), ConfigError> {
        if self.port(num).is_none() {
            self.add_port(num, None)?;
        }
        self.cpu_port = Some(num);
        Ok(())
    }

    /// The CPU port, if one is set.
    pub fn cpu_port(&self) -> Option<u32> {
        self.cpu_port
    }

    /// Whether frames for the CPU port are waiting.
    pub fn has_packet_ins(&self) -> bool {
        !self.packet_ins.is_empty()
    }

    /// Whether digests are waiting.
    pub fn has_digests(&self) -> bool {
        !self.digests.is_empty()
    }

    /// Digests ingress generated, oldest first (see `lanes_p4::Program::take_digests`).
    pub fn take_digests(&mut self) -> Vec<Digest> {
        self.digests.drain(..).collect()
    }

    /// Frames the program sent to the CPU port, oldest first.
    pub fn take_packet_ins(&mut self) -> Vec<Vec<u8>> {
        self.packet_ins.drain(..).collect()
    }

    /// A PacketOut: the frame enters the pipeline on the CPU port, as in bmv2.
    pub fn inject(&mut self, frame: &[u8], now: u64) -> Result<(), String> {
        let cpu = self.cpu_port.ok_or("no CPU port configured (--cpu-port)")?;
        if frame.len() > MAX_FRAME {
            return Err(format!(
                "frame of {} bytes is longer than {MAX_FRAME}",
                frame.len()
            ));
        }
        let slot = self.take_slot().ok_or("switch buffer full")?;
        self.slots[slot as usize].frame[..frame.len()].copy_from_slice(frame);
        self.ingress(slot, frame.len(), cpu, now);
        Ok(())
    }

    /// The TM settings new ports get.
    pub fn defaults(&self) -> &TmDefaults {
        &self.defaults
    }

    /// Add an egress port with the default TM settings (or `rate_bps`).
    pub fn add_port(&mut self, num: u32, rate_bps: Option<f64>) -> Result<(), ConfigError> {
        let n = num as usize;
        if n >= MAX_PORTS - 1 {
            return Err(ConfigError(format!("port {num} out of range (0-510)")));
        }
        if self.index[n] != NO_PORT {
            return Err(ConfigError(format!("port {num} given twice")));
        }
        let d = &self.defaults;
        let mut cfg = PortConfig::new(rate_bps.unwrap_or(d.rate_bps), d.scheduler, d.queues);
        for q in &mut cfg.queues {
            *q = QueueConfig {
                depth_pkts: Some(d.depth_pkts),
                ..QueueConfig::default()
            };
        }
        cfg.buffer_bytes = d.buffer_bytes;
        cfg.burst_ns = d.port_burst_ns;
        cfg.drop = d.drop;
        self.index[n] = self.ports.len() as u16;
        let tm = TmPort::new(cfg, d.model)?;
        let delay = vec![DelayHistogram::default(); tm.num_queues()];
        self.ports.push(EgressPort {
            num,
            tm,
            counters: PortCounters::default(),
            delay,
            leading_taken: 0,
        });
        Ok(())
    }

    /// Port `num`, to change.
    pub fn port_mut(&mut self, num: u32) -> Option<&mut EgressPort> {
        let i = *self.index.get(num as usize)?;
        self.ports.get_mut(usize::from(i))
    }

    /// Port `num`.
    pub fn port(&self, num: u32) -> Option<&EgressPort> {
        let i = *self.index.get(num as usize)?;
        self.ports.get(usize::from(i))
    }

    /// The loaded program.
    pub fn program(&self) -> Option<&Program> {
        self.program.as_ref()
    }

    /// The loaded program's names (tables, actions, externs), built when it was loaded.
    pub fn names(&self) -> Option<Arc<P4Names>> {
        self.names.clone()
    }

    /// The loaded program, to change its tables, counters and registers.
    pub fn program_mut(&mut self) -> Option<&mut Program> {
        self.program.as_mut()
    }

    /// Install a new program. Packets queued under the old one are dropped (their parsed state
    /// belongs to the old program) and counted as egress drops.
    pub fn set_program(&mut self, program: Program) {
        for p in 0..self.ports.len() {
            while let Some(d) = self.ports[p].tm.dequeue(u64::MAX) {
                self.drops.egress += 1;
                self.free.push(d.item);
            }
        }
        for s in &mut self.slots {
            s.state = None;
        }
        self.tracker.clear();
        self.names = Some(Arc::new(P4Names::from_program(&program)));
        self.program = Some(program);
        self.apply_trace_log();
    }

    /// A free packet buffer to receive into, or None when the switch holds MAX_SLOTS packets.
    pub fn take_slot(&mut self) -> Option<u32> {
        if let Some(s) = self.free.pop() {
            return Some(s);
        }
        if self.slots.len() >= MAX_SLOTS {
            self.drops.no_buffer += 1;
            return None;
        }
        self.slots.push(Slot {
            frame: vec![0; MAX_FRAME],
            len: 0,
            in_port: 0,
            state: None,
        });
        Some(self.slots.len() as u32 - 1)
    }

    /// The packet buffer of `slot`, to receive a frame into.
    pub fn slot_buf(&mut self, slot: u32) -> &mut [u8] {
        &mut self.slots[slot as usize].frame
    }

    /// Give `slot` back unused.
    pub fn release_slot(&mut self, slot: u32) {
        self.free.push(slot);
    }

    /// Copy a received frame (its real length may exceed the bytes given if it was truncated)
    /// into a packet buffer and run ingress on it.
    pub fn ingress_frame(&mut self, frame: &[u8], real_len: usize, in_port: u32, now: u64) {
        let Some(slot) = self.take_slot() else {
            return;
        };
        let n = frame.len().min(MAX_FRAME);
        self.slots[slot as usize].frame[..n].copy_from_slice(&frame[..n]);
        // a frame that arrived with fewer bytes than its length is dropped as oversize, never
        // parsed from what an earlier packet left in the buffer
        let len = if n < real_len {
            real_len.max(MAX_FRAME + 1)
        } else {
            real_len
        };
        self.ingress(slot, len, in_port, now);
    }

    /// Frames `service` handed to a sender as [`TxOutcome::Pending`] that it then sent.
    pub fn tx_sent(&mut self, port_num: u32, pkts: u64, bytes: u64) {
        if let Some(p) = self.port_mut(port_num) {
            p.counters.tx_pkts += pkts;
            p.counters.tx_bytes += bytes;
        }
    }

    /// Frames `service` handed to a sender as [`TxOutcome::Pending`] that the kernel refused.
    pub fn tx_refused(&mut self, port_num: u32, pkts: u64) {
        if let Some(p) = self.port_mut(port_num) {
            p.counters.tx_errors += pkts;
        }
    }

    /// A frame of `len` bytes sits in `slot`, received on `in_port` at `now`: run ingress and
    /// queue it, or count the drop and free the slot.
    pub fn ingress(&mut self, slot: u32, len: usize, in_port: u32, now: u64) {
        self.rx_leads = false;
        if let Some(p) = self.port_mut(in_port) {
            p.counters.rx_pkts += 1;
            p.counters.rx_bytes += len as u64;
        }
        if len > MAX_FRAME {
            self.drops.oversize += 1;
            return self.release_slot(slot);
        }
        let Some(prog) = self.program.as_mut() else {
            self.drops.no_program += 1;
            return self.release_slot(slot);
        };
        let s = &mut self.slots[slot as usize];
        s.len = len;
        s.in_port = in_port;
        let st = s.state.get_or_insert_with(|| prog.new_state());
        let ig = prog.ingress(st, &s.frame[..len], in_port, now);
        self.after_ingress(slot, ig, now);
    }

    /// What follows an ingress pass of the packet in `slot`, in bmv2's order: the ingress clone,
    /// a resubmission (ingress again; the packet is not forwarded), then multicast, a drop, or
    /// the TM of the output port.
    #[inline(always)]
    fn after_ingress(&mut self, slot: u32, mut ig: IngressResult, now: u64) {
        let s = &self.slots[slot as usize];
        if s.state.as_ref().is_some_and(PacketState::has_requests) {
            match self.take_requests(slot, ig, now) {
                Some(next) => ig = next,
                None => return,
            }
        }
        let len = self.slots[slot as usize].len;
        if ig.mcast_grp != 0 {
            return self.multicast(slot, len, &ig, now);
        }
        if let Some(reason) = ig.drop {
            match reason {
                lanes_p4::DropReason::ParserError(_) => self.drops.parser += 1,
                _ => self.drops.ingress += 1,
            }
            return self.release_slot(slot);
        }
        let out_port = ig.egress_spec;
        let Some(&i) = self.index.get(out_port as usize).filter(|&&i| i != NO_PORT) else {
            return self.egress_without_port(slot, out_port, now);
        };
        self.apply_queue_config(i, &ig);
        self.enqueue(i, ig.priority, len, slot, now);
        let port = &mut self.ports[usize::from(i)];
        let qid = usize::from(ig.priority);
        self.rx_leads =
            port.tm.leads(qid) || (self.wake_top_class && near_top_of_top_class(&port.tm, qid));
        if self.rx_leads {
            port.leading_taken |= 1u32.checked_shl(qid as u32).unwrap_or(0);
        }
    }

    /// Apply the queue settings a packet's metadata asks for (queue_rate, queue_quantum,
    /// queue_burst) to its queue on the port with index `i`.
    #[inline(always)]
    fn apply_queue_config(&mut self, i: u16, ig: &IngressResult) {
        if let (Some(rate), Some(quantum)) = (ig.queue_rate, ig.queue_quantum) {
            let burst = ig.queue_burst.unwrap_or(0);
            let tm = &mut self.ports[usize::from(i)].tm;
            let qid = usize::from(ig.priority);
            self.tracker
                .apply(usize::from(i), tm, qid, (rate, quantum, burst));
        }
    }

    /// Queue the packet in `slot` (a received one or a clone's copy) on the port with index
    /// `i`, or count the drop and free the slot of the packet the TM dropped.
    #[inline]
    fn enqueue(&mut self, i: u16, qid: u8, len: usize, slot: u32, now: u64) {
        let tm = &mut self.ports[usize::from(i)].tm;
        match tm.enqueue(now, usize::from(qid), len as u32, slot) {
            EnqueueOutcome::Queued => {}
            EnqueueOutcome::Dropped(slot, reason) => {
                match reason {
                    TmDrop::QueueFull => self.drops.queue_full += 1,
                    TmDrop::BufferFull => self.drops.buffer_full += 1,
                }
                self.release_slot(slot);
            }
        }
    }

    /// Send everything the ports may send at `now`: TM dequeue -> egress -> `tx(port, frame)`.
    /// `tx` says what became of each frame (the port's tx counters follow it).
    pub fn service(&mut self, now: u64, tx: &mut dyn FnMut(u32, &[u8]) -> TxOutcome) {
        self.service_until(now, now, tx);
    }

    /// As [`Dataplane::service`], and also the frames due up to `horizon` (>= `now`): they
    /// leave now, early, in one batch (a busy port then needs one wake-up per batch, not one per
    /// frame). Queueing delays are recorded as of `now`, when the frames really leave.
    pub fn service_until(
        &mut self,
        now: u64,
        horizon: u64,
        tx: &mut dyn FnMut(u32, &[u8]) -> TxOutcome,
    ) {
        self.service_ahead(now, BatchWindow::Fixed(horizon.saturating_sub(now)), tx);
    }

    /// As [`Dataplane::service_until`], each port up to `now` plus its own batch window.
    pub fn service_ahead(
        &mut self,
        now: u64,
        window: BatchWindow,
        tx: &mut dyn FnMut(u32, &[u8]) -> TxOutcome,
    ) {
        for p in 0..self.ports.len() {
            let early = window.for_rate(self.ports[p].tm.rate_bps());
            while let Some(d) = self.ports[p].tm.dequeue_ahead(now, early) {
                let port_num = self.ports[p].num;
                let queued_ns = d.queued_ns.saturating_sub(early);
                if let Some(h) = self.ports[p].delay.get_mut(d.qid) {
                    h.record(queued_ns);
                }
                let s = &mut self.slots[d.item as usize];
                let (Some(prog), Some(st)) = (self.program.as_mut(), s.state.as_mut()) else {
                    self.free.push(d.item);
                    continue;
                };
                let meta = EgressMeta {
                    egress_port: port_num,
                    qid: d.qid as u32,
                    enq_timestamp: d.enq_ns / 1000,
                    enq_qdepth: u64::from(d.enq_depth_pkts),
                    deq_timedelta: queued_ns / 1000,
                    deq_qdepth: u64::from(d.deq_depth_pkts),
                };
                let eg = prog.egress(st, &s.frame[..s.len], &meta, now, &mut self.out);
                let recirculate = st.take_recirculate();
                if let Some(req) = st.take_clone() {
                    self.clone_packet(d.item, req, None, now);
                }
                if eg.drop.is_some() {
                    self.drops.egress += 1;
                    self.free.push(d.item);
                    continue;
                }
                if let Some(how) = recirculate {
                    self.recirculate(d.item, eg.len, how, now);
                    continue;
                }
                self.free.push(d.item);
                let frame = &self.out[..eg.len];
                let c = &mut self.ports[p].counters;
                if Some(port_num) == self.cpu_port {
                    // the oldest was counted as sent when it was queued; dropped, it was not
                    if self.packet_ins.len() == MAX_PACKET_INS {
                        if let Some(old) = self.packet_ins.pop_front() {
                            c.tx_pkts -= 1;
                            c.tx_bytes -= old.len() as u64;
                            c.tx_errors += 1;
                        }
                    }
                    self.packet_ins.push_back(frame.to_vec());
                    c.tx_pkts += 1;
                    c.tx_bytes += frame.len() as u64;
                } else {
                    match tx(port_num, frame) {
                        TxOutcome::Sent => {
                            c.tx_pkts += 1;
                            c.tx_bytes += frame.len() as u64;
                        }
                        TxOutcome::Pending => {}
                        TxOutcome::Refused => c.tx_errors += 1,
                    }
                }
            }
        }
    }

    /// The earliest time any port can send, if any holds packets.
    pub fn next_deadline(&self, now: u64) -> Option<u64> {
        self.ports
            .iter()
            .filter_map(|p| p.tm.next_event_ns(now))
            .min()
    }

    /// As [`Dataplane::next_deadline`], with the batch window of the port that sends then.
    pub fn next_departure(&self, now: u64, window: BatchWindow) -> Option<(u64, u64)> {
        self.ports
            .iter()
            .filter_map(|p| Some((p.tm.next_event_ns(now)?, p)))
            .min_by_key(|&(t, _)| t)
            .map(|(t, p)| (t, window.for_rate(p.tm.rate_bps())))
    }

    /// Packets queued, all ports.
    pub fn queued_pkts(&self) -> u32 {
        self.ports.iter().map(|p| p.tm.len_pkts()).sum()
    }
}

//! Per-packet state: every header and metadata field in one word arena, allocated once.

use crate::bits::mask;
use crate::layout::{FieldRef, Layout};

/// A copy of the packet the program asked for with `clone` / `clone_preserving_field_list`
/// (bmv2's `clone_ingress_pkt_to_egress`, `clone_egress_pkt_to_egress`), from
/// [`PacketState::take_clone`]. The switch maps the session to a port and makes the copy with
/// [`crate::Program::ingress_clone`] (asked for in ingress) or
/// [`crate::Program::egress_clone`] (in egress).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CloneRequest {
    /// The mirror session the program named.
    pub session: u32,
    /// Which of the program's field lists the copy keeps (0: none); pass it back as it is.
    pub field_list: u32,
}

/// Parsed state of one packet: field values, validity bits, the payload offset and the parser
/// result. Made once per program with [`crate::Program::new_state`] and reused: `ingress` resets
/// it, so a pool of these (one per packet the traffic manager can hold) means no allocation per
/// packet. It carries everything egress needs, so the switch stores it beside the queued packet
/// bytes and egress deparses from it without parsing again.
#[derive(Debug, Clone)]
pub struct PacketState {
    pub(crate) w: Vec<u64>,
    pub(crate) valid: Vec<bool>,
    pub(crate) stack_next: Vec<u32>,
    /// Bytes of the original packet consumed by the parser; the rest is payload.
    pub(crate) payload_off: u32,
    /// Index in the program's `errors` list (0 = NoError) of the parser error, if any.
    pub(crate) parser_error: Option<u32>,
    /// Set by `exit`: stops the current control.
    pub(crate) exited: bool,
    /// The clone the running control asked for (the last call wins, as in bmv2).
    pub(crate) clone: Option<CloneRequest>,
    /// The length `truncate` cut the packet to when it is deparsed (the shortest asked for).
    pub(crate) truncate: Option<u32>,
    /// Clones between this packet and the one received (0: the received packet itself).
    pub(crate) generation: u8,
    /// `resubmit` in the ingress that just ran: the field list the next pass keeps (index + 1,
    /// 0: none).
    pub(crate) resubmit: Option<u32>,
    /// `recirculate` in the egress that just ran: the field list the next pass keeps.
    pub(crate) recirculate: Option<u32>,
    /// Resubmissions and recirculations this packet has been through.
    pub(crate) passes: u8,
    /// Learn lists (index) of the digests the running ingress generated.
    pub(crate) digests: Vec<u32>,
    /// The packet's id in the per-packet log (set only while tracing).
    pub(crate) trace_id: u64,
    /// Bytes the packet had when it entered the parser, and the change headers made valid or
    /// invalid since: `packet_length` in egress is their sum, as bmv2's packet-length register.
    pub(crate) arrival_len: u32,
    pub(crate) len_delta: i32,
}

impl PacketState {
    pub(crate) fn new(layout: &Layout) -> PacketState {
        PacketState {
            w: vec![0; layout.total_words as usize],
            valid: layout.headers.iter().map(|h| h.metadata).collect(),
            // header stacks, then header union stacks
            stack_next: vec![0; layout.stacks.len() + layout.union_stacks.len()],
            payload_off: 0,
            parser_error: None,
            exited: false,
            clone: None,
            truncate: None,
            generation: 0,
            resubmit: None,
            recirculate: None,
            passes: 0,
            digests: Vec::new(),
            trace_id: 0,
            arrival_len: 0,
            len_delta: 0,
        }
    }

    pub(crate) fn reset(&mut self, valid_init: &[bool]) {
        self.w.iter_mut().for_each(|x| *x = 0);
        self.valid.copy_from_slice(valid_init);
        self.stack_next.iter_mut().for_each(|x| *x = 0);
        self.payload_off = 0;
        self.parser_error = None;
        self.exited = false;
        self.clone = None;
        self.truncate = None;
        self.generation = 0;
        self.resubmit = None;
        self.recirculate = None;
        self.passes = 0;
        self.digests.clear();
        self.arrival_len = 0;
        self.len_delta = 0;
    }

    /// Makes this state a copy of `o` (a state of the same program), reusing its memory.
    pub(crate) fn copy_from(&mut self, o: &PacketState) {
        self.w.clone_from(&o.w);
        self.valid.clone_from(&o.valid);
        self.stack_next.clone_from(&o.stack_next);
        self.payload_off = o.payload_off;
        self.parser_error = o.parser_error;
        self.exited = false;
        self.clone = None;
        self.truncate = o.truncate;
        self.generation = o.generation;
        self.resubmit = None;
        self.recirculate = None;
        self.passes = o.passes;
        self.digests.clear();
        self.arrival_len = o.arrival_len;
        self.len_delta = o.len_delta;
    }

    /// The clone the control that just ran asked for, if any (bmv2's
    /// `clone_ingress_pkt_to_egress` / `clone_egress_pkt_to_egress`): after
    /// [`crate::Program::ingress`] an ingress clone, after [`crate::Program::egress`] an egress
    /// clone. Asked for even when the packet itself is dropped, as in bmv2 (but not when the
    /// parser rejected it before ingress ran). Egress forgets an ingress request not taken.
    pub fn take_clone(&mut self) -> Option<CloneRequest> {
        self.clone.take()
    }

    /// The resubmission the ingress that just ran asked for (bmv2's `resubmit`, p4c's
    /// `resubmit_preserving_field_list`): pass it to [`crate::Program::reingress`] with the
    /// bytes as received. As in bmv2 it wins over forwarding, multicast and `mark_to_drop`.
    pub fn take_resubmit(&mut self) -> Option<Reentry> {
        self.resubmit.take().map(Reentry::Resubmit)
    }

    /// The recirculation the egress that just ran asked for (`recirculate_preserving_field_list`):
    /// pass it to [`crate::Program::reingress`] with the bytes egress emitted. As in bmv2 a
    /// packet egress dropped is not recirculated, and one that is recirculated is not sent.
    pub fn take_recirculate(&mut self) -> Option<Reentry> {
        self.recirculate.take().map(Reentry::Recirculate)
    }

    /// Makes header `h` valid or invalid; a change moves the packet's length by `bytes`.
    #[inline]
    pub(crate) fn set_validity(&mut self, h: u32, valid: bool, bytes: i32) {
        let v = &mut self.valid[h as usize];
        if *v != valid {
            *v = valid;
            self.len_delta += if valid { bytes } else { -bytes };
        }
    }

    /// The packet's length as egress sees it (bmv2's packet-length register).
    pub(crate) fn egress_len(&self) -> u64 {
        (i64::from(self.arrival_len) + i64::from(self.len_delta)).max(0) as u64
    }

    /// Whether the control that just ran asked for a clone, a resubmission or a digest (one
    /// test for the packet path, which then takes them one by one).
    #[inline]
    pub fn has_requests(&self) -> bool {
        self.clone.is_some() || self.resubmit.is_some() || !self.digests.is_empty()
    }

    /// Resubmissions and recirculations between this packet and the one received.
    pub fn passes(&self) -> u8 {
        self.passes
    }

    /// How many clones separate this packet from the one the switch received: 0 for a
    /// received packet, 1 for a clone of it, 2 for a clone of that clone, and so on.
    pub fn clone_generation(&self) -> u8 {
        self.generation
    }

    #[inline]
    pub(crate) fn get(&self, f: FieldRef) -> u64 {
        self.w[f.word as usize]
    }

    #[inline]
    pub(crate) fn set(&mut self, f: FieldRef, v: u64) {
        self.w[f.word as usize] = v & mask(f.width.min(64));
    }

    /// Bytes of the original packet taken by parsed headers (payload starts here).
    pub fn payload_offset(&self) -> usize {
        self.payload_off as usize
    }

    /// Whether the header with this index (see [`crate::Program::header_index`]) is valid.
    pub fn is_valid(&self, header: usize) -> bool {
        self.valid.get(header).copied().unwrap_or(false)
    }

    /// Value of a field of at most 64 bits, looked up with [`crate::Program::field`].
    pub fn field(&self, f: FieldRef) -> u64 {
        self.w.get(f.word as usize).copied().unwrap_or(0)
    }

    /// Sets a field of at most 64 bits (masked to its width).
    pub fn set_field(&mut self, f: FieldRef, v: u64) {
        if (f.word as usize) < self.w.len() {
            self.set(f, v);
        }
    }
}

/// A packet going through ingress again; each carries the field list the new pass keeps
/// (index + 1 in the program's field lists, 0: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reentry {
    /// `resubmit` in ingress: the packet as received, `instance_type` 6.
    Resubmit(u32),
    /// `recirculate` in egress: the packet egress emitted, `instance_type` 4.
    Recirculate(u32),
}

/// Standard metadata fields the pipeline reads or writes itself (each optional: a program's
/// `standard_metadata` may lack some).
#[derive(Debug, Clone, Default)]
pub struct StdFields {
    pub ingress_port: Option<FieldRef>,
    pub egress_spec: Option<FieldRef>,
    pub egress_port: Option<FieldRef>,
    pub instance_type: Option<FieldRef>,
    pub packet_length: Option<FieldRef>,
    pub priority: Option<FieldRef>,
    pub queue_rate: Option<FieldRef>,
    pub queue_quantum: Option<FieldRef>,
    pub queue_burst: Option<FieldRef>,
    pub enq_timestamp: Option<FieldRef>,
    pub enq_qdepth: Option<FieldRef>,
    pub deq_timedelta: Option<FieldRef>,
    pub deq_qdepth: Option<FieldRef>,
    pub qid: Option<FieldRef>,
    pub mcast_grp: Option<FieldRef>,
    pub egress_rid: Option<FieldRef>,
    pub checksum_error: Option<FieldRef>,
    pub parser_error: Option<FieldRef>,
    pub ingress_global_timestamp: Option<FieldRef>,
    pub egress_global_timestamp: Option<FieldRef>,
}

impl StdFields {
    pub fn resolve(l: &Layout) -> StdFields {
        let f = |n: &str| {
            l.field_opt("standard_metadata", n)
                .filter(|x| x.width <= 64)
        };
        // programs compiled from P4-14 keep the multicast fields in `intrinsic_metadata`
        let intrinsic = |n: &str| {
            f(n).or_else(|| {
                l.field_opt("intrinsic_metadata", n)
                    .filter(|x| x.width <= 64)
            })
        };
        StdFields {
            ingress_port: f("ingress_port"),
            egress_spec: f("egress_spec"),
            egress_port: f("egress_port"),
            instance_type: f("instance_type"),
            packet_length: f("packet_length"),
            priority: f("priority"),
            queue_rate: f("queue_rate"),
            queue_quantum: f("queue_quantum"),
            queue_burst: f("queue_burst"),
            enq_timestamp: f("enq_timestamp"),
            enq_qdepth: f("enq_qdepth"),
            deq_timedelta: f("deq_timedelta"),
            deq_qdepth: f("deq_qdepth"),
            qid: f("qid"),
            mcast_grp: intrinsic("mcast_grp"),
            egress_rid: intrinsic("egress_rid"),
            checksum_error: f("checksum_error"),
            parser_error: f("parser_error"),
            ingress_global_timestamp: f("ingress_global_timestamp"),
            egress_global_timestamp: f("egress_global_timestamp"),
        }
    }
}

/// Writes `v` to an optional standard metadata field.
#[inline]
pub(crate) fn put(st: &mut PacketState, f: Option<FieldRef>, v: u64) {
    if let Some(f) = f {
        st.set(f, v);
    }
}

#[inline]
pub(crate) fn take(st: &PacketState, f: Option<FieldRef>) -> Option<u64> {
    f.map(|f| st.get(f))
}

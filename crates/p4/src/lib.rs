//! lanes v1model pipeline: loads the bmv2 JSON that p4c emits for simple_switch and runs it.
//!
//! # Use
//!
//! ```no_run
//! use lanes_p4::{MatchKey, Program};
//! let mut prog = Program::load(&std::fs::read_to_string("p4/tm_basic.json").unwrap()).unwrap();
//! let t = prog.table_id("MyIngress.ipv4_lpm").unwrap();
//! let a = prog.action_id(t, "MyIngress.ipv4_forward").unwrap();
//! prog.add_entry(t, vec![MatchKey::Lpm(vec![10, 0, 1, 1], 32)], a,
//!                vec![vec![0, 0, 0, 0, 1, 1], vec![1]], 0).unwrap();
//! let mut st = prog.new_state();           // once; reuse for every packet
//! let mut out = Vec::with_capacity(2048);  // once
//! # let frame = vec![0u8; 64];
//! let ig = prog.ingress(&mut st, &frame, 3, 0);
//! // ... the traffic manager queues (frame, st) on port ig.egress_spec, queue ig.priority ...
//! let eg = prog.egress(&mut st, &frame, &lanes_p4::EgressMeta { egress_port: ig.egress_spec,
//!                      ..Default::default() }, 0, &mut out);
//! ```
//!
//! # Design
//!
//! `Program::load` compiles the JSON once: every field gets a slot in a word arena (u64 per
//! field; fields wider than 64 bits take several words, most significant first), expressions
//! become small trees over slot indices, actions become op lists, tables get match structures
//! (a hash map for exact keys, one hash map per prefix length for lpm, a priority-ordered list
//! for ternary/range/optional). The per-packet path does no name lookups and no allocation:
//! key buffers and checksum scratch are allocated at load time, output buffers are the
//! caller's.
//!
//! Per-packet state lives in [`PacketState`], which the caller allocates once per program
//! ([`Program::new_state`]) and reuses. Between [`Program::ingress`] and [`Program::egress`] the
//! packet may wait in the traffic manager: the switch keeps the `PacketState` beside the
//! packet bytes (a pool with one state per packet the TM can hold), and egress continues from
//! it without parsing again; the unparsed payload is taken from the original bytes at
//! [`PacketState::payload_offset`]. We chose that over re-parsing because ingress may change
//! headers (TTL, MAC, validity) that must reach egress, exactly as in bmv2.
//!
//! Semantics follow bmv2's simple_switch: egress_spec 511 (mark_to_drop) drops after ingress
//! or egress; `priority` selects the queue (higher first); if `standard_metadata` declares
//! `queue_rate` (bytes/s), `queue_quantum` (bytes) and `queue_burst` (bytes) they are returned
//! in [`IngressResult`] for the switch to apply to the queue. A frame the parser rejects (too
//! short, no match) is counted and, as in bmv2, ingress still runs with
//! `standard_metadata.parser_error` set (after a clean parse it holds the program's `NoError`);
//! [`ParserErrorPolicy::Drop`] drops such frames before ingress instead.
//!
//! Multicast follows simple_switch too: ingress sets `mcast_grp` (in `standard_metadata`, or
//! `intrinsic_metadata` in programs from P4-14) and [`IngressResult::mcast_grp`] tells the
//! switch, whose replication engine makes one copy per (port, rid) of the group with
//! [`Program::mark_replica`] (`egress_rid` set, `instance_type` 5; copies of a clone keep theirs); a group takes precedence over
//! `egress_spec`, and `mark_to_drop` clears both.
//!
//! `resubmit` (in ingress) and `recirculate` (in egress), with or without a field list, are
//! requests the switch takes ([`PacketState::take_resubmit`], [`PacketState::take_recirculate`])
//! and answers with [`Program::reingress`]: the packet as received (resubmit, `instance_type` 6)
//! or as egress emitted it (recirculate, `instance_type` 4) goes through the parser and ingress
//! again, its metadata zero but for the arrival's and the field list's. A resubmission wins over
//! forwarding and `mark_to_drop`; an egress drop wins over a recirculation.
//!
//! Clones (mirroring) follow simple_switch: `clone_ingress_pkt_to_egress` and
//! `clone_egress_pkt_to_egress` (what p4c emits for `clone` and `clone_preserving_field_list`)
//! record a [`CloneRequest`] that the switch takes with [`PacketState::take_clone`] after
//! ingress or egress, maps the session to a port and makes the copy with [`Program::ingress_clone`]
//! (the packet as received, `instance_type` 1) or [`Program::egress_clone`] (the packet as
//! egress left it, `instance_type` 2); the copy then runs egress. A copy's metadata is zero
//! except the fields of the JSON field list the program named (and, for an ingress clone,
//! the arrival's `ingress_port`, `packet_length` and timestamp). `truncate(len)` cuts the packet
//! to `len` bytes when it is deparsed (several calls: the shortest wins; `truncate(0)` drops it).
//!
//! Anything the loader does not support is refused with a [`LoadError`] naming the JSON object;
//! `docs/v1model-support.md` lists what is supported and what is refused, and why.

#![forbid(unsafe_code)]

mod action;
pub mod api_error;
mod bits;
mod checksum;
mod codec;
mod error;
mod expr;
mod externs;
mod fxhash;
mod json;
mod layout;
mod log_msg;
pub mod names;

mod parse_errors;
mod parser;
mod pipeline;
mod profile;
mod program;
mod runtime;
mod stack_copy;
mod state;
mod table;
#[doc(hidden)]
pub mod testprog;
mod trace;
mod trace_hooks;
mod union;
mod union_stack;
mod varbit;
mod varbit_ops;
mod vset;

pub use checksum::{crc16_arc, crc32, csum16};
pub use error::{ApiError, LoadError};
pub use externs::{CounterValue, MeterRates, GREEN, RED, YELLOW};
pub use layout::FieldRef;
pub use profile::ProfileRef;
pub use program::{
    Digest, DropReason, EgressMeta, EgressResult, IngressResult, ParserErrorPolicy, Program,
    DROP_PORT, INSTANCE_EGRESS_CLONE, INSTANCE_INGRESS_CLONE, INSTANCE_RECIRCULATE,
    INSTANCE_REPLICATION, INSTANCE_RESUBMIT,
};
pub use runtime::p4info;
pub use runtime::{
    ActionCall, ActionId, EntryHandle, EntryView, FieldMatch, GroupView, KeyRules, MemberView,
    ProfileId, ProfileInfo, TableId, TableWrite, WriteKind,
};
pub use state::{CloneRequest, PacketState, Reentry};
pub use table::{MatchKey, MatchKind};
pub use trace::LogLevel;
pub use trace::{TraceNames, Tracer};

/// Packet and error counts of a program since load.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Packets given to `ingress`.
    pub packets: u64,
    /// Frames the parser rejected (truncated, malformed).
    pub parser_errors: u64,
    /// verify_checksum failures (bmv2 sets `checksum_error` and goes on; so do we).
    pub checksum_errors: u64,
    pub ingress_drops: u64,
    pub egress_drops: u64,
    /// Counter/register/meter accesses out of range (ignored, as a no-op).
    pub extern_index_errors: u64,
    /// Hits on an entry whose action selector group is empty (run as a miss).
    pub empty_group_misses: u64,
}

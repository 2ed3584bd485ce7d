//! `Program`: a loaded bmv2 JSON program, its runtime state, and the per-packet entry points.

mod copies;
mod psa;
mod walk;

use crate::action::{self, Action, Exec, Names};
use crate::checksum::{self, Calculation, Checksum};
use crate::codec::HeaderCodec;
use crate::error::LoadError;
use crate::externs::Externs;
use crate::json::{self, err, R};
use crate::layout::{FieldRef, Layout};
use crate::parser::{ErrorCodes, Parser};
use crate::pipeline::{Control, Ctx};
use crate::profile::ActionProfile;
use crate::state::{put, take, CloneRequest, PacketState, Reentry, StdFields};
use crate::table::Table;
use crate::vset::ValueSet;
use crate::Stats;
use serde_json::Value;
use std::collections::HashMap;

/// bmv2's drop port for a 9-bit egress_spec.
pub const DROP_PORT: u64 = 511;

/// `standard_metadata.instance_type` of a copy made by a clone in ingress (bmv2's
/// PKT_INSTANCE_TYPE_INGRESS_CLONE).
pub const INSTANCE_INGRESS_CLONE: u64 = 1;
/// `standard_metadata.instance_type` of a copy made by a clone in egress (bmv2's
/// PKT_INSTANCE_TYPE_EGRESS_CLONE).
pub const INSTANCE_EGRESS_CLONE: u64 = 2;

/// `standard_metadata.instance_type` of a recirculated packet (PKT_INSTANCE_TYPE_RECIRC).
pub const INSTANCE_RECIRCULATE: u64 = 4;
/// `standard_metadata.instance_type` of a resubmitted packet (PKT_INSTANCE_TYPE_RESUBMIT).
pub const INSTANCE_RESUBMIT: u64 = 6;

/// How a packet enters the parser: what `instance_type` it gets, which metadata words keep
/// their values, how many passes it has been through.
struct Arrival<'a> {
    instance: u64,
    keep: &'a [(u32, u64)],
    passes: u8,
}

impl Arrival<'static> {
    /// A packet received from a port.
    const FRESH: Arrival<'static> = Arrival {
        instance: 0,
        keep: &[],
        passes: 0,
    };
}

/// `standard_metadata.instance_type` of a multicast copy (bmv2's PKT_INSTANCE_TYPE_REPLICATION).
pub const INSTANCE_REPLICATION: u64 = 5;

/// The standard metadata of an arrival: its port, length and time (bmv2's microseconds).
fn put_arrival(st: &mut PacketState, std: &StdFields, pkt: &[u8], port: u32, now: u64) {
    put(st, std.ingress_port, u64::from(port));
    put(st, std.packet_length, pkt.len() as u64);
    put(st, std.ingress_global_timestamp, now / 1000);
}

/// What to do with a packet that the parser rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParserErrorPolicy {
    /// Count and drop it before ingress runs.
    Drop,
    /// As bmv2 (the default): count it, set `standard_metadata.parser_error` and run ingress
    /// anyway, with the headers extracted before the error valid and the rest of the frame as
    /// payload; the program decides (most drop what they cannot route).
    Continue,
}

/// Why a packet was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The parser failed with this error code (see [`Program::error_name`]).
    ParserError(u32),
    /// Ingress set egress_spec to the drop port (mark_to_drop).
    Ingress,
    /// Egress set egress_spec to the drop port.
    Egress,
}

/// Result of the ingress half.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IngressResult {
    pub drop: Option<DropReason>,
    /// `standard_metadata.egress_spec` (the output port) after ingress.
    pub egress_spec: u32,
    /// `standard_metadata.priority` (queue; higher is served first), 0 if not declared.
    pub priority: u8,
    /// `standard_metadata.queue_rate` in bytes/s if the program declares it.
    pub queue_rate: Option<u64>,
    /// `standard_metadata.queue_quantum` in bytes if the program declares it.
    pub queue_quantum: Option<u64>,
    /// `standard_metadata.queue_burst` (token bucket size, bytes) if the program declares it.
    pub queue_burst: Option<u64>,
    /// `standard_metadata.mcast_grp` (0 = unicast). Replication is the switch's job.
    pub mcast_grp: u32,
    pub packet_length: u32,
}

impl IngressResult {
    /// What ingress hands on before the control has run: nothing dropped, every setting unset.
    #[inline]
    pub(crate) fn fresh(packet_length: usize) -> Self {
        IngressResult {
            drop: None,
            egress_spec: 0,
            priority: 0,
            queue_rate: None,
            queue_quantum: None,
            queue_burst: None,
            mcast_grp: 0,
            packet_length: packet_length as u32,
        }
    }
}

/// Queueing metadata the switch fills in when it hands a packet to egress (bmv2 units:
/// timestamps and deltas in microseconds, depths in packets).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EgressMeta {
    pub egress_port: u32,
    pub qid: u32,
    pub enq_timestamp: u64,
    pub enq_qdepth: u64,
    pub deq_timedelta: u64,
    pub deq_qdepth: u64,
}

/// Result of the egress half: the frame is in the output buffer unless dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EgressResult {
    pub drop: Option<DropReason>,
    pub len: usize,
}

/// A loaded program: compiled pipeline plus table entries and extern state.
#[derive(Debug)]
pub struct Program {
    pub(crate) layout: Layout,
    pub(crate) std: StdFields,
    codecs: Vec<HeaderCodec>,
    stacks: Vec<Vec<u32>>,
    parser: Parser,
    codes: ErrorCodes,
    pub(crate) errors: Vec<(String, u32)>,
    pub(crate) actions: Vec<Action>,
    pub(crate) tables: Vec<Table>,
    pub(crate) table_by_name: HashMap<String, u32>,
    pub(crate) profiles: Vec<ActionProfile>,
    pub(crate) vsets: Vec<ValueSet>,
    ingress: Control,
    egress: Control,
    deparse: Vec<u32>,
    /// Whether the deparser emits a header with a varbit field.
    has_varbit: bool,
    calcs: Vec<Calculation>,
    checksums: Vec<Checksum>,
    pub(crate) ext: Externs,
    pub(crate) stats: Stats,
    valid_init: Vec<bool>,
    /// Fields of each JSON field list (a clone's copy keeps them).
    field_lists: Vec<Vec<FieldRef>>,
    /// Name and fields of each JSON learn list (what a digest carries).
    learn_lists: Vec<(String, Vec<FieldRef>)>,
    /// Words of every metadata header's fields (zeroed in a clone's copy).
    meta_words: Vec<std::ops::Range<usize>>,
    key: Vec<u8>,
    tmp: Vec<u8>,
    scratch: Vec<u8>,
    policy: ParserErrorPolicy,
    /// The per-packet log (bmv2's `-L debug`); None: off, and each event point is one branch.
    pub(crate) trace: Option<Box<crate::trace::Tracer>>,
    pub(crate) trace_names: crate::trace::TraceNames,
    /// A PSA program's second parser and deparser (None: v1model).
    pub(crate) psa: Option<Box<psa::Psa>>,
    /// The log is on or the program is PSA: `ingress` and `egress` leave v1model's untraced
    /// walk (one test for both).
    pub(crate) off_path: bool,
}

/// The headers deparser `i` emits, in order (`computes`: its primitives are loaded apart).
fn deparse_order(layout: &Layout, deparsers: &[Value], i: usize, computes: bool) -> R<Vec<u32>> {
    let d = &deparsers[i];
    let dctx = json::label("deparsers", i, d);
    if !computes && !json::arr_or_empty(d, "primitives", &dctx)?.is_empty() {
        return err(&dctx, "deparser primitives not supported");
    }
    let mut deparse = Vec::new();
    for h in json::arr(d, "order", &dctx)? {
        let h = layout.header(json::as_str(h, &dctx)?, &dctx)?;
        if layout.headers[h as usize].metadata {
            return err(&dctx, "deparser emits a metadata header");
        }
        deparse.push(h);
    }
    Ok(deparse)
}

/// The JSON `field_lists` (which fields a clone's copy keeps) or `learn_lists` (which fields a
/// digest carries): the name and fields of each, and a map of JSON id -> index + 1.
type FieldLists = (Vec<(String, Vec<FieldRef>)>, HashMap<u64, u32>);

fn load_field_lists(root: &Value, layout: &Layout, key: &str) -> R<FieldLists> {
    let mut lists = Vec::new();
    let mut ids = HashMap::new();
    for (i, l) in json::arr_or_empty(root, key, "top level")?
        .iter()
        .enumerate()
    {
        let ctx = json::label(key, i, l);
        let id = json::u64_(l, "id", &ctx)?;
        let name = l.get("name").and_then(Value::as_str).unwrap_or_default();
        let mut fields = Vec::new();
        for e in json::arr(l, "elements", &ctx)? {
            if json::str_(e, "type", &ctx)? != "field" {
                return err(&ctx, "list elements other than fields not supported");
            }
            fields.push(layout.resolve_field(json::get(e, "value", &ctx)?, &ctx)?);
        }
        lists.push((name.to_string(), fields));
        if ids.insert(id, lists.len() as u32).is_some() {
            return err(&ctx, "duplicate list id");
        }
    }
    Ok((lists, ids))
}

/// What a digest carries: the learn list (index in [`Program::learn_lists`]) and the value of
/// each of its fields, big-endian in whole bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    pub list: u32,
    pub fields: Vec<Vec<u8>>,
}

fn refuse_nonempty(root: &Value, key: &str, what: &str) -> R<()> {
    if !json::arr_or_empty(root, key, "top level")?.is_empty() {
        return err(key, format!("{what} not supported"));
    }
    Ok(())
}

impl Program {
    /// Parses and compiles a bmv2 JSON program (as p4c emits for simple_switch / v1model).
    /// Anything not supported is refused here, with one line naming the object.
    pub fn load(text: &str) -> Result<Program, LoadError> {
        let root: Value = serde_json::from_str(text)
            .map_err(|e| LoadError::new("JSON", format!("not valid JSON: {e}")))?;
        Program::load_value(&root)
    }

    /// Like [`Program::load`], from JSON already parsed.
    pub fn load_value(root: &Value) -> Result<Program, LoadError> {
        if !root.is_object() {
            return err("top level", "expected a JSON object");
        }
        refuse_nonempty(root, "extern_instances", "extern instances")?;
        let layout = Layout::load(root)?;
        let std = StdFields::resolve(&layout);
        if std.egress_spec.is_none() {
            return err(
                "headers",
                "no standard_metadata.egress_spec: not a v1model program",
            );
        }
        let (codes, errors) = ErrorCodes::load(root)?;
        let ext = Externs::load(root, &layout)?;
        let (calcs, calc_by_name) = checksum::load_calculations(root, &layout)?;
        let checksums = checksum::load_checksums(root, &layout, &calc_by_name)?;
        let (field_lists, field_list_ids) = load_field_lists(root, &layout, "field_lists")?;
        let field_lists: Vec<Vec<FieldRef>> = field_lists.into_iter().map(|l| l.1).collect();
        let (learn_lists, learn_list_ids) = load_field_lists(root, &layout, "learn_lists")?;
        let (vsets, vset_ids) = crate::vset::load(root)?;
        let names = Names {
            layout: &layout,
            externs: &ext,
            calcs: &calc_by_name,
            std: &std,
            field_lists: &field_list_ids,
            learn_lists: &learn_list_ids,
            vsets: &vset_ids,
        };
        let actions = action::load_actions(root, &names)?;
        let mut action_by_id = HashMap::new();
        for (i, a) in actions.iter().enumerate() {
            if action_by_id.insert(a.id, i as u32).is_some() {
                return err(
                    &format!("actions[{i}] \"{}\"", a.name),
                    "duplicate action id",
                );
            }
        }
        let is_psa = psa::is_psa(root);
        let parser = if is_psa {
            Parser::load_nth(root, &names, 0)?
        } else {
            Parser::load(root, &names)?
        };
        let ctx = Ctx {
            layout: &layout,
            actions: &actions,
            action_by_id: &action_by_id,
            externs: &ext,
        };
        let mut tables = Vec::new();
        let mut profiles = Vec::new();
        let mut ingress = None;
        let mut egress = None;
        for (i, p) in json::arr(root, "pipelines", "top level")?
            .iter()
            .enumerate()
        {
            let pctx = json::label("pipelines", i, p);
            let c = Control::load(p, &pctx, &ctx, &mut tables, &mut profiles)?;
            match c.name.as_str() {
                "ingress" if ingress.is_none() => ingress = Some(c),
                "egress" if egress.is_none() => egress = Some(c),
                n => {
                    return err(
                        &pctx,
                        format!("unexpected pipeline \"{n}\" (v1model has ingress and egress)"),
                    )
                }
            }
        }
        let (Some(ingress), Some(egress)) = (ingress, egress) else {
            return err("pipelines", "need pipelines \"ingress\" and \"egress\"");
        };
        let mut table_by_name = HashMap::new();
        for (i, t) in tables.iter().enumerate() {
            table_by_name.insert(t.name.clone(), i as u32);
        }
        for c in &ext.counters {
            if let Some(b) = &c.binding {
                if !table_by_name.contains_key(b) {
                    return err(
                        &format!("counter_arrays \"{}\"", c.name),
                        format!("bound to unknown table \"{b}\""),
                    );
                }
            }
        }
        let deparsers = json::arr(root, "deparsers", "top level")?;
        let want = if is_psa { 2 } else { 1 };
        if deparsers.len() != want {
            return err(
                "deparsers",
                format!("expected {want} deparser(s), found {}", deparsers.len()),
            );
        }
        let deparse = deparse_order(&layout, deparsers, want - 1, is_psa)?;
        let psa = if is_psa {
            let ingress_deparse = deparse_order(&layout, deparsers, 0, true)?;
            Some(Box::new(psa::Psa::load(
                root,
                &names,
                &layout,
                ingress_deparse,
            )?))
        } else {
            None
        };
        let key_max = tables.iter().map(|t| t.key_len as usize).max().unwrap_or(0);
        let calc_max = calcs
            .iter()
            .map(|c| c.bits.div_ceil(8) as usize)
            .max()
            .unwrap_or(0);
        let valid_init = layout.headers.iter().map(|h| h.metadata).collect();
        let meta_words = layout
            .headers
            .iter()
            .filter(|h| h.metadata)
            .map(|h| {
                let (first, n) = h.span();
                first as usize..(first + n) as usize
            })
            .collect();
        let has_varbit = deparse
            .iter()
            .any(|h| layout.headers[*h as usize].varbit.is_some());
        Ok(Program {
            field_lists,
            learn_lists,
            meta_words,
            codecs: HeaderCodec::build(&layout),
            stacks: layout.stacks.iter().map(|s| s.headers.clone()).collect(),
            layout,
            std,
            parser,
            codes,
            errors,
            actions,
            tables,
            table_by_name,
            profiles,
            vsets,
            ingress,
            egress,
            deparse,
            has_varbit,
            calcs,
            checksums,
            ext,
            stats: Stats::default(),
            valid_init,
            key: Vec::with_capacity(key_max),
            tmp: Vec::with_capacity(key_max),
            scratch: Vec::with_capacity(calc_max),
            policy: ParserErrorPolicy::Continue,
            trace: None,
            off_path: psa.is_some(),
            trace_names: crate::trace::TraceNames::from_json(root),
            psa,
        })
    }

    /// The deparser's headers (indices in the packet state), in emit order.
    pub(crate) fn deparse_headers(&self) -> impl Iterator<Item = usize> + '_ {
        self.deparse.iter().map(|h| *h as usize)
    }

    /// A fresh per-packet state for this program (allocate once, reuse for many packets).
    pub fn new_state(&self) -> PacketState {
        PacketState::new(&self.layout)
    }

    pub fn set_parser_error_policy(&mut self, p: ParserErrorPolicy) {
        self.policy = p;
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Name of a parser error code from the program's `errors` list.
    pub fn error_name(&self, code: u32) -> Option<&str> {
        self.errors
            .iter()
            .find(|e| e.1 == code)
            .map(|e| e.0.as_str())
    }

    /// Index of a header instance (for [`PacketState::is_valid`]).
    pub fn header_index(&self, name: &str) -> Option<usize> {
        self.layout.by_name.get(name).map(|h| *h as usize)
    }

    /// Header instance names, in JSON order (index = [`Program::header_index`]).
    pub fn header_names(&self) -> Vec<&str> {
        self.layout
            .headers
            .iter()
            .map(|h| h.name.as_str())
            .collect()
    }

    /// A field of at most 64 bits, for [`PacketState::field`].
    pub fn field(&self, header: &str, field: &str) -> Option<FieldRef> {
        self.layout
            .field_opt(header, field)
            .filter(|f| f.width <= 64)
    }

    /// Each learn list (digest type): its name and the widths of its fields, in JSON order.
    pub fn learn_lists(&self) -> Vec<(&str, Vec<u32>)> {
        self.learn_lists
            .iter()
            .map(|(n, f)| (n.as_str(), f.iter().map(|f| f.width).collect()))
            .collect()
    }

    /// Whether the program's standard_metadata declares queue_rate and queue_quantum.
    pub fn has_queue_config(&self) -> bool {
        self.std.queue_rate.is_some() && self.std.queue_quantum.is_some()
    }

    /// The deparser of a program that emits a header with a varbit field (kept apart so the
    /// loop of every other program is what it was).
    #[inline(never)]
    fn deparse_varbits(&self, st: &PacketState, out: &mut Vec<u8>) {
        for h in &self.deparse {
            if st.valid[*h as usize] {
                self.codecs[*h as usize].emit_all(&st.w, out);
            }
        }
    }

    /// The end of egress for a packet that `truncate` cut.
    #[cold]
    #[inline(never)]
    fn truncated(&mut self, n: u32, out: &mut Vec<u8>) -> EgressResult {
        out.truncate(n as usize);
        if out.is_empty() {
            // truncate(0): nothing is left to send
            self.stats.egress_drops += 1;
            return EgressResult {
                drop: Some(DropReason::Egress),
                len: 0,
            };
        }
        EgressResult {
            drop: None,
            len: out.len(),
        }
    }

    /// Ingress then egress with no queue in between (tests, benchmarks, simple forwarding).
    pub fn process(
        &mut self,
        st: &mut PacketState,
        pkt: &[u8],
        port: u32,
        now: u64,
        out: &mut Vec<u8>,
    ) -> (IngressResult, EgressResult) {
        let ig = self.ingress(st, pkt, port, now);
        if ig.drop.is_some() {
            out.clear();
            return (
                ig,
                EgressResult {
                    drop: ig.drop,
                    len: 0,
                },
            );
        }
        let meta = EgressMeta {
            egress_port: ig.egress_spec,
            qid: u32::from(ig.priority),
            ..EgressMeta::default()
        };
        let eg = self.egress(st, pkt, &meta, now, out);
        (ig, eg)
    }
}

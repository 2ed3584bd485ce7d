//! PSA (the Portable Switch Architecture, as bmv2's psa_switch runs it) on the same pipeline
//! as v1model. A PSA program's JSON has two parsers (`ingress_parser`, `egress_parser`) and two
//! deparsers (`ingress_deparser`, `egress_deparser`); its PSA metadata structs are `scalars`
//! fields named after them (`psa_ingress_output_metadata.drop`), and a `standard_metadata` the
//! program never names carries what the switch tracks for every packet (ports, copy kind,
//! replication id). The v1model path pays one branch per half for this ([`Program::ingress`],
//! [`Program::egress`]); the rest is here.
//!
//! Ingress: the parser input metadata (port, packet path) is set before the ingress parser, the
//! ingress input and output metadata (drop = true, no clone, no resubmit, group 0) before the
//! ingress control; after it the output metadata becomes the switch's request: a clone (even of a
//! dropped packet), a drop, a resubmission, a multicast group or an egress port.
//! Egress: the ingress deparser's bytes (plus the payload) are parsed again by the egress parser,
//! as psa_switch does (headers invalid, metadata kept), then the egress control and the egress
//! deparser run; a clone is asked for even if the packet is dropped, and a packet sent to
//! PSA_PORT_RECIRCULATE recirculates.

use super::*;
use crate::action::{compile_primitive, Op};
use crate::layout::FieldRef;

/// psa_switch's PSA_PORT_RECIRCULATE.
pub const PSA_PORT_RECIRCULATE: u32 = 0xffff_fffa;

/// PSA_PacketPath_t, in its declaration order.
mod path {
    pub const NORMAL: u64 = 0;
    pub const NORMAL_UNICAST: u64 = 1;
    pub const NORMAL_MULTICAST: u64 = 2;
    pub const CLONE_I2E: u64 = 3;
    pub const CLONE_E2E: u64 = 4;
    pub const RESUBMIT: u64 = 5;
    pub const RECIRCULATE: u64 = 6;
}

/// The PSA metadata fields the switch reads or writes (absent if the program's JSON lacks one).
#[derive(Debug, Default)]
struct Fields {
    ip_port: Option<FieldRef>,
    ip_path: Option<FieldRef>,
    ii_port: Option<FieldRef>,
    ii_path: Option<FieldRef>,
    ii_timestamp: Option<FieldRef>,
    ii_error: Option<FieldRef>,
    io_cos: Option<FieldRef>,
    io_clone: Option<FieldRef>,
    io_session: Option<FieldRef>,
    io_drop: Option<FieldRef>,
    io_resubmit: Option<FieldRef>,
    io_group: Option<FieldRef>,
    io_port: Option<FieldRef>,
    ep_port: Option<FieldRef>,
    ep_path: Option<FieldRef>,
    ei_cos: Option<FieldRef>,
    ei_port: Option<FieldRef>,
    ei_path: Option<FieldRef>,
    ei_instance: Option<FieldRef>,
    ei_timestamp: Option<FieldRef>,
    ei_error: Option<FieldRef>,
    eo_clone: Option<FieldRef>,
    eo_session: Option<FieldRef>,
    eo_drop: Option<FieldRef>,
    ed_port: Option<FieldRef>,
}

impl Fields {
    fn resolve(l: &Layout) -> Fields {
        let f = |s: &str, n: &str| {
            l.field_opt("scalars", &format!("psa_{s}_metadata.{n}"))
                .filter(|x| x.width <= 64)
        };
        Fields {
            ip_port: f("ingress_parser_input", "ingress_port"),
            ip_path: f("ingress_parser_input", "packet_path"),
            ii_port: f("ingress_input", "ingress_port"),
            ii_path: f("ingress_input", "packet_path"),
            ii_timestamp: f("ingress_input", "ingress_timestamp"),
            ii_error: f("ingress_input", "parser_error"),
            io_cos: f("ingress_output", "class_of_service"),
            io_clone: f("ingress_output", "clone"),
            io_session: f("ingress_output", "clone_session_id"),
            io_drop: f("ingress_output", "drop"),
            io_resubmit: f("ingress_output", "resubmit"),
            io_group: f("ingress_output", "multicast_group"),
            io_port: f("ingress_output", "egress_port"),
            ep_port: f("egress_parser_input", "egress_port"),
            ep_path: f("egress_parser_input", "packet_path"),
            ei_cos: f("egress_input", "class_of_service"),
            ei_port: f("egress_input", "egress_port"),
            ei_path: f("egress_input", "packet_path"),
            ei_instance: f("egress_input", "instance"),
            ei_timestamp: f("egress_input", "egress_timestamp"),
            ei_error: f("egress_input", "parser_error"),
            eo_clone: f("egress_output", "clone"),
            eo_session: f("egress_output", "clone_session_id"),
            eo_drop: f("egress_output", "drop"),
            ed_port: f("egress_deparser_input", "egress_port"),
        }
    }
}

/// What a PSA program has beyond a v1model one.
#[derive(Debug)]
pub(crate) struct Psa {
    egress_parser: Parser,
    /// The ingress deparser's headers, in emit order (the program's `deparse` is egress's).
    ingress_deparse: Vec<u32>,
    /// What each deparser computes before it emits (an InternetChecksum): ingress, egress.
    deparser_ops: [Vec<Op>; 2],
    f: Fields,
    /// The bytes the ingress deparser wrote, which the egress parser reads (reused).
    buf: Vec<u8>,
}

/// Whether `root` is a PSA program's JSON (its parsers are psa_switch's two).
pub(crate) fn is_psa(root: &Value) -> bool {
    let name = |i: usize| {
        root.get("parsers")
            .and_then(|p| p.get(i))
            .and_then(|p| p.get("name"))
            .and_then(Value::as_str)
    };
    name(0) == Some("ingress_parser") && name(1) == Some("egress_parser")
}

impl Psa {
    pub(crate) fn load(
        root: &Value,
        names: &Names,
        layout: &Layout,
        ingress_deparse: Vec<u32>,
    ) -> R<Psa> {
        Ok(Psa {
            egress_parser: Parser::load_nth(root, names, 1)?,
            ingress_deparse,
            deparser_ops: [deparser_ops(root, names, 0)?, deparser_ops(root, names, 1)?],
            f: Fields::resolve(layout),
            buf: Vec::new(),
        })
    }
}

/// The primitives of deparser `i`.
fn deparser_ops(root: &Value, names: &Names, i: usize) -> R<Vec<Op>> {
    let deparsers = json::arr(root, "deparsers", "top level")?;
    let Some(d) = deparsers.get(i) else {
        return err("deparsers", format!("no deparser at index {i}"));
    };
    let ctx = json::label("deparsers", i, d);
    let prims = json::arr_or_empty(d, "primitives", &ctx)?;
    let scope = crate::expr::Scope {
        layout: names.layout,
        params: &[],
        lookahead: false,
    };
    let mut ops = Vec::with_capacity(prims.len());
    for (k, p) in prims.iter().enumerate() {
        let op = compile_primitive(p, k, prims.len(), &scope, names, &ctx)?;
        if matches!(op, Op::Jump(_) | Op::JumpIfZero(..) | Op::Exit) {
            return err(&ctx, "control flow in a deparser not supported");
        }
        ops.push(op);
    }
    Ok(ops)
}

/// Whether a `bool` field is set.
fn on(st: &PacketState, f: Option<FieldRef>) -> bool {
    take(st, f).unwrap_or(0) != 0
}

/// The egress packet path of a copy of this `instance_type` (the switch's copy kinds).
fn egress_path(instance: u64) -> u64 {
    match instance {
        INSTANCE_INGRESS_CLONE => path::CLONE_I2E,
        INSTANCE_EGRESS_CLONE => path::CLONE_E2E,
        INSTANCE_REPLICATION => path::NORMAL_MULTICAST,
        _ => path::NORMAL_UNICAST,
    }
}

impl Program {
    /// Ingress of a PSA program for a packet received (`instance` 0) or entering again
    /// (resubmitted, recirculated). Out of line: v1model's ingress stays as it was.
    #[cold]
    #[inline(never)]
    pub(super) fn psa_ingress(
        &mut self,
        st: &mut PacketState,
        pkt: &[u8],
        port: u32,
        now: u64,
        instance: u64,
        passes: u8,
    ) -> IngressResult {
        let Some(psa) = self.psa.as_deref() else {
            return self.run_ingress(st, pkt, Err(0), now);
        };
        let (path, port) = match instance {
            INSTANCE_RESUBMIT => (path::RESUBMIT, port),
            INSTANCE_RECIRCULATE => (path::RECIRCULATE, PSA_PORT_RECIRCULATE),
            _ => (path::NORMAL, port),
        };
        let mut keep = Vec::with_capacity(2);
        if let Some(f) = psa.f.ip_port {
            keep.push((f.word, u64::from(port)));
        }
        if let Some(f) = psa.f.ip_path {
            keep.push((f.word, path));
        }
        let how = Arrival {
            instance,
            keep: &keep,
            passes,
        };
        let parsed = self.parse_arrival(st, pkt, port, now, &how);
        let Some(psa) = self.psa.as_deref() else {
            return self.run_ingress(st, pkt, parsed, now);
        };
        let f = &psa.f;
        put(st, f.ii_port, u64::from(port));
        put(st, f.ii_path, path);
        put(st, f.ii_timestamp, now / 1000);
        let code = st.parser_error.unwrap_or(self.codes.no_error);
        put(st, f.ii_error, u64::from(code));
        for z in [f.io_cos, f.io_clone, f.io_resubmit, f.io_group] {
            put(st, z, 0);
        }
        put(st, f.io_drop, 1);
        let mut result = IngressResult::fresh(pkt.len());
        if let Some(drop) = self.parser_error_drop(parsed) {
            result.drop = Some(drop);
            return result;
        }
        let mut x = Exec {
            ext: &mut self.ext,
            calcs: &self.calcs,
            scratch: &mut self.scratch,
            std: &self.std,
            now,
            stats: &mut self.stats,
            trace: self.trace.as_deref_mut(),
        };
        self.ingress.run(
            &mut self.tables,
            &self.profiles,
            &self.actions,
            st,
            &mut x,
            &mut self.key,
            &mut self.tmp,
        );
        st.exited = false;
        let Some(psa) = self.psa.as_deref() else {
            return result;
        };
        let f = &psa.f;
        let clone = on(st, f.io_clone).then(|| CloneRequest {
            session: take(st, f.io_session).unwrap_or(0) as u32,
            field_list: 0,
        });
        st.clone = clone;
        st.resubmit = None;
        if on(st, f.io_drop) {
            self.stats.ingress_drops += 1;
            result.drop = Some(DropReason::Ingress);
        } else if on(st, f.io_resubmit) {
            st.resubmit = Some(0);
        } else {
            result.mcast_grp = take(st, f.io_group).unwrap_or(0) as u32;
            result.egress_spec = take(st, f.io_port).unwrap_or(0) as u32;
        }
        put(st, self.std.egress_spec, u64::from(result.egress_spec));
        put(st, self.std.mcast_grp, u64::from(result.mcast_grp));
        result
    }

    /// Egress of a PSA program: the ingress deparser, the egress parser, control and deparser.
    /// Out of line: v1model's egress stays as it was.
    #[cold]
    #[inline(never)]
    pub(super) fn psa_egress(
        &mut self,
        st: &mut PacketState,
        pkt: &[u8],
        meta: &EgressMeta,
        now: u64,
        out: &mut Vec<u8>,
    ) -> EgressResult {
        out.clear();
        st.clone = None;
        st.resubmit = None;
        let Some(mut psa) = self.psa.take() else {
            return EgressResult {
                drop: Some(DropReason::Egress),
                len: 0,
            };
        };
        // what the ingress deparser sent, as the egress parser sees it
        let mut buf = std::mem::take(&mut psa.buf);
        buf.clear();
        if !psa.deparser_ops[0].is_empty() {
            self.run_deparser_ops(&psa.deparser_ops[0], st, now);
        }
        for h in &psa.ingress_deparse {
            if st.valid[*h as usize] {
                self.codecs[*h as usize].emit_all(&st.w, &mut buf);
            }
        }
        let deparsed_headers = buf.len();
        let orig_off = (st.payload_off as usize).min(pkt.len());
        buf.extend_from_slice(&pkt[orig_off..]);
        // psa_switch makes every header invalid (metadata stays) before the egress parser
        for (i, h) in self.layout.headers.iter().enumerate() {
            if !h.metadata {
                st.valid[i] = false;
            }
        }
        st.stack_next.iter_mut().for_each(|x| *x = 0);
        st.payload_off = 0;
        st.parser_error = None;
        let instance = take(st, self.std.instance_type).unwrap_or(0);
        let path = egress_path(instance);
        let f = &psa.f;
        put(st, f.ep_port, u64::from(meta.egress_port));
        put(st, f.ep_path, path);
        put(st, self.std.egress_port, u64::from(meta.egress_port));
        let mut x = Exec {
            ext: &mut self.ext,
            calcs: &self.calcs,
            scratch: &mut self.scratch,
            std: &self.std,
            now,
            stats: &mut self.stats,
            trace: self.trace.as_deref_mut(),
        };
        let parsed = psa.egress_parser.run::<false>(
            &buf,
            st,
            &self.codecs,
            &self.stacks,
            &self.codes,
            &self.vsets,
            &mut x,
        );
        if parsed.is_err() {
            x.stats.parser_errors += 1;
        }
        let code = parsed.err().unwrap_or(self.codes.no_error);
        put(st, f.ei_port, u64::from(meta.egress_port));
        put(st, f.ei_path, path);
        let instance_id = match path {
            path::NORMAL_MULTICAST | path::CLONE_I2E | path::CLONE_E2E => {
                take(st, self.std.egress_rid).unwrap_or(0)
            }
            _ => 0,
        };
        put(st, f.ei_instance, instance_id);
        put(st, f.ei_timestamp, now / 1000);
        put(st, f.ei_error, u64::from(code));
        if path == path::NORMAL_UNICAST || path == path::NORMAL_MULTICAST {
            put(st, f.ei_cos, take(st, f.io_cos).unwrap_or(0));
        } else {
            put(st, f.ei_cos, 0);
        }
        put(st, f.eo_clone, 0);
        put(st, f.eo_drop, 0);
        self.egress.run(
            &mut self.tables,
            &self.profiles,
            &self.actions,
            st,
            &mut x,
            &mut self.key,
            &mut self.tmp,
        );
        st.exited = false;
        st.digests.clear();
        put(st, f.ed_port, u64::from(meta.egress_port));
        if !psa.deparser_ops[1].is_empty() {
            self.run_deparser_ops(&psa.deparser_ops[1], st, now);
        }
        for h in &self.deparse {
            if st.valid[*h as usize] {
                self.codecs[*h as usize].emit_all(&st.w, out);
            }
        }
        let off = (st.payload_off as usize).min(buf.len());
        out.extend_from_slice(&buf[off..]);
        // the state now stands for `pkt` again (an egress clone deparses it with the same bytes)
        st.payload_off = (orig_off + off.saturating_sub(deparsed_headers)) as u32;
        let clone = on(st, f.eo_clone).then(|| CloneRequest {
            session: take(st, f.eo_session).unwrap_or(0) as u32,
            field_list: 0,
        });
        st.clone = clone;
        let drop = on(st, f.eo_drop);
        psa.buf = buf;
        self.psa = Some(psa);
        if drop {
            self.stats.egress_drops += 1;
            out.clear();
            return EgressResult {
                drop: Some(DropReason::Egress),
                len: 0,
            };
        }
        if meta.egress_port == PSA_PORT_RECIRCULATE {
            st.recirculate = Some(0);
        }
        if let Some(n) = st.truncate {
            return self.truncated(n, out);
        }
        EgressResult {
            drop: None,
            len: out.len(),
        }
    }
}

impl Program {
    fn run_deparser_ops(&mut self, ops: &[Op], st: &mut PacketState, now: u64) {
        let mut x = Exec {
            ext: &mut self.ext,
            calcs: &self.calcs,
            scratch: &mut self.scratch,
            std: &self.std,
            now,
            stats: &mut self.stats,
            trace: self.trace.as_deref_mut(),
        };
        crate::action::run(ops, &[], &[], st, &mut x);
    }
}

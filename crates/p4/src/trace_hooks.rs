//! The program's side of the per-packet log: turning it on, and the events only the program
//! sees (arrival, parser end, egress port, deparser, transmit). Only the traced copy of the walk
//! (program/walk.rs) calls them; each is kept out of line.
use crate::program::{EgressResult, IngressResult, Program};
use crate::state::PacketState;
use crate::trace::{LogLevel, Tracer};
use std::io::Write;

impl Program {
    /// Starts (Some) or stops (None) bmv2's log into `sink` at `level`: the program's
    /// `log_msg` lines, and from debug up the per-packet lines (trace: the primitives too).
    pub fn set_trace(&mut self, sink: Option<Box<dyn Write + Send>>, level: LogLevel) {
        self.trace = sink.map(|s| Box::new(Tracer::new(self.trace_names.clone(), s, level)));
        self.off_path = self.trace.is_some() || self.psa.is_some();
    }

    /// Flushes the log's sink (the switch does it after each batch with `--log-flush`).
    pub fn flush_trace(&mut self) {
        if let Some(t) = self.trace.as_deref_mut() {
            t.flush();
        }
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn trace_received(&mut self, st: &mut PacketState, port: u32, len: usize) {
        if let Some(t) = self.trace.as_deref_mut() {
            st.trace_id = t.received(port, len);
        }
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn trace_parsed(&mut self, st: &PacketState, parsed: Result<(), u32>) {
        let error = parsed
            .err()
            .and_then(|c| self.error_name(c))
            .map(str::to_string);
        if let Some(t) = self.trace.as_deref_mut() {
            t.parse_done(st.trace_id, st.payload_off, error.as_deref());
        }
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn trace_ingress_done(&mut self, st: &PacketState, r: &IngressResult) {
        if let Some(t) = self.trace.as_deref_mut() {
            t.egress_port(st.trace_id, r.drop.is_none().then_some(r.egress_spec));
        }
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn trace_deparse_transmit(&mut self, st: &PacketState, r: &EgressResult, port: u32) {
        let valid: Vec<bool> = self.deparse_headers().map(|h| st.valid[h]).collect();
        if let Some(t) = self.trace.as_deref_mut() {
            t.deparse(st.trace_id, |i| valid.get(i).copied().unwrap_or(false));
            if r.drop.is_none() {
                t.transmit(st.trace_id, r.len, port);
            }
        }
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn trace_egress_drop(&mut self, st: &PacketState) {
        if let Some(t) = self.trace.as_deref_mut() {
            t.dropped_in_egress(st.trace_id);
        }
    }
}

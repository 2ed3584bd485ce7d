//! The packet's walk through the program: parser, ingress, egress, deparser. Each entry point
//! tests once whether bmv2's log is on and runs one of two copies of the walk: the log's lines
//! are compiled into the traced copy only, so a packet pays one branch per entry point while
//! the log is off.

use super::*;

impl Program {
    /// Resets `st` for `pkt` arriving on `port` at `now` (its standard metadata set, and what
    /// `how` keeps) and runs the parser; a parser error is counted and recorded in `st`.
    pub(super) fn parse_arrival(
        &mut self,
        st: &mut PacketState,
        pkt: &[u8],
        port: u32,
        now: u64,
        how: &Arrival,
    ) -> Result<(), u32> {
        if self.trace.is_some() {
            return self.parse_arrival_traced(st, pkt, port, now, how);
        }
        self.parse_arrival_with::<false>(st, pkt, port, now, how)
    }

    #[cold]
    #[inline(never)]
    fn parse_arrival_traced(
        &mut self,
        st: &mut PacketState,
        pkt: &[u8],
        port: u32,
        now: u64,
        how: &Arrival,
    ) -> Result<(), u32> {
        self.parse_arrival_with::<true>(st, pkt, port, now, how)
    }

    /// `parse_arrival` compiled twice: with the log's two events (TRACE) and without a test.
    #[inline(always)]
    fn parse_arrival_with<const TRACE: bool>(
        &mut self,
        st: &mut PacketState,
        pkt: &[u8],
        port: u32,
        now: u64,
        how: &Arrival,
    ) -> Result<(), u32> {
        st.reset(&self.valid_init);
        for (w, v) in how.keep {
            st.w[*w as usize] = *v;
        }
        put_arrival(st, &self.std, pkt, port, now);
        st.arrival_len = pkt.len() as u32;
        put(st, self.std.instance_type, how.instance);
        st.passes = how.passes;
        if TRACE {
            self.trace_received(st, port, pkt.len());
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
        let parsed = self.parser.run::<TRACE>(
            pkt,
            st,
            &self.codecs,
            &self.stacks,
            &self.codes,
            &self.vsets,
            &mut x,
        );
        // as bmv2: parser_error holds the program's NoError unless the parser failed
        let code = match parsed {
            Ok(()) => self.codes.no_error,
            Err(code) => {
                self.stats.parser_errors += 1;
                st.parser_error = Some(code);
                code
            }
        };
        put(st, self.std.parser_error, u64::from(code));
        if TRACE {
            self.trace_parsed(st, parsed);
        }
        parsed
    }

    /// Parser, checksum verification and the ingress control. `now` is monotonic nanoseconds.
    pub fn ingress(
        &mut self,
        st: &mut PacketState,
        pkt: &[u8],
        port: u32,
        now: u64,
    ) -> IngressResult {
        self.stats.packets += 1;
        // one test for the log and PSA both: v1model's untraced walk pays nothing for PSA
        if self.off_path {
            return self.ingress_off_path(st, pkt, port, now);
        }
        let parsed = self.parse_arrival_with::<false>(st, pkt, port, now, &Arrival::FRESH);
        self.run_ingress_with::<false>(st, pkt, parsed, now)
    }

    /// A PSA program's ingress, or the traced walk.
    #[cold]
    #[inline(never)]
    fn ingress_off_path(
        &mut self,
        st: &mut PacketState,
        pkt: &[u8],
        port: u32,
        now: u64,
    ) -> IngressResult {
        if self.psa.is_some() {
            return self.psa_ingress(st, pkt, port, now, 0, 0);
        }
        self.ingress_traced(st, pkt, port, now)
    }

    #[cold]
    #[inline(never)]
    fn ingress_traced(
        &mut self,
        st: &mut PacketState,
        pkt: &[u8],
        port: u32,
        now: u64,
    ) -> IngressResult {
        let parsed = self.parse_arrival_with::<true>(st, pkt, port, now, &Arrival::FRESH);
        self.run_ingress_with::<true>(st, pkt, parsed, now)
    }

    /// Checksum verification and the ingress control, after the parser.
    pub(super) fn run_ingress(
        &mut self,
        st: &mut PacketState,
        pkt: &[u8],
        parsed: Result<(), u32>,
        now: u64,
    ) -> IngressResult {
        if self.trace.is_some() {
            return self.run_ingress_traced(st, pkt, parsed, now);
        }
        self.run_ingress_with::<false>(st, pkt, parsed, now)
    }

    #[cold]
    #[inline(never)]
    fn run_ingress_traced(
        &mut self,
        st: &mut PacketState,
        pkt: &[u8],
        parsed: Result<(), u32>,
        now: u64,
    ) -> IngressResult {
        self.run_ingress_with::<true>(st, pkt, parsed, now)
    }

    #[inline(always)]
    fn run_ingress_with<const TRACE: bool>(
        &mut self,
        st: &mut PacketState,
        pkt: &[u8],
        parsed: Result<(), u32>,
        now: u64,
    ) -> IngressResult {
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
        for c in self.checksums.iter().filter(|c| c.verify) {
            if c.applies(st) {
                let calc = &self.calcs[c.calc as usize];
                let v = checksum::calc_value(calc, st, pkt, &self.deparse, &self.codecs, x.scratch);
                if v & crate::bits::mask(c.target.width) != st.get(c.target) {
                    x.stats.checksum_errors += 1;
                    put(st, x.std.checksum_error, 1);
                }
            }
        }
        let (tables, key, tmp) = (&mut self.tables, &mut self.key, &mut self.tmp);
        if TRACE {
            let c = &self.ingress;
            c.run_traced(tables, &self.profiles, &self.actions, st, &mut x, key, tmp);
        } else {
            let c = &self.ingress;
            c.run(tables, &self.profiles, &self.actions, st, &mut x, key, tmp);
        }
        st.exited = false;
        let std = &self.std;
        let spec = take(st, std.egress_spec).unwrap_or(0);
        result.egress_spec = spec as u32;
        result.priority = take(st, std.priority).unwrap_or(0) as u8;
        result.queue_rate = take(st, std.queue_rate);
        result.queue_quantum = take(st, std.queue_quantum);
        result.queue_burst = take(st, std.queue_burst);
        result.mcast_grp = take(st, std.mcast_grp).unwrap_or(0) as u32;
        // as bmv2: a multicast group wins over egress_spec (mark_to_drop clears the group)
        if spec == DROP_PORT && result.mcast_grp == 0 {
            self.stats.ingress_drops += 1;
            result.drop = Some(DropReason::Ingress);
        }
        if TRACE {
            self.trace_ingress_done(st, &result);
        }
        result
    }

    /// Egress control, checksum update and deparser; writes the frame into `out` (cleared
    /// first; its capacity is reused). `pkt` is the same packet bytes given to `ingress`.
    pub fn egress(
        &mut self,
        st: &mut PacketState,
        pkt: &[u8],
        meta: &EgressMeta,
        now: u64,
        out: &mut Vec<u8>,
    ) -> EgressResult {
        if self.off_path {
            return self.egress_off_path(st, pkt, meta, now, out);
        }
        self.egress_with::<false>(st, pkt, meta, now, out)
    }

    /// A PSA program's egress, or the traced walk.
    #[cold]
    #[inline(never)]
    fn egress_off_path(
        &mut self,
        st: &mut PacketState,
        pkt: &[u8],
        meta: &EgressMeta,
        now: u64,
        out: &mut Vec<u8>,
    ) -> EgressResult {
        if self.psa.is_some() {
            return self.psa_egress(st, pkt, meta, now, out);
        }
        self.egress_traced(st, pkt, meta, now, out)
    }

    #[cold]
    #[inline(never)]
    fn egress_traced(
        &mut self,
        st: &mut PacketState,
        pkt: &[u8],
        meta: &EgressMeta,
        now: u64,
        out: &mut Vec<u8>,
    ) -> EgressResult {
        self.egress_with::<true>(st, pkt, meta, now, out)
    }

    #[inline(always)]
    fn egress_with<const TRACE: bool>(
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
        let std = &self.std;
        put(st, std.egress_port, u64::from(meta.egress_port));
        put(st, std.packet_length, st.egress_len());
        put(st, std.qid, u64::from(meta.qid));
        put(st, std.enq_timestamp, meta.enq_timestamp);
        put(st, std.enq_qdepth, meta.enq_qdepth);
        put(st, std.deq_timedelta, meta.deq_timedelta);
        put(st, std.deq_qdepth, meta.deq_qdepth);
        put(st, std.egress_global_timestamp, now / 1000);
        let mut x = Exec {
            ext: &mut self.ext,
            calcs: &self.calcs,
            scratch: &mut self.scratch,
            std: &self.std,
            now,
            stats: &mut self.stats,
            trace: self.trace.as_deref_mut(),
        };
        let (tables, key, tmp) = (&mut self.tables, &mut self.key, &mut self.tmp);
        if TRACE {
            let c = &self.egress;
            c.run_traced(tables, &self.profiles, &self.actions, st, &mut x, key, tmp);
        } else {
            let c = &self.egress;
            c.run(tables, &self.profiles, &self.actions, st, &mut x, key, tmp);
        }
        st.exited = false;
        // only ingress generates digests (bmv2's v1model); any left are not taken
        st.digests.clear();
        if take(st, self.std.egress_spec) == Some(DROP_PORT) {
            self.stats.egress_drops += 1;
            if TRACE {
                self.trace_egress_drop(st);
            }
            return EgressResult {
                drop: Some(DropReason::Egress),
                len: 0,
            };
        }
        for c in self.checksums.iter().filter(|c| c.update) {
            if c.applies(st) {
                let calc = &self.calcs[c.calc as usize];
                let v = checksum::calc_value(
                    calc,
                    st,
                    pkt,
                    &self.deparse,
                    &self.codecs,
                    &mut self.scratch,
                );
                st.set(c.target, v);
            }
        }
        if self.has_varbit {
            self.deparse_varbits(st, out);
        } else {
            for h in &self.deparse {
                if st.valid[*h as usize] {
                    self.codecs[*h as usize].emit(&st.w, out);
                }
            }
        }
        let off = (st.payload_off as usize).min(pkt.len());
        out.extend_from_slice(&pkt[off..]);
        let result = match st.truncate {
            Some(n) => self.truncated(n, out),
            None => EgressResult {
                drop: None,
                len: out.len(),
            },
        };
        if TRACE {
            self.trace_deparse_transmit(st, &result, meta.egress_port);
        }
        result
    }

    /// The drop a parser error makes under the drop policy (counted), None otherwise.
    #[inline]
    pub(super) fn parser_error_drop(&mut self, parsed: Result<(), u32>) -> Option<DropReason> {
        let code = parsed.err()?;
        if self.policy != ParserErrorPolicy::Drop {
            return None;
        }
        self.stats.ingress_drops += 1;
        Some(DropReason::ParserError(code))
    }
}

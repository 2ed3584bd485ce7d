//! Packets made from packets, on the program's side: what a clone's copy, a multicast copy
//! and a resubmitted or recirculated pass hold (the switch makes the copies and queues them),
//! and the digests ingress generated.

use super::*;

impl Program {
    /// Moves the digests the ingress that just ran generated (`digest(receiver, data)`, bmv2's
    /// `generate_digest`) into `out`, each with its field values as they were at the end of
    /// ingress. Egress forgets digests: as in bmv2, only ingress generates them.
    pub fn take_digests(&self, st: &mut PacketState, out: &mut impl Extend<Digest>) {
        if st.digests.is_empty() {
            return;
        }
        for list in st.digests.drain(..) {
            let Some((_, fields)) = self.learn_lists.get(list as usize) else {
                continue;
            };
            let values = fields.iter().map(|f| {
                let w = f.word as usize;
                let mut b = Vec::new();
                crate::bits::words_to_bytes(&st.w[w..w + f.words() as usize], f.width, &mut b);
                b
            });
            out.extend([Digest {
                list,
                fields: values.collect(),
            }]);
        }
    }

    /// Ingress again, for a packet that asked for it ([`PacketState::take_resubmit`] after
    /// ingress, [`PacketState::take_recirculate`] after egress), as bmv2 does it: `pkt` (the
    /// bytes as received for a resubmission, the bytes egress emitted for a recirculation) is
    /// parsed again; every metadata field is zero except the arrival's (`port`: the port the
    /// packet first came in on), `instance_type` (6 resubmit, 4 recirculate) and the fields of
    /// the field list the program named, kept from `st`. [`PacketState::passes`] counts the
    /// passes: the caller bounds them.
    pub fn reingress(
        &mut self,
        st: &mut PacketState,
        pkt: &[u8],
        port: u32,
        now: u64,
        how: Reentry,
    ) -> IngressResult {
        let (list, instance) = match how {
            Reentry::Resubmit(l) => (l, INSTANCE_RESUBMIT),
            Reentry::Recirculate(l) => (l, INSTANCE_RECIRCULATE),
        };
        if self.psa.is_some() {
            // PSA keeps no metadata across passes
            let passes = st.passes.saturating_add(1);
            return self.psa_ingress(st, pkt, port, now, instance, passes);
        }
        let keep: Vec<(u32, u64)> = (list as usize)
            .checked_sub(1)
            .and_then(|i| self.field_lists.get(i))
            .into_iter()
            .flatten()
            .flat_map(|f| (f.word..f.word + f.words()).map(|w| (w, st.w[w as usize])))
            .collect();
        let how = Arrival {
            instance,
            keep: &keep,
            passes: st.passes.saturating_add(1),
        };
        let parsed = self.parse_arrival(st, pkt, port, now, &how);
        self.run_ingress(st, pkt, parsed, now)
    }

    /// Makes `copy` the copy that a clone asked for in ingress (I2E) sends, as bmv2 does: the
    /// packet as it arrived (`pkt`, the bytes given to [`Program::ingress`]) parsed again, so
    /// ingress's changes to its headers are not in it. Every metadata field is zero except
    /// `ingress_port`, `packet_length` and `ingress_global_timestamp` (those of the arrival:
    /// `port`, `pkt.len()`, `now`), `instance_type` (1), and the fields of the field list the
    /// program named (`clone_preserving_field_list`), copied from `orig`, the packet as ingress
    /// left it. bmv2 zeroes `ingress_port` too; we keep it. Egress then runs on the copy.
    ///
    /// `truncate`: the session's truncation length, if any. Returns the copy's priority (its
    /// queue: 0 unless the field list keeps `priority`), or None if the parser now rejects the
    /// bytes (counted as a parser error; it accepted them at ingress, so only a parser that
    /// reads registers can do that).
    #[allow(clippy::too_many_arguments)]
    pub fn ingress_clone(
        &mut self,
        orig: &PacketState,
        copy: &mut PacketState,
        pkt: &[u8],
        port: u32,
        now: u64,
        req: CloneRequest,
        truncate: Option<u32>,
    ) -> Option<u8> {
        if self
            .parse_arrival(copy, pkt, port, now, &Arrival::FRESH)
            .is_err()
            && self.policy == ParserErrorPolicy::Drop
        {
            return None;
        }
        // the parser may have written metadata: the copy keeps only the arrival's
        self.clear_metadata(copy);
        put_arrival(copy, &self.std, pkt, port, now);
        let code = copy.parser_error.unwrap_or(self.codes.no_error);
        put(copy, self.std.parser_error, u64::from(code));
        Some(self.finish_clone(orig, copy, req, truncate, INSTANCE_INGRESS_CLONE))
    }

    /// Makes `copy` the copy that a clone asked for in egress (E2E) sends, as bmv2 does: the
    /// packet as egress left `orig` (its headers, validity and payload: deparsing the copy gives
    /// the bytes the original was sent with, before truncation), with every metadata field zero
    /// except `packet_length` (the original's), `instance_type` (2) and the fields of the
    /// field list the program named, copied from `orig`. Egress then runs again, on the copy.
    ///
    /// `truncate`: the session's truncation length, if any. Returns the copy's priority (its
    /// queue: 0 unless the field list keeps `priority`).
    pub fn egress_clone(
        &self,
        orig: &PacketState,
        copy: &mut PacketState,
        req: CloneRequest,
        truncate: Option<u32>,
    ) -> u8 {
        copy.copy_from(orig);
        self.clear_metadata(copy);
        put(
            copy,
            self.std.packet_length,
            take(orig, self.std.packet_length).unwrap_or(0),
        );
        self.finish_clone(orig, copy, req, truncate, INSTANCE_EGRESS_CLONE)
    }

    /// Marks `st`, a copy of a packet (the switch copies the state), as the copy for
    /// replication id `rid`, as bmv2's replication engine makes it: `egress_rid` = `rid`, and
    /// `instance_type` 5 when it is a multicast packet (`multicast`); a clone sent to a mirror
    /// session's group keeps its clone instance_type, as in bmv2.
    pub fn mark_replica(&self, st: &mut PacketState, rid: u16, multicast: bool) {
        put(st, self.std.egress_rid, u64::from(rid));
        if multicast {
            put(st, self.std.instance_type, INSTANCE_REPLICATION);
        }
        st.clone = None;
    }

    fn clear_metadata(&self, st: &mut PacketState) {
        for r in &self.meta_words {
            st.w[r.clone()].iter_mut().for_each(|w| *w = 0);
        }
    }

    fn finish_clone(
        &self,
        orig: &PacketState,
        copy: &mut PacketState,
        req: CloneRequest,
        truncate: Option<u32>,
        instance: u64,
    ) -> u8 {
        let list = (req.field_list as usize).checked_sub(1);
        for f in list
            .and_then(|i| self.field_lists.get(i))
            .into_iter()
            .flatten()
        {
            let w = f.word as usize;
            let n = f.words() as usize;
            copy.w[w..w + n].copy_from_slice(&orig.w[w..w + n]);
        }
        put(copy, self.std.instance_type, instance);
        copy.clone = None;
        copy.exited = false;
        copy.truncate = truncate.filter(|n| *n > 0);
        copy.generation = orig.generation.saturating_add(1);
        take(copy, self.std.priority).unwrap_or(0) as u8
    }
}

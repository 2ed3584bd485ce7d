//! Packets the data plane makes from packets: clones (mirror sessions, also to multicast
//! groups), multicast copies, and the passes of resubmitted and recirculated packets. Cold
//! paths, apart from `multicast`: only programs that ask for them come here.

use super::{Dataplane, DigestSink, MAX_CLONE_GENERATIONS, MAX_FRAME, MAX_PASSES, NO_PORT};
use lanes_p4::{CloneRequest, IngressResult, PacketState, Reentry};

impl Dataplane {
    /// The digests, ingress clone and resubmissions ingress asked for, in bmv2's order (a
    /// resubmitted packet's next pass may ask again); the result of the last pass, or None if
    /// the packet is gone. Cold: most packets ask for none of these.
    #[cold]
    #[inline(never)]
    pub(super) fn take_requests(
        &mut self,
        slot: u32,
        mut ig: IngressResult,
        now: u64,
    ) -> Option<IngressResult> {
        loop {
            let s = &mut self.slots[slot as usize];
            let in_port = s.in_port;
            let Some(st) = s.state.as_mut() else {
                self.release_slot(slot);
                return None;
            };
            let resubmit = st.take_resubmit();
            if let Some(prog) = self.program.as_ref() {
                prog.take_digests(st, &mut DigestSink(&mut self.digests, &mut self.drops));
            }
            if let Some(req) = st.take_clone() {
                self.clone_packet(slot, req, Some(in_port), now);
            }
            let Some(how) = resubmit else {
                return Some(ig);
            };
            ig = self.reenter(slot, how, now)?;
        }
    }

    /// Ingress again for the packet in `slot` (its bytes: as received for a resubmission, as
    /// egress emitted them for a recirculation), or None if it has been through
    /// [`MAX_PASSES`] passes already (counted as `pass_limit`, its slot freed).
    #[cold]
    pub(super) fn reenter(&mut self, slot: u32, how: Reentry, now: u64) -> Option<IngressResult> {
        let s = &mut self.slots[slot as usize];
        let (Some(prog), Some(st)) = (self.program.as_mut(), s.state.as_mut()) else {
            self.free.push(slot);
            return None;
        };
        if st.passes() >= MAX_PASSES {
            self.drops.pass_limit += 1;
            self.free.push(slot);
            return None;
        }
        Some(prog.reingress(st, &s.frame[..s.len], s.in_port, now, how))
    }

    /// The packet in `slot`, whose egress asked for a recirculation and emitted `self.out[..len]`,
    /// goes through ingress again instead of leaving.
    #[cold]
    pub(super) fn recirculate(&mut self, slot: u32, len: usize, how: Reentry, now: u64) {
        if len > MAX_FRAME {
            self.drops.oversize += 1;
            return self.release_slot(slot);
        }
        let s = &mut self.slots[slot as usize];
        s.frame[..len].copy_from_slice(&self.out[..len]);
        s.len = len;
        if let Some(ig) = self.reenter(slot, how, now) {
            self.after_ingress(slot, ig, now);
        }
    }

    /// Make the copy a clone asks for, of the packet in slot `src`, and queue it on the
    /// session's port: an ingress clone (`in_port` given: the packet as received) or an egress
    /// clone (the packet as egress left it). Cold path: only programs that clone come here.
    #[cold]
    pub(super) fn clone_packet(
        &mut self,
        src: u32,
        req: CloneRequest,
        in_port: Option<u32>,
        now: u64,
    ) {
        let Some(m) = self.mirrors.get(&req.session).copied() else {
            self.drops.no_mirror_session += 1;
            return;
        };
        let port_index = match m.port {
            Some(p) => match self.index.get(p as usize).filter(|&&i| i != NO_PORT) {
                Some(&i) => Some(i),
                None => {
                    self.drops.unknown_port += 1;
                    return;
                }
            },
            None => None,
        };
        let generation = self.slots[src as usize]
            .state
            .as_ref()
            .map_or(0, PacketState::clone_generation);
        if generation >= MAX_CLONE_GENERATIONS {
            self.drops.clone_depth += 1;
            return;
        }
        let Some(dst) = self.take_slot() else {
            return;
        };
        let Some(prog) = self.program.as_mut() else {
            return self.release_slot(dst);
        };
        let Ok([s, d]) = self.slots.get_disjoint_mut([src as usize, dst as usize]) else {
            return self.release_slot(dst);
        };
        let Some(orig) = s.state.as_ref() else {
            return self.release_slot(dst);
        };
        let len = s.len;
        d.frame[..len].copy_from_slice(&s.frame[..len]);
        d.len = len;
        d.in_port = s.in_port;
        let copy = d.state.get_or_insert_with(|| prog.new_state());
        let prio = match in_port {
            Some(port) => {
                prog.ingress_clone(orig, copy, &d.frame[..len], port, now, req, m.truncate)
            }
            None => Some(prog.egress_clone(orig, copy, req, m.truncate)),
        };
        let Some(prio) = prio else {
            self.drops.parser += 1;
            return self.release_slot(dst);
        };
        if let Some(g) = m.mgid {
            self.replicate(dst, len, g, prio, now, port_index.is_none(), None);
        }
        match port_index {
            Some(i) => self.enqueue(i, prio, len, dst, now),
            None if m.mgid.is_none() => self.release_slot(dst),
            None => {}
        }
    }

    /// Queue a multicast packet after ingress: one copy per (port, rid) of its group, the last
    /// copy the packet itself.
    pub(super) fn multicast(&mut self, slot: u32, len: usize, ig: &IngressResult, now: u64) {
        self.replicate(slot, len, ig.mcast_grp, ig.priority, now, true, Some(ig));
    }

    /// One copy of the packet in `slot` per (port, rid) of group `mgid`, each queued at `prio`
    /// with `egress_rid` = rid. `ig`, for a multicast packet after ingress: the copies get
    /// `instance_type` 5 and the queue settings its metadata asks for; None for a clone sent to
    /// a mirror session's group (it keeps its instance_type). When `last_is_slot`, the last copy
    /// is `slot` itself (freed if it cannot go); otherwise `slot` stays the caller's. A group
    /// with no copies is counted (`no_multicast_group`).
    #[allow(clippy::too_many_arguments)]
    fn replicate(
        &mut self,
        slot: u32,
        len: usize,
        mgid: u32,
        prio: u8,
        now: u64,
        last_is_slot: bool,
        ig: Option<&IngressResult>,
    ) {
        let n = self.pre.replicas(mgid).len();
        if n == 0 {
            self.drops.no_multicast_group += 1;
            if last_is_slot {
                self.release_slot(slot);
            }
            return;
        }
        for k in 0..n {
            let (port, rid) = self.pre.replicas(mgid)[k];
            let last = last_is_slot && k + 1 == n;
            let Some(&i) = self.index.get(port as usize).filter(|&&i| i != NO_PORT) else {
                self.drops.unknown_port += 1;
                if last {
                    self.release_slot(slot);
                }
                continue;
            };
            let copy = if last {
                Some(slot)
            } else {
                self.copy_slot(slot, len)
            };
            let Some(copy) = copy else {
                continue;
            };
            if let (Some(prog), Some(st)) = (
                self.program.as_ref(),
                self.slots[copy as usize].state.as_mut(),
            ) {
                prog.mark_replica(st, rid, ig.is_some());
            }
            if let Some(ig) = ig {
                self.apply_queue_config(i, ig);
            }
            self.enqueue(i, prio, len, copy, now);
        }
    }

    /// A new packet buffer holding a copy of the packet in `slot` (`len` bytes, its state and
    /// arrival port), or None if the switch has no buffer or state to copy.
    fn copy_slot(&mut self, slot: u32, len: usize) -> Option<u32> {
        let dst = self.take_slot()?;
        let (Ok([s, d]), Some(prog)) = (
            self.slots.get_disjoint_mut([slot as usize, dst as usize]),
            self.program.as_ref(),
        ) else {
            self.release_slot(dst);
            return None;
        };
        let Some(orig) = s.state.as_ref() else {
            self.release_slot(dst);
            return None;
        };
        d.frame[..len].copy_from_slice(&s.frame[..len]);
        d.len = len;
        d.in_port = s.in_port;
        d.state
            .get_or_insert_with(|| prog.new_state())
            .clone_from(orig);
        Some(dst)
    }
}

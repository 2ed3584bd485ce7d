//! A packet whose egress port the switch does not have. bmv2 queues it and runs egress on it
//! all the same (only the transmission finds no interface), so an egress clone or a
//! recirculation it asks for still happens: p4c's tests send packets to such ports and expect
//! what recirculates from them. Here egress runs at once, outside any port's TM (there is no
//! port to pace), and a frame that would leave is counted as `unknown_port` and dropped.

use super::Dataplane;
use lanes_p4::EgressMeta;

impl Dataplane {
    #[cold]
    #[inline(never)]
    pub(super) fn egress_without_port(&mut self, slot: u32, port: u32, now: u64) {
        let s = &mut self.slots[slot as usize];
        let (Some(prog), Some(st)) = (self.program.as_mut(), s.state.as_mut()) else {
            return self.release_slot(slot);
        };
        let meta = EgressMeta {
            egress_port: port,
            ..Default::default()
        };
        let eg = prog.egress(st, &s.frame[..s.len], &meta, now, &mut self.out);
        let recirculate = st.take_recirculate();
        if let Some(req) = st.take_clone() {
            self.clone_packet(slot, req, None, now);
        }
        if eg.drop.is_some() {
            self.drops.egress += 1;
            return self.release_slot(slot);
        }
        if let Some(how) = recirculate {
            return self.recirculate(slot, eg.len, how, now);
        }
        self.drops.unknown_port += 1;
        self.release_slot(slot);
    }
}

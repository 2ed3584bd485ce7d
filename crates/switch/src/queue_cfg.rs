//! A program's queue configuration metadata (`standard_metadata.queue_rate`, `queue_quantum`,
//! `queue_burst`) applied to the TM, only when it changes for a queue (thesis 4.3): every packet
//! of a class carries its class's settings, and almost all of them carry the same ones.

use lanes_tm::TmPort;

/// What a packet's metadata asks of its queue: (rate in bytes/s, quantum in bytes, token bucket
/// in bytes); 0 leaves that setting as it is.
pub type QueueSettings = (u64, u64, u64);

/// The settings each queue of each port was last given from metadata.
#[derive(Debug, Default)]
pub struct QueueConfigTracker {
    /// By port index (as in `Dataplane::ports`), then queue.
    last: Vec<Vec<Option<QueueSettings>>>,
}

impl QueueConfigTracker {
    /// Forget everything (a new program, or queues reconfigured by hand).
    pub fn clear(&mut self) {
        self.last.clear();
    }

    /// Give queue `qid` of `tm` (the port at `port_index`) these settings unless it already has
    /// them from metadata. Returns whether the TM was changed. Settings of all zeros (a program
    /// that does not set them) and queues the port does not have change nothing.
    #[inline]
    pub fn apply(
        &mut self,
        port_index: usize,
        tm: &mut TmPort<u32>,
        qid: usize,
        settings: QueueSettings,
    ) -> bool {
        // the packet path's usual case, inline: nothing to set, or the same settings again
        let last = self.last.get(port_index).and_then(|q| q.get(qid));
        if settings == (0, 0, 0) || last == Some(&Some(settings)) {
            return false;
        }
        self.change(port_index, tm, qid, settings)
    }

    #[cold]
    #[inline(never)]
    fn change(
        &mut self,
        port_index: usize,
        tm: &mut TmPort<u32>,
        qid: usize,
        settings: QueueSettings,
    ) -> bool {
        if qid >= tm.num_queues() {
            return false;
        }
        if self.last.len() <= port_index {
            self.last.resize(port_index + 1, vec![]);
        }
        let queues = &mut self.last[port_index];
        if queues.len() < tm.num_queues() {
            queues.resize(tm.num_queues(), None);
        }
        if queues[qid] == Some(settings) {
            return false;
        }
        queues[qid] = Some(settings);
        let Some(mut cfg) = tm.queue_config(qid).cloned() else {
            return false;
        };
        let (rate, quantum, burst) = settings;
        if rate > 0 {
            cfg.rate_bytes_per_s = Some(rate as f64);
        }
        if quantum > 0 {
            cfg.quantum = u32::try_from(quantum).unwrap_or(u32::MAX);
        }
        if burst > 0 {
            cfg.burst_bytes = Some(burst);
        }
        // positive values are always valid, so the TM takes them
        tm.set_queue_config(qid, cfg).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lanes_tm::{PortConfig, Scheduler, TmModel};

    #[test]
    fn only_changes_reach_the_tm() {
        let mut tm =
            TmPort::new(PortConfig::new(1e8, Scheduler::RlspDrr, 4), TmModel::Paced).unwrap();
        let mut t = QueueConfigTracker::default();
        assert!(!t.apply(0, &mut tm, 3, (0, 0, 0)));
        assert!(t.apply(0, &mut tm, 3, (7_500_000, 7000, 0)));
        let cfg = tm.queue_config(3).unwrap();
        assert_eq!(
            (cfg.rate_bytes_per_s, cfg.quantum, cfg.burst_bytes),
            (Some(7.5e6), 7000, None)
        );
        assert!(!t.apply(0, &mut tm, 3, (7_500_000, 7000, 0)));
        assert!(t.apply(0, &mut tm, 3, (7_500_000, 7000, 20_000)));
        assert_eq!(tm.queue_config(3).unwrap().burst_bytes, Some(20_000));
        // another port's queue 3 is tracked on its own; a queue the port lacks is ignored
        let mut tm2 =
            TmPort::new(PortConfig::new(1e8, Scheduler::RlspDrr, 4), TmModel::Paced).unwrap();
        assert!(t.apply(5, &mut tm2, 3, (7_500_000, 7000, 0)));
        assert!(!t.apply(5, &mut tm2, 7, (1, 1, 1)));
        t.clear();
        assert!(t.apply(0, &mut tm, 3, (7_500_000, 7000, 20_000)));
    }
}

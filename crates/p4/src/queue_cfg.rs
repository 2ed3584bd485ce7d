//! Tracks the queue rate/quantum/burst each (port, priority) was last configured with, so the
//! switch applies `standard_metadata.queue_rate/queue_quantum/queue_burst` to the TM only when
//! they change (thesis 4.3).

/// A change to apply to the traffic manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueUpdate {
    pub port: u32,
    pub priority: u8,
    /// Bytes per second.
    pub rate: u64,
    /// Bytes.
    pub quantum: u64,
    /// Token bucket size in bytes.
    pub burst: u64,
}

/// Last applied (rate, quantum, burst) per port and priority (8 priorities per port).
#[derive(Debug, Clone, Default)]
pub struct QueueConfigTracker {
    last: Vec<Option<(u64, u64, u64)>>,
}

impl QueueConfigTracker {
    pub fn new(ports: usize) -> Self {
        QueueConfigTracker {
            last: vec![None; ports * 8],
        }
    }

    /// Returns the update to apply if (rate, quantum, burst) differ from what this queue has; 0
    /// means "not set by the program" and changes nothing.
    pub fn observe(
        &mut self,
        port: u32,
        priority: u8,
        (rate, quantum, burst): (u64, u64, u64),
    ) -> Option<QueueUpdate> {
        if rate == 0 && quantum == 0 && burst == 0 {
            return None;
        }
        let i = port as usize * 8 + usize::from(priority & 7);
        if i >= self.last.len() {
            // grows only when a port beyond the configured count shows up
            self.last.resize(i + 1, None);
        }
        if self.last[i] == Some((rate, quantum, burst)) {
            return None;
        }
        self.last[i] = Some((rate, quantum, burst));
        Some(QueueUpdate {
            port,
            priority: priority & 7,
            rate,
            quantum,
            burst,
        })
    }

    /// Forgets a queue's configuration (e.g. after the TM was reconfigured by hand).
    pub fn forget(&mut self, port: u32, priority: u8) {
        if let Some(x) = self
            .last
            .get_mut(port as usize * 8 + usize::from(priority & 7))
        {
            *x = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_changes_are_reported() {
        let mut t = QueueConfigTracker::new(4);
        assert!(t.observe(1, 7, (0, 0, 0)).is_none());
        let u = t.observe(1, 7, (7_500_000, 7000, 0)).unwrap();
        assert_eq!(
            (u.port, u.priority, u.rate, u.quantum, u.burst),
            (1, 7, 7_500_000, 7000, 0)
        );
        assert!(t.observe(1, 7, (7_500_000, 7000, 0)).is_none());
        assert!(t.observe(1, 7, (7_500_000, 7000, 20_000)).is_some());
        assert!(t.observe(1, 5, (7_500_000, 7000, 0)).is_some());
        assert!(t.observe(1, 7, (2_500_000, 7000, 0)).is_some());
        assert!(t.observe(100, 1, (1, 1, 0)).is_some());
    }
}

//! Queue settings changed by hand (the command port's `set_queue_*`, bmv2's Thrift
//! `set_egress_queue_*`): which ports and queues a change reaches, in one place.

use lanes_tm::QueueConfig;

use super::{Dataplane, SettingError};

/// Bytes a rate in packets per second stands for: bmv2's pps queue rates assume MTU frames.
pub const PPS_FRAME_BYTES: f64 = 1500.0;

impl Dataplane {
    /// Apply `change` to queue `queue` (None: every queue) of port `port` (None: every port).
    /// An unknown port or queue is refused before any queue changes.
    pub fn update_queues(
        &mut self,
        port: Option<u32>,
        queue: Option<usize>,
        change: impl Fn(&mut QueueConfig),
    ) -> Result<(), SettingError> {
        let ports: Vec<u32> = match port {
            Some(n) if self.port(n).is_none() => return Err(SettingError::NoPort(n)),
            Some(n) => vec![n],
            None => self.ports.iter().map(|p| p.num).collect(),
        };
        if let Some(q) = queue {
            let short = ports.iter().find(|n| {
                let tm = &self.port(**n).expect("checked").tm;
                q >= tm.num_queues()
            });
            if let Some(&port) = short {
                return Err(SettingError::NoQueue { port, queue: q });
            }
        }
        for n in ports {
            let tm = &mut self.port_mut(n).expect("checked").tm;
            let queues = match queue {
                Some(q) => q..q + 1,
                None => 0..tm.num_queues(),
            };
            for q in queues {
                let mut cfg = tm.queue_config(q).expect("checked").clone();
                change(&mut cfg);
                tm.set_queue_config(q, cfg)
                    .map_err(|e| SettingError::Refused(e.0))?;
            }
        }
        Ok(())
    }

    /// bmv2's queue depth: every queue of `port` (None: of every port) holds `pkts` packets.
    pub fn set_queue_depth(&mut self, port: Option<u32>, pkts: u32) -> Result<(), SettingError> {
        if pkts == 0 {
            return Err(SettingError::ZeroDepth);
        }
        self.update_queues(port, None, |q| q.depth_pkts = Some(pkts))
    }

    /// bmv2's queue rate in packets per second (of PPS_FRAME_BYTES frames), on every queue of
    /// `port` (None: of every port).
    pub fn set_queue_rate_pps(&mut self, port: Option<u32>, pps: f64) -> Result<(), SettingError> {
        if !(pps.is_finite() && pps > 0.0) {
            return Err(SettingError::BadRate(pps));
        }
        let bytes = pps * PPS_FRAME_BYTES;
        self.update_queues(port, None, |q| q.rate_bytes_per_s = Some(bytes))
    }
}

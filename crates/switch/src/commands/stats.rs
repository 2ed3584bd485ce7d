//! `stats_json [reset]`: the switch's statistics as one line of JSON for programs (the lab's
//! monitor, the Python bindings): per port its counters, receive-ring backlog and queues, per
//! queue its depth, counters and queueing-delay histogram; and the drop counters by reason. The
//! `show_*` commands print the same numbers as text for people. `reset` clears what the text
//! commands' `reset` clears (delay histograms, the receive backlog maxima) after reading them.

use lanes_tm::QuantilePoint::Middle;
use serde::Serialize;

use crate::dataplane::{Dataplane, DropCounters, EgressPort, LoopCounters};

type R = Result<String, String>;

pub(crate) const HELP: &str = "stats_json [reset]";

/// The switch's statistics, as `stats_json` writes them (the field names are the JSON's keys;
/// python/lanes/lab/switch_stats.py reads them back).
#[derive(Debug, Serialize)]
pub struct SwitchStats {
    /// Every port, in port order.
    pub ports: Vec<PortStats>,
    /// Packets dropped, by reason.
    pub drops: DropCounters,
    /// What the event loop did instead of sleeping (since start).
    pub event_loop: LoopCounters,
}

/// One port: its TM's settings, its counters and its queues.
#[derive(Debug, Serialize)]
pub struct PortStats {
    /// The port number.
    pub port: u32,
    /// The port's line rate (bits/s) the TM paces to.
    pub rate_bps: f64,
    /// The scheduler's name (`fifo`, `strict`, `rlsp-drr`, ...).
    pub scheduler: &'static str,
    /// `lanes` or `bmv2` (the bmv2-faithful model).
    pub tm_model: &'static str,
    /// What a full queue drops (`tail` or `random`).
    pub drop: String,
    /// Frames received.
    pub rx_pkts: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// The most frames taken from the receive ring in one go since the last reset.
    pub rx_backlog_max: u64,
    /// Waits of the event loop this port's arrivals ended, since start.
    pub rx_wakeups: u64,
    /// Frames sent (the kernel took them).
    pub tx_pkts: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Frames the kernel refused, or PacketIns dropped for a slow controller.
    pub tx_errors: u64,
    /// The port's queues, by queue id.
    pub queues: Vec<QueueStats>,
}

/// One queue of a port: its settings, depth, counters and queueing delay.
#[derive(Debug, Serialize)]
pub struct QueueStats {
    /// The queue id (the priority a packet asks for).
    pub qid: usize,
    /// Packets queued now.
    pub depth_pkts: u32,
    /// Bytes queued now.
    pub depth_bytes: u64,
    #[serde(rename = "rate_Bps")]
    /// The queue's rate limit (bytes/s), if any.
    pub rate_bytes_per_s: Option<f64>,
    /// The DRR quantum (bytes).
    pub quantum: u32,
    /// The queue's depth limit (packets), if any.
    pub limit_pkts: Option<u32>,
    /// The token bucket's depth, with a rate only.
    pub burst_bytes: Option<u64>,
    /// Packets queued since start.
    pub enq_pkts: u64,
    /// Packets sent from the queue since start.
    pub deq_pkts: u64,
    /// Bytes sent from the queue since start.
    pub deq_bytes: u64,
    /// Packets the queue dropped since start.
    pub drop_pkts: u64,
    /// The queueing delay since the last reset.
    pub delay_ns: DelayStats,
}

/// A queue's queueing-delay histogram since it was last reset (ns).
#[derive(Debug, Serialize)]
pub struct DelayStats {
    /// Packets recorded.
    pub pkts: u64,
    /// Median (ns).
    pub p50: u64,
    /// 99th percentile (ns).
    pub p99: u64,
    /// Largest (ns).
    pub max: u64,
    /// Sum of all recorded delays (ns), for the mean.
    pub sum: u64,
    /// [bucket index, count] of the buckets that hold any (bounds in lanes_switch::delay).
    pub buckets: Vec<[u64; 2]>,
}

/// Runs `stats_json`; None for any other command.
pub(crate) fn execute(dp: &mut Dataplane, cmd: &str, args: &[&str]) -> Option<R> {
    if cmd != "stats_json" {
        return None;
    }
    let reset = match args {
        [] => false,
        ["reset"] => true,
        _ => return Some(Err("usage: stats_json [reset]".into())),
    };
    Some(serde_json::to_string(&stats(dp, reset)).map_err(|e| e.to_string()))
}

/// The statistics; with `reset`, the delay histograms and receive backlog maxima start afresh
/// once read (so successive reads cover successive intervals).
pub fn stats(dp: &mut Dataplane, reset: bool) -> SwitchStats {
    SwitchStats {
        ports: dp.ports.iter_mut().map(|p| port_stats(p, reset)).collect(),
        drops: dp.drops,
        event_loop: dp.event_loop,
    }
}

fn port_stats(p: &mut EgressPort, reset: bool) -> PortStats {
    let queues = (0..p.tm.num_queues())
        .map(|q| {
            let s = p.tm.queue_status(q).expect("queue exists");
            let h = &mut p.delay[q];
            let delay_ns = DelayStats {
                pkts: h.count(),
                p50: h.quantile(0.5, Middle),
                p99: h.quantile(0.99, Middle),
                max: h.max(),
                sum: u64::try_from(h.sum()).unwrap_or(u64::MAX),
                buckets: h.nonempty().map(|(i, c)| [i as u64, c]).collect(),
            };
            if reset {
                h.reset();
            }
            QueueStats {
                qid: q,
                depth_pkts: s.depth_pkts,
                depth_bytes: s.depth_bytes,
                rate_bytes_per_s: s.config.rate_bytes_per_s,
                quantum: s.config.quantum,
                limit_pkts: s.config.depth_pkts,
                burst_bytes: s
                    .config
                    .rate_bytes_per_s
                    .map(|_| s.config.effective_burst_bytes()),
                enq_pkts: s.counters.enq_pkts,
                deq_pkts: s.counters.deq_pkts,
                deq_bytes: s.counters.deq_bytes,
                drop_pkts: s.counters.drop_pkts(),
                delay_ns,
            }
        })
        .collect();
    let c = p.counters;
    if reset {
        p.counters.rx_backlog_max = 0;
    }
    PortStats {
        port: p.num,
        rate_bps: p.tm.rate_bps(),
        scheduler: p.tm.scheduler().name(),
        tm_model: p.tm.model().name(),
        drop: p.tm.drop_policy().to_string(),
        rx_pkts: c.rx_pkts,
        rx_bytes: c.rx_bytes,
        rx_backlog_max: c.rx_backlog_max,
        rx_wakeups: c.rx_wakeups,
        tx_pkts: c.tx_pkts,
        tx_bytes: c.tx_bytes,
        tx_errors: c.tx_errors,
        queues,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn dataplane() -> Dataplane {
        let mut dp = Dataplane::new(Default::default());
        dp.add_port(1, Some(100e6)).unwrap();
        dp.add_port(2, Some(100e6)).unwrap();
        dp
    }

    #[test]
    fn reset_starts_the_delay_histograms_and_rx_backlog_afresh() {
        let mut dp = dataplane();
        dp.note_rx_backlog(1, 40);
        dp.port_mut(2).unwrap().delay[0].record(5);
        dp.port_mut(2).unwrap().delay[0].record(5);
        dp.port_mut(2).unwrap().delay[0].record(1000);
        let v = serde_json::to_value(stats(&mut dp, true)).unwrap();
        assert_eq!(v["ports"][0]["port"], 1);
        assert_eq!(v["ports"][0]["rx_backlog_max"], 40);
        let delay = &v["ports"][1]["queues"][0]["delay_ns"];
        assert_eq!(delay["pkts"], 3);
        assert_eq!(delay["sum"], 1010);
        assert_eq!(delay["max"], 1000);
        let b = crate::delay::bucket(1000) as u64;
        assert_eq!(delay["buckets"], json!([[5, 2], [b, 1]]));
        let after = serde_json::to_value(stats(&mut dp, false)).unwrap();
        assert_eq!(after["ports"][0]["rx_backlog_max"], 0);
        assert_eq!(after["ports"][1]["queues"][0]["delay_ns"]["pkts"], 0);
        assert_eq!(
            after["ports"][1]["queues"][0]["delay_ns"]["buckets"],
            json!([])
        );
    }

    #[test]
    fn the_command_answers_one_line_of_json_and_refuses_other_arguments() {
        let mut dp = dataplane();
        let out = crate::commands::execute(&mut dp, "stats_json").unwrap();
        assert!(!out.contains('\n'));
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["ports"].as_array().unwrap().len(), 2);
        assert_eq!(v["drops"]["queue_full"], 0);
        let err = crate::commands::execute(&mut dp, "stats_json now").unwrap_err();
        assert_eq!(err, "usage: stats_json [reset]");
    }
}

//! `stats_json [reset]`: the switch's statistics as one line of JSON for programs (the lab's
//! monitor, the Python bindings): per port its counters, receive-ring backlog and queues, per
//! queue its depth, counters and queueing-delay histogram; and the drop counters by reason. The
//! `show_*` commands print the same numbers as text for people. `reset` clears what the text
//! commands' `reset` clears (delay histograms, the receive backlog maxima) after reading them.

use lanes_tm::QuantilePoint::Middle;
use serde_json::{json, Value};

use crate::dataplane::{Dataplane, EgressPort};

type R = Result<String, String>;

pub(crate) const HELP: &str = "stats_json [reset]";

/// Runs `stats_json`; None for any other command.
pub(crate) fn execute(dp: &mut Dataplane, cmd: &str, args: &[&str]) -> Option<R> {
    if cmd != "stats_json" {
        return None;
    }
    Some(match args {
        [] => Ok(stats_json(dp, false).to_string()),
        ["reset"] => Ok(stats_json(dp, true).to_string()),
        _ => Err("usage: stats_json [reset]".into()),
    })
}

/// The statistics document; with `reset`, the delay histograms and receive backlog maxima start
/// afresh once read (so successive reads cover successive intervals).
pub fn stats_json(dp: &mut Dataplane, reset: bool) -> Value {
    let ports: Vec<Value> = dp.ports.iter_mut().map(|p| port_json(p, reset)).collect();
    let d = dp.drops;
    json!({"ports": ports, "drops": {"no_program": d.no_program, "oversize": d.oversize,
           "parser": d.parser, "ingress": d.ingress, "egress": d.egress,
           "unknown_port": d.unknown_port, "queue_full": d.queue_full,
           "buffer_full": d.buffer_full, "no_buffer": d.no_buffer,
           "no_mirror_session": d.no_mirror_session, "clone_depth": d.clone_depth,
           "no_multicast_group": d.no_multicast_group, "pass_limit": d.pass_limit,
           "digests": d.digests}})
}

fn port_json(p: &mut EgressPort, reset: bool) -> Value {
    let queues: Vec<Value> = (0..p.tm.num_queues())
        .map(|q| {
            let s = p.tm.queue_status(q).expect("queue exists");
            let h = &mut p.delay[q];
            // buckets as [index, count] pairs: bounds in lanes_switch::delay
            let buckets: Vec<[u64; 2]> = h.nonempty().map(|(i, c)| [i as u64, c]).collect();
            let delay = json!({"pkts": h.count(), "p50": h.quantile(0.5, Middle),
                               "p99": h.quantile(0.99, Middle), "max": h.max(), "sum": u64::try_from(h.sum()).unwrap_or(u64::MAX),
                               "buckets": buckets});
            if reset {
                h.reset();
            }
            json!({"qid": q, "depth_pkts": s.depth_pkts, "depth_bytes": s.depth_bytes,
                   "rate_Bps": s.config.rate_bytes_per_s, "quantum": s.config.quantum,
                   "limit_pkts": s.config.depth_pkts,
                   "burst_bytes": s.config.rate_bytes_per_s.map(|_| s.config.effective_burst_bytes()),
                   "enq_pkts": s.counters.enq_pkts, "deq_pkts": s.counters.deq_pkts,
                   "deq_bytes": s.counters.deq_bytes, "drop_pkts": s.counters.drop_pkts(),
                   "delay_ns": delay})
        })
        .collect();
    let c = p.counters;
    if reset {
        p.counters.rx_backlog_max = 0;
    }
    json!({"port": p.num, "rate_bps": p.tm.rate_bps(), "scheduler": p.tm.scheduler().name(),
           "tm_model": p.tm.model().name(), "drop": p.tm.drop_policy().to_string(),
           "rx_pkts": c.rx_pkts, "rx_bytes": c.rx_bytes, "rx_backlog_max": c.rx_backlog_max,
           "tx_pkts": c.tx_pkts, "tx_bytes": c.tx_bytes, "tx_errors": c.tx_errors,
           "queues": queues})
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let v = stats_json(&mut dp, true);
        assert_eq!(v["ports"][0]["port"], 1);
        assert_eq!(v["ports"][0]["rx_backlog_max"], 40);
        let delay = &v["ports"][1]["queues"][0]["delay_ns"];
        assert_eq!(delay["pkts"], 3);
        assert_eq!(delay["sum"], 1010);
        assert_eq!(delay["max"], 1000);
        let b = crate::delay::bucket(1000) as u64;
        assert_eq!(delay["buckets"], json!([[5, 2], [b, 1]]));
        let after = stats_json(&mut dp, false);
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

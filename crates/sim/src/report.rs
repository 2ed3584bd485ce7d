//! The result document: per-flow throughput, loss and delay, per-port utilisation, intervals.

use lanes_tm::QuantilePoint::Upper;
use serde_json::{json, Map, Value};

use crate::engine::SimOutput;
use crate::scenario::Scenario;

pub fn to_json(s: &Scenario, out: &SimOutput) -> Value {
    let mut flows = Map::new();
    for (f, st) in s.flows.iter().zip(&out.flows) {
        let (a, b) = s.flow_window(f);
        let window = (b - a).max(f64::MIN_POSITIVE);
        let loss = if st.offered_pkts == 0 {
            0.0
        } else {
            100.0 * st.dropped_pkts as f64 / st.offered_pkts as f64
        };
        flows.insert(
            f.name.clone(),
            json!({
                "port": f.port,
                "queue": f.queue,
                "offered_bps": st.offered_bytes as f64 * 8.0 / window,
                "throughput_bps": st.window_bytes as f64 * 8.0 / window,
                "loss_pct": loss,
                "offered_pkts": st.offered_pkts,
                "delivered_pkts": st.delivered_pkts,
                "dropped_pkts": st.dropped_pkts,
                "queued_at_end_pkts": st.offered_pkts - st.delivered_pkts - st.dropped_pkts,
                // time from arrival at the port until the port starts sending the packet
                "delay_ns": {
                    "p50": st.delay.quantile(0.5, Upper),
                    "p99": st.delay.quantile(0.99, Upper),
                    "p999": st.delay.quantile(0.999, Upper),
                    "max": st.delay.max(),
                    "mean": st.delay.mean(),
                },
            }),
        );
    }
    let mut ports = Map::new();
    for (p, st) in s.ports.iter().zip(&out.ports) {
        let queues: Vec<Value> = (0..st.ports.num_queues())
            .map(|q| {
                let c = st.ports.queue_status(q).expect("queue exists").counters;
                json!({"index": q, "enq_pkts": c.enq_pkts, "deq_pkts": c.deq_pkts, "deq_bytes": c.deq_bytes,
                       "drop_queue_full_pkts": c.drop_queue_full_pkts, "drop_buffer_full_pkts": c.drop_buffer_full_pkts})
            })
            .filter(|q| q["enq_pkts"].as_u64() != Some(0) || q["drop_queue_full_pkts"].as_u64() != Some(0))
            .collect();
        ports.insert(
            p.name.clone(),
            json!({
                "rate_bps": p.rate_bps,
                "scheduler": st.ports.scheduler().name(),
                "tm_model": st.ports.model().name(),
                "utilisation": st.sent_wire_bytes as f64 * 8.0 / (p.rate_bps * s.duration_s),
                "sent_bytes": st.sent_bytes,
                "queues": queues,
            }),
        );
    }
    let n = out.ports.first().map_or(0, |p| p.interval_wire_bytes.len());
    let intervals: Vec<Value> = (0..n)
        .map(|i| {
            let start = i as f64 * s.interval_s;
            let len = (s.duration_s - start).min(s.interval_s);
            let flows: Map<String, Value> = s
                .flows
                .iter()
                .zip(&out.flows)
                .map(|(f, st)| {
                    (
                        f.name.clone(),
                        json!(st.interval_bytes[i] as f64 * 8.0 / len),
                    )
                })
                .collect();
            let util: Map<String, Value> = s
                .ports
                .iter()
                .zip(&out.ports)
                .map(|(p, st)| {
                    (
                        p.name.clone(),
                        json!(st.interval_wire_bytes[i] as f64 * 8.0 / (p.rate_bps * len)),
                    )
                })
                .collect();
            json!({"t_s": start, "flows_bps": flows, "ports_utilisation": util})
        })
        .collect();
    json!({
        "duration_s": s.duration_s,
        "seed": s.seed,
        "interval_s": s.interval_s,
        "flows": flows,
        "ports": ports,
        "intervals": intervals,
        "stats": {"packet_events": out.events, "wall_s": out.wall_s,
                  "events_per_s": out.events as f64 / out.wall_s.max(1e-9)},
    })
}

//! The event loop: packet arrivals from sources, departures when a port may send.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use lanes_tm::{EnqueueOutcome, Nanos, TmPort};

use crate::scenario::{Scenario, ScenarioError};
use crate::source::Source;
use crate::Histogram;

/// Progress of a long run, reported about once a second of wall time.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub fraction: f64,
    pub events: u64,
}

#[derive(Default)]
pub struct FlowStats {
    pub offered_pkts: u64,
    pub offered_bytes: u64,
    pub dropped_pkts: u64,
    pub delivered_pkts: u64,
    /// Bytes that left the port inside the flow's own active window.
    pub window_bytes: u64,
    pub delay: Box<Histogram>,
    /// Bytes sent per output interval.
    pub interval_bytes: Vec<u64>,
}

pub struct PortStats {
    pub sent_bytes: u64,
    pub sent_wire_bytes: u64,
    pub interval_wire_bytes: Vec<u64>,
    pub ports: TmPort<u32>,
}

pub struct SimOutput {
    pub flows: Vec<FlowStats>,
    pub ports: Vec<PortStats>,
    pub events: u64,
    pub wall_s: f64,
}

// Heap keys: (time, kind, index). Arrivals sort before departures at the same instant so a
// packet arriving exactly when the port frees up competes in that scheduling decision.
const ARRIVAL: u8 = 0;
const WAKE: u8 = 1;

pub fn simulate(
    s: &Scenario,
    mut progress: Option<&mut dyn FnMut(Progress)>,
) -> Result<SimOutput, ScenarioError> {
    let end_ns = (s.duration_s * 1e9) as Nanos;
    let interval_ns = s.interval_s * 1e9;
    let n_intervals = (s.duration_s / s.interval_s).ceil() as usize;
    let mut ports = Vec::with_capacity(s.ports.len());
    for i in 0..s.ports.len() {
        let port = TmPort::new(s.port_config(i)?, s.port_model(i)?)
            .map_err(|e| ScenarioError(e.to_string()))?;
        ports.push(PortStats {
            sent_bytes: 0,
            sent_wire_bytes: 0,
            interval_wire_bytes: vec![0; n_intervals],
            ports: port,
        });
    }
    let overhead: Vec<u64> = s
        .ports
        .iter()
        .map(|p| u64::from(p.overhead_bytes))
        .collect();
    let mut sources: Vec<Source> = s
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            Source::new(
                s,
                f,
                i,
                s.ports
                    .iter()
                    .position(|p| p.name == f.port)
                    .expect("validated"),
            )
        })
        .collect();
    let windows: Vec<(u64, u64)> = s
        .flows
        .iter()
        .map(|f| {
            let (a, b) = s.flow_window(f);
            ((a * 1e9) as u64, (b * 1e9) as u64)
        })
        .collect();
    let mut flows: Vec<FlowStats> = s
        .flows
        .iter()
        .map(|_| FlowStats {
            interval_bytes: vec![0; n_intervals],
            ..FlowStats::default()
        })
        .collect();

    let mut heap: BinaryHeap<Reverse<(Nanos, u8, u32)>> =
        BinaryHeap::with_capacity(sources.len() + ports.len());
    for (i, src) in sources.iter().enumerate() {
        if src.active() {
            heap.push(Reverse((src.next_ns.round() as Nanos, ARRIVAL, i as u32)));
        }
    }
    // the wake-up each port has pending; heap entries that disagree with it are stale
    let mut wake: Vec<Option<Nanos>> = vec![None; ports.len()];
    let started = Instant::now();
    let mut last_report = started;
    let mut events = 0u64;

    while let Some(Reverse((now, kind, idx))) = heap.pop() {
        if now >= end_ns {
            break;
        }
        let idx = idx as usize;
        let p = if kind == ARRIVAL {
            let src = &mut sources[idx];
            let bytes = src.emit();
            let (p, q) = (src.port, src.queue);
            if src.active() {
                heap.push(Reverse((src.next_ns.round() as Nanos, ARRIVAL, idx as u32)));
            }
            let fs = &mut flows[idx];
            fs.offered_pkts += 1;
            fs.offered_bytes += u64::from(bytes);
            if let EnqueueOutcome::Dropped(..) = ports[p].ports.enqueue(now, q, bytes, idx as u32) {
                fs.dropped_pkts += 1;
            }
            p
        } else {
            if wake[idx] != Some(now) {
                continue; // superseded by an earlier wake-up
            }
            wake[idx] = None;
            let ps = &mut ports[idx];
            if let Some(d) = ps.ports.dequeue(now) {
                let f = d.item as usize;
                let fs = &mut flows[f];
                fs.delivered_pkts += 1;
                fs.delay.record(d.queued_ns);
                let slot = ((now as f64 / interval_ns) as usize).min(n_intervals - 1);
                fs.interval_bytes[slot] += u64::from(d.bytes);
                if (windows[f].0..windows[f].1).contains(&now) {
                    fs.window_bytes += u64::from(d.bytes);
                }
                ps.sent_bytes += u64::from(d.bytes);
                let wire = u64::from(d.bytes) + overhead[idx];
                ps.sent_wire_bytes += wire;
                ps.interval_wire_bytes[slot] += wire;
            }
            idx
        };
        events += 1;
        if let Some(t) = ports[p].ports.next_event_ns(now) {
            if wake[p].is_none_or(|w| t < w) {
                wake[p] = Some(t);
                heap.push(Reverse((t, WAKE, p as u32)));
            }
        }
        if events & 0xFFFFF == 0 {
            if let Some(cb) = progress.as_mut() {
                if last_report.elapsed().as_secs_f64() >= 1.0 {
                    last_report = Instant::now();
                    cb(Progress {
                        fraction: now as f64 / end_ns as f64,
                        events,
                    });
                }
            }
        }
    }
    Ok(SimOutput {
        flows,
        ports,
        events,
        wall_s: started.elapsed().as_secs_f64(),
    })
}

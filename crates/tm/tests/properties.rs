//! Property tests over random arrival sequences: fairness, rate limits, starvation, work
//! conservation, per-queue order and packet conservation, for every scheduler.

use lanes_tm::{EnqueueOutcome, Port, PortConfig, Scheduler};
use proptest::prelude::*;

const MTU: u32 = 1500;

#[derive(Clone, Debug)]
struct Arrival {
    t: u64,
    qid: usize,
    bytes: u32,
}

#[derive(Clone, Copy, Debug)]
struct Departure {
    t: u64,
    qid: usize,
    seq: u64,
    bytes: u32,
}

/// Item carried through the TM: (queue it was offered to, per-queue sequence number).
type Item = (usize, u64);

/// Which queues may send at `now` according to the schedulers' definitions, written
/// independently of the TM: (some queue may send now, every backlogged queue is rate-held).
fn oracle_eligible(port: &Port<Item>, sched: Scheduler) -> bool {
    let n = port.num_queues();
    let backlogged: Vec<usize> = (0..n)
        .filter(|&q| port.queue_status(q).unwrap().depth_pkts > 0)
        .collect();
    if backlogged.is_empty() {
        return false;
    }
    match sched {
        Scheduler::Fifo | Scheduler::Drr | Scheduler::RlspDrrBorrow => true,
        Scheduler::Strict => backlogged
            .iter()
            .any(|&q| port.queue_config(q).unwrap().rate_bytes_per_s.is_none()),
        Scheduler::RlspDrr => backlogged
            .iter()
            .any(|&q| q < n - 1 || port.queue_config(q).unwrap().rate_bytes_per_s.is_none()),
    }
}

/// Event-driven run: arrivals in time order, a dequeue whenever the port may send. Checks work
/// conservation between events; returns departures and the number of drops.
fn run(port: &mut Port<Item>, sched: Scheduler, arrivals: &[Arrival]) -> (Vec<Departure>, u64) {
    let ns_per_byte = 8e9 / port.rate_bps();
    let mut next_seq = vec![0u64; port.num_queues()];
    let mut deps = vec![];
    let mut drops = 0;
    let mut free_at = 0f64;
    let mut i = 0;
    let mut now = 0u64;
    loop {
        let next_arr = arrivals.get(i).map(|a| a.t);
        let next_deq = port.next_event_ns(now);
        if oracle_eligible(port, sched) {
            // work conservation: the port sends again as soon as it is free
            let free = free_at.ceil().max(now as f64) as u64;
            assert_eq!(next_deq, Some(free), "port idles while a queue may send");
        }
        match (next_arr, next_deq) {
            (None, None) => break,
            (Some(ta), d) if d.is_none_or(|td| ta <= td) => {
                now = ta;
                let a = &arrivals[i];
                let qid = if sched == Scheduler::Fifo { 0 } else { a.qid };
                let item = (qid, next_seq[qid]);
                match port.enqueue(now, a.qid, a.bytes, item) {
                    EnqueueOutcome::Queued => next_seq[qid] += 1,
                    EnqueueOutcome::Dropped(..) => drops += 1,
                }
                i += 1;
            }
            (_, Some(td)) => {
                now = td;
                let d = port.dequeue(now).expect("next_event_ns promised a packet");
                // the port model: back to back, catching up at most the 1 ns of clock resolution
                free_at = (now as f64 - 1.0).max(free_at) + f64::from(d.bytes) * ns_per_byte;
                deps.push(Departure {
                    t: now,
                    qid: d.item.0,
                    seq: d.item.1,
                    bytes: d.bytes,
                });
            }
            _ => unreachable!(),
        }
    }
    (deps, drops)
}

fn arrivals_strategy(
    queues: usize,
    max: usize,
    mean_gap_ns: u64,
) -> impl Strategy<Value = Vec<Arrival>> {
    prop::collection::vec((0..mean_gap_ns * 2, 0..queues, 64u32..=MTU), 1..max).prop_map(|v| {
        let mut t = 0;
        v.into_iter()
            .map(|(gap, qid, bytes)| {
                t += gap;
                Arrival { t, qid, bytes }
            })
            .collect()
    })
}

fn unlimited(rate_bps: f64, s: Scheduler, n: usize) -> PortConfig {
    let mut c = PortConfig::new(rate_bps, s, n);
    for q in &mut c.queues {
        q.depth_pkts = None;
    }
    c
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Every packet is delivered or counted as dropped, queues never reorder, counters add up,
    /// and the port never idles while a queue may send (checked inside `run`).
    #[test]
    fn conservation_order_and_work_conservation(
        sched_i in 0usize..5,
        arrivals in arrivals_strategy(8, 400, 20_000),
        rate7 in prop::option::of(1e5f64..1e7),
        depth in 1u32..40,
        buffer in prop::option::of(3000u64..60_000),
    ) {
        let sched = Scheduler::ALL[sched_i];
        let mut c = PortConfig::new(1e8, sched, 8);
        for q in &mut c.queues { q.depth_pkts = Some(depth); }
        c.queues[7].rate_bytes_per_s = rate7;
        c.buffer_bytes = buffer;
        let mut port = Port::new(c).unwrap();
        let (deps, drops) = run(&mut port, sched, &arrivals);
        prop_assert_eq!(deps.len() as u64 + drops, arrivals.len() as u64);
        prop_assert!(port.is_empty());
        let mut last = [None::<u64>; 8];
        for d in &deps {
            prop_assert!(last[d.qid].is_none_or(|s| d.seq == s + 1), "queue {} reordered", d.qid);
            last[d.qid] = Some(d.seq);
        }
        let (mut enq, mut deq, mut dropped) = (0, 0, 0);
        for q in 0..8 {
            let c = port.queue_status(q).unwrap().counters;
            enq += c.enq_pkts; deq += c.deq_pkts; dropped += c.drop_pkts();
        }
        prop_assert_eq!((enq, deq, dropped), (deps.len() as u64, deps.len() as u64, drops));
    }

    /// Backlogged DRR queues share bytes in proportion to their quanta, within 2 %.
    #[test]
    fn drr_shares_follow_quanta(quanta in prop::collection::vec(1500u32..9000, 2..8), sizes in prop::collection::vec(64u32..=MTU, 64)) {
        let n = quanta.len();
        let mut c = unlimited(1e9, Scheduler::Drr, n);
        for (q, &quantum) in c.queues.iter_mut().zip(&quanta) { q.quantum = quantum; }
        let mut port = Port::new(c).unwrap();
        let total_quanta: u32 = quanta.iter().sum();
        // enough packets that every queue stays backlogged for 300 rounds
        let per_queue = 300 * 9000 / 64;
        for k in 0..per_queue {
            for q in 0..n { port.enqueue(0, q, sizes[(k + q) % sizes.len()], (q, k as u64)); }
        }
        let mut served = vec![0u64; n];
        let mut now = 0;
        let target = 300 * u64::from(total_quanta);
        while served.iter().sum::<u64>() < target {
            now = port.next_event_ns(now).unwrap();
            let d = port.dequeue(now).unwrap();
            served[d.qid] += u64::from(d.bytes);
        }
        let sum: u64 = served.iter().sum();
        for q in 0..n {
            let share = served[q] as f64 / sum as f64;
            let want = f64::from(quanta[q]) / f64::from(total_quanta);
            prop_assert!((share / want - 1.0).abs() < 0.02, "queue {q}: share {share:.4} want {want:.4}");
        }
    }

    /// A rate-limited queue never sends more than rate x T + burst over any window T. Slack:
    /// the frame in flight whose wait is not charged, at most one packet's wire time at the port
    /// rate, i.e. rate x 1500 B / port rate (plus the port's 1 ns of catch-up).
    #[test]
    fn rate_limit_holds_over_every_window(
        sched_i in prop::sample::select(vec![1usize, 3, 4]),
        frac in 0.05f64..0.9,
        burst in prop::option::of(1500u64..40_000),
        arrivals in arrivals_strategy(8, 600, 3_000),
    ) {
        let sched = Scheduler::ALL[sched_i];
        let port_bps = 1e9;
        let rate = frac * port_bps / 8.0;
        let mut c = unlimited(port_bps, sched, 8);
        c.queues[7].rate_bytes_per_s = Some(rate);
        c.queues[7].burst_bytes = burst;
        let burst = c.queues[7].effective_burst_bytes() as f64;
        let mut port = Port::new(c).unwrap();
        // offer queue 7 more than its rate; with borrow only check while others are backlogged
        let mut arr = arrivals;
        for a in arr.iter_mut().step_by(2) { a.qid = 7; }
        let (deps, _) = run(&mut port, sched, &arr);
        if sched == Scheduler::RlspDrrBorrow { return Ok(()); }
        let high: Vec<&Departure> = deps.iter().filter(|d| d.qid == 7).collect();
        let slack = rate * f64::from(MTU) * 8.0 / port_bps + rate * 1e-9 + 1e-6;
        for i in 0..high.len() {
            let mut bytes = 0f64;
            for d in &high[i..] {
                bytes += f64::from(d.bytes);
                let w = (d.t - high[i].t) as f64;
                prop_assert!(bytes <= rate * w / 1e9 + burst + slack, "{bytes} B in {w} ns at {rate} B/s, burst {burst}");
            }
        }
    }

    /// A caller that comes late (up to 2 ms) gets the port back on schedule, but over any window
    /// T the port releases at most rate x (T + burst_ns) bytes plus one frame.
    #[test]
    fn port_pacing_bound_holds_for_a_late_caller(
        burst_ns in 1u64..1_000_000,
        lateness in prop::collection::vec(0u64..2_000_000, 50),
    ) {
        let port_bps = 1e8;
        let mut c = unlimited(port_bps, Scheduler::Fifo, 1);
        c.burst_ns = burst_ns;
        let mut port: Port<Item> = Port::new(c).unwrap();
        for k in 0..3000u64 { port.enqueue(0, 0, MTU, (0, k)); }
        let (mut now, mut sent) = (0u64, vec![]);
        for k in 0..2500usize {
            let Some(t) = port.next_event_ns(now) else { break };
            now = t + if k % 7 == 0 { lateness[k / 7 % lateness.len()] } else { 0 };
            while let Some(d) = port.dequeue(now) { sent.push((now, d.bytes)); }
        }
        let per_ns = port_bps / 8e9;
        for i in 0..sent.len() {
            let mut bytes = 0f64;
            for &(t, b) in &sent[i..] {
                bytes += f64::from(b);
                let w = (t - sent[i].0) as f64;
                prop_assert!(bytes <= per_ns * (w + burst_ns as f64) + f64::from(MTU) + 1e-6,
                    "{bytes} B in {w} ns, burst {burst_ns} ns");
            }
        }
    }

    /// Traffic that conforms to the queue's (burst, rate) is not held back by the shaper: every
    /// packet of it leaves as early as with no rate limit at all, give or take the one frame the
    /// port may be sending when it arrives (the two runs interleave low frames differently).
    #[test]
    fn conforming_traffic_sees_no_shaper_delay(
        sched_i in prop::sample::select(vec![1usize, 3]),
        frac in 0.1f64..0.9,
        burst in 3000u64..30_000,
        gaps in prop::collection::vec((0u64..400_000, 64u32..=MTU), 1..300),
    ) {
        let sched = Scheduler::ALL[sched_i];
        let port_bps = 1e8;
        let rate = frac * port_bps / 8.0;
        // the sender: a token bucket of its own holds each packet until it conforms
        let (mut t, mut tokens, mut at) = (0f64, burst as f64, 0f64);
        let mut arr = vec![];
        for (gap, bytes) in gaps {
            t += gap as f64;
            tokens = (tokens + (t - at) * rate / 1e9).min(burst as f64);
            at = t;
            if tokens < f64::from(bytes) {
                t += (f64::from(bytes) - tokens) / rate * 1e9;
                tokens = f64::from(bytes);
                at = t;
            }
            tokens -= f64::from(bytes);
            arr.push(Arrival { t: t.ceil() as u64, qid: 7, bytes });
            // a saturating low queue beside it
            arr.push(Arrival { t: t.ceil() as u64, qid: 0, bytes: MTU });
        }
        let delays = |limited: bool| {
            let mut c = unlimited(port_bps, sched, 8);
            if limited {
                c.queues[7].rate_bytes_per_s = Some(rate);
                c.queues[7].burst_bytes = Some(burst);
            }
            let mut port = Port::new(c).unwrap();
            let (deps, _) = run(&mut port, sched, &arr);
            let high_arr: Vec<u64> = arr.iter().filter(|a| a.qid == 7).map(|a| a.t).collect();
            deps.iter().filter(|d| d.qid == 7).map(|d| d.t - high_arr[d.seq as usize]).collect::<Vec<u64>>()
        };
        let (shaped, free) = (delays(true), delays(false));
        let frame_ns = f64::from(MTU) * 8e9 / port_bps;
        for (i, (s, f)) in shaped.iter().zip(&free).enumerate() {
            prop_assert!(*s as f64 <= *f as f64 + frame_ns + 1.0, "packet {i}: {s} ns shaped vs {f} ns unlimited");
        }
    }

    /// Under rlsp-drr a backlogged low queue is never starved by the high queue or other low
    /// queues: it is served at least once in every DRR round, whose length is bounded.
    #[test]
    fn rlsp_drr_never_starves_low_queues(frac in 0.1f64..0.95, n_low in 1usize..7, quantum in 1500u32..6000) {
        let port_bps = 1e9;
        let mut c = unlimited(port_bps, Scheduler::RlspDrr, 8);
        c.queues[7].rate_bytes_per_s = Some(frac * port_bps / 8.0);
        for q in &mut c.queues { q.quantum = quantum; }
        let mut port = Port::new(c).unwrap();
        for k in 0..2000u64 {
            port.enqueue(0, 7, MTU, (7, k));
            for q in 0..n_low { port.enqueue(0, q, MTU, (q, k)); }
        }
        let mut now = 0;
        let mut last_served = vec![0u64; n_low];
        // one round: every low queue sends its quantum plus one packet, the high queue its share
        let round_bytes = (n_low as f64) * f64::from(quantum + MTU);
        // plus, once, the time the high queue takes to empty its bucket at line rate (it keeps
        // earning tokens meanwhile): a burst delays the others, it does not starve them
        let burst = port.queue_config(7).unwrap().effective_burst_bytes() as f64;
        let low_bytes_per_s = (1.0 - frac) * port_bps / 8.0;
        let bound_ns = (round_bytes / low_bytes_per_s + burst / low_bytes_per_s) * 1e9
            + 2.0 * f64::from(MTU) * 8.0;
        for _ in 0..3000 {
            now = port.next_event_ns(now).unwrap();
            let d = port.dequeue(now).unwrap();
            if d.qid < 7 {
                prop_assert!(((now - last_served[d.qid]) as f64) <= bound_ns);
                last_served[d.qid] = now;
            }
            for (q, &t) in last_served.iter().enumerate() {
                let depth = port.queue_len(q).unwrap();
                prop_assert_eq!(depth, port.queue_status(q).unwrap().depth_pkts);
                if depth == 0 { continue; }
                prop_assert!(((now - t) as f64) <= bound_ns, "queue {q} starved for {} ns", now - t);
            }
        }
    }
}

//! What fifo does, pinned: one queue for every priority, arrival order across queues after a
//! change of scheduler, queue 0's limits and drop policy, line-rate pacing whatever the rates,
//! and what a change away from fifo finds.

use crate::*;

const MS: u64 = 1_000_000;

/// 8 queues of unlimited depth on a port of 1 byte per microsecond (8 Mb/s).
fn port(s: Scheduler) -> Port<u32> {
    let mut c = PortConfig::new(8e6, s, 8);
    for q in &mut c.queues {
        q.depth_pkts = None;
    }
    Port::new(c).unwrap()
}

fn limit_rate(p: &mut Port<u32>, qid: usize, bytes_per_s: f64, burst: u64) {
    let mut cfg = p.queue_config(qid).unwrap().clone();
    cfg.rate_bytes_per_s = Some(bytes_per_s);
    cfg.burst_bytes = Some(burst);
    p.set_queue_config(qid, cfg).unwrap();
}

/// Dequeue everything, each packet as soon as the port allows: (time, qid, item, deq depth).
fn drain(p: &mut Port<u32>, mut now: u64) -> Vec<(u64, usize, u32, u32)> {
    let mut out = vec![];
    while let Some(t) = p.next_event_ns(now) {
        now = t;
        let d = p.dequeue(now).expect("next_event_ns promised a packet");
        out.push((now, d.qid, d.item, d.deq_depth_pkts));
    }
    out
}

#[test]
fn every_priority_goes_to_queue_zero_and_meets_its_limits() {
    let mut c = PortConfig::new(8e6, Scheduler::Fifo, 8);
    c.queues[0].depth_pkts = Some(3);
    let mut p: Port<u32> = Port::new(c).unwrap();
    for (i, prio) in [7, 3, 0, 5, 99].into_iter().enumerate() {
        let out = p.enqueue(0, prio, 100, i as u32);
        if i < 3 {
            assert_eq!(out, EnqueueOutcome::Queued);
        } else {
            assert_eq!(
                out,
                EnqueueOutcome::Dropped(i as u32, DropReason::QueueFull)
            );
        }
    }
    let s0 = p.queue_status(0).unwrap();
    assert_eq!((s0.depth_pkts, s0.counters.drop_queue_full_pkts), (3, 2));
    for q in 1..8 {
        assert_eq!(p.queue_status(q).unwrap().counters.enq_pkts, 0);
    }
    let out = drain(&mut p, 0);
    assert_eq!(
        out,
        vec![(0, 0, 0, 2), (100_000, 0, 1, 1), (200_000, 0, 2, 0)]
    );
}

#[test]
fn random_drop_draws_from_queue_zero_whatever_the_priority() {
    let mut c = PortConfig::new(8e6, Scheduler::Fifo, 8);
    c.queues[0].depth_pkts = Some(4);
    c.drop = DropPolicy::Random;
    let mut p: Port<u32> = Port::new(c).unwrap();
    let mut dropped = vec![];
    for i in 0..12u32 {
        if let EnqueueOutcome::Dropped(gone, DropReason::QueueFull) =
            p.enqueue(0, (i % 8) as usize, 100, i)
        {
            dropped.push(gone);
        }
    }
    // the draws are seeded: the same arrivals drop the same packets
    assert_eq!(dropped, vec![0, 2, 5, 4, 6, 8, 10, 7]);
    let kept: Vec<u32> = drain(&mut p, 0).into_iter().map(|x| x.2).collect();
    assert_eq!(kept, vec![1, 3, 9, 11]);
    assert_eq!(p.queue_status(0).unwrap().counters.drop_queue_full_pkts, 8);
}

#[test]
fn fifo_sends_at_line_rate_whatever_queue_zeros_rate_and_its_bucket_counts_it() {
    let mut p = port(Scheduler::Fifo);
    limit_rate(&mut p, 0, 100_000.0, 1000); // 1000 B per 10 ms
    for i in 0..3 {
        p.enqueue(0, 4, 1000, i);
    }
    assert_eq!(p.next_event_ns(0), Some(0));
    let times: Vec<u64> = drain(&mut p, 0).into_iter().map(|x| x.0).collect();
    assert_eq!(times, vec![0, MS, 2 * MS]);
    assert_eq!(p.queue_status(0).unwrap().deficit, 0);
    // strict holds the rate again, and the bucket paid for the 3000 B fifo sent in 2 ms: it was
    // 1800 B short at 2 ms, so the next 1000 B may leave 28 ms later
    p.set_scheduler(Scheduler::Strict);
    p.enqueue(3 * MS, 0, 1000, 9);
    assert_eq!(p.next_event_ns(3 * MS), Some(30 * MS));
    assert!(p.dequeue(30 * MS - 1).is_none());
    assert_eq!(p.dequeue(30 * MS).unwrap().item, 9);
}

#[test]
fn a_change_to_fifo_sends_what_is_queued_oldest_first_then_new_arrivals() {
    let mut p = port(Scheduler::Strict);
    limit_rate(&mut p, 7, 100_000.0, 1000);
    // arrival order: 0 (q0), 1 (q5), 2 (q0), 3 (q7), 4 (q7, held by the rate), 5 (q3)
    for (i, q) in [0, 5, 0, 7, 7, 3].into_iter().enumerate() {
        p.enqueue(0, q, 1000, i as u32);
    }
    p.set_scheduler(Scheduler::Fifo);
    p.enqueue(0, 7, 1000, 6);
    assert!(!p.leads(7), "older packets sit in other queues");
    p.enqueue(0, 2, 1000, 7);
    assert_eq!(p.next_event_ns(0), Some(0));
    let out = drain(&mut p, 0);
    let t = |k: u64| k * MS;
    assert_eq!(
        out,
        vec![
            (t(0), 0, 0, 3),
            (t(1), 5, 1, 0),
            (t(2), 0, 2, 2),
            (t(3), 7, 3, 1),
            (t(4), 7, 4, 0), // the rate of queue 7 does not hold under fifo
            (t(5), 3, 5, 0),
            (t(6), 0, 6, 1),
            (t(7), 0, 7, 0),
        ]
    );
    // once the old queues are empty, a lone packet leads again
    p.enqueue(t(9), 6, 1000, 8);
    assert!(p.leads(6));
    p.enqueue(t(9), 6, 1000, 9);
    assert!(!p.leads(6));
}

#[test]
fn old_packets_keep_their_place_when_fifo_takes_new_ones_meanwhile() {
    let mut p = port(Scheduler::Drr);
    for (i, q) in [4, 4, 1].into_iter().enumerate() {
        p.enqueue(0, q, 500, i as u32);
    }
    p.set_scheduler(Scheduler::Fifo);
    // one old packet leaves, then new ones arrive behind the rest
    assert_eq!(p.dequeue(0).unwrap().item, 0);
    p.enqueue(10, 0, 500, 3);
    p.enqueue(20, 4, 500, 4);
    let items: Vec<(usize, u32)> = drain(&mut p, 10).into_iter().map(|x| (x.1, x.2)).collect();
    assert_eq!(items, vec![(4, 1), (1, 2), (0, 3), (0, 4)]);
    for q in 0..8 {
        assert_eq!(p.queue_status(q).unwrap().deficit, 0, "queue {q}");
    }
}

#[test]
fn a_change_from_fifo_serves_queue_zero_by_the_new_scheduler() {
    let mut p = port(Scheduler::Fifo);
    for i in 0..3 {
        p.enqueue(0, 6, 1000, i);
    }
    p.set_scheduler(Scheduler::Strict);
    p.enqueue(0, 6, 1000, 60);
    assert!(p.leads(6), "alone atop the strict queues");
    let items: Vec<(usize, u32)> = drain(&mut p, 0).into_iter().map(|x| (x.1, x.2)).collect();
    assert_eq!(items, vec![(6, 60), (0, 0), (0, 1), (0, 2)]);

    let mut p = port(Scheduler::Fifo);
    for i in 0..3 {
        p.enqueue(0, 6, 1000, i);
    }
    p.set_scheduler(Scheduler::Drr);
    for i in 0..2 {
        p.enqueue(0, 6, 1000, 60 + i);
    }
    let items: Vec<(usize, u32)> = drain(&mut p, 0).into_iter().map(|x| (x.1, x.2)).collect();
    assert_eq!(
        items,
        vec![(0, 0), (6, 60), (0, 1), (0, 2), (6, 61)],
        "DRR: queue 0 first (it joined the round first), then by quantum (1514 B a round)"
    );
}

#[test]
fn fifo_paces_back_to_back_and_never_waits_past_the_port() {
    let mut p = port(Scheduler::Fifo);
    p.enqueue(0, 0, 1000, 0);
    assert!(p.leads(0));
    assert_eq!(p.dequeue(0).unwrap().item, 0);
    p.enqueue(10, 7, 500, 1);
    assert!(
        p.leads(7),
        "alone in the port: it leaves when the port is free"
    );
    assert_eq!(p.next_event_ns(10), Some(MS));
    assert!(p.dequeue(MS - 1).is_none());
    let d = p.dequeue(MS).unwrap();
    assert_eq!((d.item, d.qid, d.queued_ns), (1, 0, MS - 10));
    assert_eq!(p.next_event_ns(MS), None);
}

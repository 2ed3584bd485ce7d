//! The bmv2 model in virtual time: the mechanism the thesis measured (a sparse high-class packet
//! behind a full output buffer) and the same load under lanes's paced TM.

use crate::{
    Bmv2Port, ConfigError, DropPolicy, EnqueueOutcome, Nanos, PortConfig, Scheduler, TmModel,
    TmPort,
};

const LINK_BPS: f64 = 10e6;
const FRAME: u32 = 1500;
/// Wire time of one 1500 B frame at 10 Mb/s.
const FRAME_NS: u64 = 1_200_000;
const HIGH: usize = 7;
const MEDIUM: usize = 5;
const LOW: usize = 4;

/// The thesis's set-up on one 10 Mb/s port: high class 60 % of the link, strict or rlsp-drr;
/// under strict the lower classes are limited to 20 % each, under rlsp-drr they share by DRR.
fn port(model: TmModel, scheduler: Scheduler) -> TmPort<u32> {
    let mut cfg = PortConfig::new(LINK_BPS, scheduler, 8);
    cfg.queues[HIGH].rate_bytes_per_s = Some(0.6 * LINK_BPS / 8.0);
    if scheduler == Scheduler::Strict {
        cfg.queues[MEDIUM].rate_bytes_per_s = Some(0.2 * LINK_BPS / 8.0);
        cfg.queues[LOW].rate_bytes_per_s = Some(0.2 * LINK_BPS / 8.0);
    }
    for q in &mut cfg.queues {
        q.quantum = 7000;
    }
    TmPort::new(cfg, model).unwrap()
}

/// Medium and low each offer two thirds of the link (together 4/3 of it), and after `high_ns`
/// one small high-class packet arrives; the port is served whenever it can send. Returns the
/// high packet's wait (arrival to the wire) and the most packets the port held.
fn high_wait_behind_load(tm: &mut TmPort<u32>, high_ns: Nanos) -> (Nanos, u32) {
    const HIGH_ITEM: u32 = u32::MAX;
    let gap = 3 * FRAME_NS / 2; // one frame of each lower class per 1.5 frame times
    let (mut now, mut next_arrival, mut seq) = (0, 0, 0);
    let mut high_at = None;
    let mut most = 0;
    loop {
        if now >= next_arrival {
            for q in [MEDIUM, LOW] {
                let _ = tm.enqueue(now, q, FRAME, seq);
                seq += 1;
            }
            next_arrival += gap;
        }
        if now >= high_ns && high_at.is_none() {
            assert_eq!(tm.enqueue(now, HIGH, 64, HIGH_ITEM), EnqueueOutcome::Queued);
            high_at = Some(now);
        }
        most = most.max(tm.len_pkts());
        while let Some(d) = tm.dequeue(now) {
            if d.item == HIGH_ITEM {
                assert_eq!(d.qid, HIGH);
                return (now - high_at.unwrap(), most);
            }
        }
        let wake = tm.next_event_ns(now).unwrap_or(u64::MAX);
        let high = if high_at.is_none() { high_ns } else { u64::MAX };
        now = wake.min(next_arrival).min(high).max(now + 1);
    }
}

#[test]
fn rlsp_drr_in_bmv2_makes_a_sparse_high_packet_wait_for_the_whole_output_buffer() {
    // the DRR queues are never held back, so the 128-packet output buffer fills with lower-class
    // frames and the high packet, first in its queue, waits for all of them (thesis 5.2)
    let mut tm = port(TmModel::BMV2, Scheduler::RlspDrr);
    let (wait, most) = high_wait_behind_load(&mut tm, 1_000 * FRAME_NS);
    assert!(
        (127 * FRAME_NS..=129 * FRAME_NS).contains(&wait),
        "waited {} frame times",
        wait as f64 / FRAME_NS as f64
    );
    // 128 in the output buffer and the egress queues at their 64 packets
    assert_eq!(most, 128 + 64 + 64);
}

#[test]
fn the_paced_tm_sends_the_same_high_packet_after_at_most_the_frame_on_the_wire() {
    let mut tm = port(TmModel::Paced, Scheduler::RlspDrr);
    let (wait, _) = high_wait_behind_load(&mut tm, 1_000 * FRAME_NS);
    assert!(wait <= FRAME_NS, "waited {wait} ns");
}

#[test]
fn strict_rates_in_bmv2_keep_the_output_buffer_free_for_the_high_class() {
    // the lower classes' rates (20 % each) hold them in their egress queues, so the output
    // buffer stays short and the high packet waits about a frame: the thesis's strict priority
    let mut tm = port(TmModel::BMV2, Scheduler::Strict);
    let (wait, _) = high_wait_behind_load(&mut tm, 1_000 * FRAME_NS);
    assert!(wait <= 2 * FRAME_NS, "waited {wait} ns");
    if let TmPort::Bmv2(p) = &tm {
        assert!(p.output_len() <= 2, "output buffer held {}", p.output_len());
    }
}

#[test]
fn a_rate_limited_queue_gets_departure_times_at_enqueue_and_keeps_them() {
    // 1500 B at 1.5 MB/s: one packet per ms. Three arrive at 0 and leave at 0, 1 and 2 ms; a
    // fourth that arrives at 10 ms leaves at once (bmv2: max(now, last + bytes / rate))
    let mut cfg = PortConfig::new(1e9, Scheduler::Strict, 2);
    cfg.queues[1].rate_bytes_per_s = Some(1.5e6);
    let mut p: Bmv2Port<u32> = Bmv2Port::new(cfg, 128).unwrap();
    for i in 0..3 {
        assert_eq!(p.enqueue(0, 1, FRAME, i), EnqueueOutcome::Queued);
    }
    let mut left = vec![];
    let mut now = 0;
    loop {
        if let Some(d) = p.dequeue(now) {
            left.push((d.item, now));
        }
        let Some(t) = p.next_event_ns(now) else { break };
        now = t;
    }
    assert_eq!(left, vec![(0, 0), (1, 1_000_000), (2, 2_000_000)]);
    p.enqueue(10_000_000, 1, FRAME, 3);
    assert_eq!(p.next_event_ns(10_000_000), Some(10_000_000));
    assert_eq!(p.dequeue(10_000_000).map(|d| d.item), Some(3));
    assert!(p.is_empty());
}

#[test]
fn packets_delayed_by_a_full_output_buffer_leave_in_a_burst_at_their_old_departure_times() {
    // the thesis's RUNTIME observation: a high queue stalled behind the output buffer does not
    // get new departure times; once there is room its backlog goes out back to back
    let mut cfg = PortConfig::new(LINK_BPS, Scheduler::RlspDrr, 2);
    cfg.queues[1].rate_bytes_per_s = Some(0.6 * LINK_BPS / 8.0);
    let mut p: Bmv2Port<u32> = Bmv2Port::new(cfg, 4).unwrap();
    for i in 0..4 {
        p.enqueue(0, 0, FRAME, i); // the output buffer is full of low-class frames
    }
    for i in 0..3 {
        p.enqueue(0, 1, FRAME, 10 + i); // due at 0, 2 and 4 ms
    }
    let mut order = vec![];
    let mut now = 0;
    loop {
        if let Some(d) = p.dequeue(now) {
            order.push(d.item);
        }
        let Some(t) = p.next_event_ns(now) else { break };
        now = t;
    }
    // after the four low frames (4.8 ms) all three high ones are due and leave back to back
    assert_eq!(order, vec![0, 1, 2, 3, 10, 11, 12]);
}

#[test]
fn queues_drop_the_arrival_at_their_depth_and_the_output_buffer_holds_its_size() {
    let cfg = PortConfig::new(LINK_BPS, Scheduler::Fifo, 8);
    let mut p: Bmv2Port<u32> = Bmv2Port::new(cfg, 128).unwrap();
    let mut dropped = 0;
    for i in 0..300 {
        if let EnqueueOutcome::Dropped(item, _) = p.enqueue(0, 3, FRAME, i) {
            assert_eq!(item, i, "the arrival is dropped");
            dropped += 1;
        }
    }
    assert_eq!(p.output_len(), 128);
    assert_eq!(p.len_pkts(), 128 + 64);
    assert_eq!(dropped, 300 - 192);
    assert_eq!(
        p.queue_status(0).unwrap().counters.drop_queue_full_pkts,
        108
    );
}

#[test]
fn bad_settings_are_refused_in_one_line() {
    let cfg = PortConfig::new(LINK_BPS, Scheduler::Strict, 8);
    let e = Bmv2Port::<u32>::new(cfg.clone(), 0).err().unwrap();
    assert_eq!(
        e,
        ConfigError("bmv2 model: output buffer must hold at least 1 packet".into())
    );
    let mut random = cfg;
    random.drop = DropPolicy::Random;
    assert!(Bmv2Port::<u32>::new(random, 128).is_err());
    assert_eq!("bmv2".parse::<TmModel>().unwrap(), TmModel::BMV2);
    assert_eq!("lanes".parse::<TmModel>().unwrap(), TmModel::Paced);
    assert_eq!(
        "bmv3".parse::<TmModel>().unwrap_err().0,
        "unknown TM model 'bmv3' (expected lanes or bmv2)"
    );
}

#[test]
fn fifo_in_bmv2_takes_every_priority_into_queue_zero_and_ignores_its_rate() {
    // queue 0 limited to one frame per 12 ms would space departures if fifo timed them
    let mut cfg = PortConfig::new(LINK_BPS, Scheduler::Fifo, 8);
    cfg.queues[0].rate_bytes_per_s = Some(125_000.0);
    let mut p: Bmv2Port<u32> = Bmv2Port::new(cfg, 2).unwrap();
    for (i, q) in [7, 0, 3, 5].into_iter().enumerate() {
        assert_eq!(p.enqueue(0, q, FRAME, i as u32), EnqueueOutcome::Queued);
    }
    assert_eq!(
        p.queue_status(0).unwrap().depth_pkts,
        2,
        "2 in the output buffer"
    );
    let mut left = vec![];
    let mut now = 0;
    while let Some(t) = p.next_event_ns(now) {
        now = t;
        let d = p.dequeue(now).unwrap();
        left.push((d.item, d.qid, now));
    }
    let f = FRAME_NS;
    assert_eq!(
        left,
        vec![(0, 0, 0), (1, 0, f), (2, 0, 2 * f), (3, 0, 3 * f)]
    );
}

#[test]
fn fifo_in_bmv2_takes_from_queue_zero_only_after_a_change() {
    // an output buffer of one frame: a, then b and c wait in queues 3 and 0
    let cfg = PortConfig::new(LINK_BPS, Scheduler::Strict, 8);
    let mut p: Bmv2Port<u32> = Bmv2Port::new(cfg, 1).unwrap();
    p.enqueue(0, 3, FRAME, 0);
    p.enqueue(0, 3, FRAME, 1);
    p.enqueue(0, 0, FRAME, 2);
    p.set_scheduler(Scheduler::Fifo);
    p.enqueue(0, 7, FRAME, 3);
    let f = FRAME_NS;
    let items: Vec<_> = [0, f, 2 * f, 3 * f]
        .into_iter()
        .map(|t| p.dequeue(t).map(|d| (d.item, d.qid)))
        .collect();
    assert_eq!(items, vec![Some((0, 3)), Some((2, 0)), Some((3, 0)), None]);
    assert_eq!(p.queue_status(3).unwrap().depth_pkts, 1);
    assert_eq!(
        (p.queue_len(3), p.queue_len(0), p.queue_len(99)),
        (Some(1), Some(0), None)
    );
    p.set_scheduler(Scheduler::Strict);
    assert_eq!(p.dequeue(3 * f).map(|d| (d.item, d.qid)), Some((1, 3)));
}

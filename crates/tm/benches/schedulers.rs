//! Cost of one enqueue + dequeue on a port with 8 backlogged queues, per scheduler.
//! Target: <= 50 ns per packet. And the cost of a drop into a full queue, drop-tail against
//! random drop (which removes a packet from inside the queue). Target: <= 100 ns per drop for a
//! 64-packet queue.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use lanes_tm::{DropPolicy, Port, PortConfig, Scheduler};

fn backlogged_port(s: Scheduler) -> Port<u64> {
    let mut c = PortConfig::new(100e9, s, 8);
    c.queues[7].rate_bytes_per_s = Some(0.6 * 100e9 / 8.0);
    for q in &mut c.queues {
        q.depth_pkts = Some(1024);
        q.quantum = 1500;
    }
    let mut p = Port::new(c).unwrap();
    for i in 0..8 * 64u64 {
        p.enqueue(0, (i % 8) as usize, 1500, i);
    }
    p
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("enqueue+dequeue, 8 backlogged queues");
    g.throughput(Throughput::Elements(1));
    for s in Scheduler::ALL {
        g.bench_function(s.name(), |b| {
            let mut port = backlogged_port(s);
            let mut now = 0u64;
            let mut i = 0u64;
            let sizes = [64u32, 1500, 576, 1500, 1024, 1500, 128, 1500];
            b.iter(|| {
                i += 1;
                port.enqueue(now, (i % 8) as usize, sizes[(i % 8) as usize], i);
                // advance virtual time to when the port is free again
                now = port.next_event_ns(now).unwrap();
                black_box(port.dequeue(now));
            });
        });
    }
    g.finish();
}

fn full_fifo(drop: DropPolicy, depth: u32) -> Port<u64> {
    let mut c = PortConfig::new(100e9, Scheduler::Fifo, 1);
    c.queues[0].depth_pkts = Some(depth);
    c.drop = drop;
    let mut p = Port::new(c).unwrap();
    for i in 0..u64::from(depth) {
        p.enqueue(0, 0, 1500, i);
    }
    p
}

fn bench_drop(c: &mut Criterion) {
    let mut g = c.benchmark_group("enqueue into a full queue");
    g.throughput(Throughput::Elements(1));
    for (name, drop, depth) in [
        ("tail, 64 packets", DropPolicy::Tail, 64),
        ("random, 64 packets", DropPolicy::Random, 64),
        ("random, 1024 packets", DropPolicy::Random, 1024),
    ] {
        g.bench_function(name, |b| {
            let mut port = full_fifo(drop, depth);
            let mut i = 0u64;
            b.iter(|| {
                i += 1;
                black_box(port.enqueue(0, 0, 1500, i));
            });
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(std::time::Duration::from_millis(500)).measurement_time(std::time::Duration::from_secs(2));
    targets = bench, bench_drop
}
criterion_main!(benches);

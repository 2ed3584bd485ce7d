//! Target: pre-built frames through parser -> tm_basic tables -> rlsp-drr -> egress ->
//! deparser on one core, no sockets. Target >= 3 Mpps. The port runs at 1 Tb/s so pacing never
//! holds packets back and the figure is the packet path's own cost.

mod common;

use common::{batch, dataplane, udp_frame};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lanes_tm::Scheduler;

const BATCH: usize = 32;

fn bench_path(c: &mut Criterion) {
    let mut group = c.benchmark_group("pipeline_tm");
    group.throughput(Throughput::Elements(BATCH as u64));
    for frame_len in [64usize, 1500] {
        for (name, sched) in [("rlsp-drr", Scheduler::RlspDrr), ("fifo", Scheduler::Fifo)] {
            let frames: Vec<Vec<u8>> = (0..BATCH)
                .map(|i| udp_frame(1 + (i % 3) as u8, frame_len))
                .collect();
            let mut dp = dataplane(sched);
            let mut now = 0u64;
            let mut sent = 0u64; // keeps the tx closure from being optimised away
            group.bench_function(format!("{name}/{frame_len}B"), |b| {
                b.iter(|| batch(&mut dp, &frames, &mut now, &mut sent))
            });
            assert_eq!(dp.queued_pkts(), 0, "every frame must have left");
        }
    }
    group.finish();
}

criterion_group!(benches, bench_path);
criterion_main!(benches);

//! Target: pre-built frames through parser -> tm_basic tables -> rlsp-drr -> egress ->
//! deparser on one core, no sockets. Target >= 3 Mpps. The port runs at 1 Tb/s so pacing never
//! holds packets back and the figure is the packet path's own cost.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lanes_p4::Program;
use lanes_switch::commands::execute;
use lanes_switch::{Dataplane, TmDefaults};
use lanes_tm::Scheduler;

const BATCH: usize = 32;

fn udp_frame(src_host: u8, frame_len: usize) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 1, 4, 0, 0, 0, 0, 1, src_host, 0x08, 0x00];
    let ip_len = (frame_len - 14) as u16;
    f.extend_from_slice(&[
        0x45,
        0,
        (ip_len >> 8) as u8,
        ip_len as u8,
        0,
        0,
        0x40,
        0,
        64,
        17,
        0,
        0,
    ]);
    f.extend_from_slice(&[10, 0, 1, src_host, 10, 0, 1, 4]);
    f.resize(frame_len, 0xab);
    f
}

fn dataplane(scheduler: Scheduler) -> Dataplane {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../p4/tm_basic.json");
    let text = std::fs::read_to_string(path).expect("p4/tm_basic.json");
    let mut dp = Dataplane::new(TmDefaults {
        rate_bps: 1e12,
        scheduler,
        ..TmDefaults::default()
    });
    for port in 1..=4 {
        dp.add_port(port, None).unwrap();
    }
    dp.set_program(Program::load(&text).unwrap());
    for cmd in [
        "table_add ipv4_lpm ipv4_forward 10.0.1.4/32 => 00:00:00:00:01:04 4",
        "table_add src_ip_prio set_priority 10.0.1.1/32 => 7 100000000000 7000",
        "table_add src_ip_prio set_priority 10.0.1.2/32 => 6 2500000 7000",
        "table_add src_ip_prio set_priority 10.0.1.3/32 => 5 2500000 7000",
    ] {
        execute(&mut dp, cmd).unwrap();
    }
    dp
}

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
                b.iter(|| {
                    now += 1_000;
                    for (i, f) in frames.iter().enumerate() {
                        let slot = dp.take_slot().expect("slot pool drained");
                        dp.slot_buf(slot)[..f.len()].copy_from_slice(f);
                        dp.ingress(slot, f.len(), 1 + (i % 3) as u32, now);
                    }
                    // drain in virtual time: the high class's shaper spaces its packets out
                    while let Some(t) = dp.next_deadline(now) {
                        now = t;
                        dp.service(now, &mut |_, frame| {
                            sent += frame.len() as u64;
                            true
                        });
                    }
                })
            });
            assert_eq!(dp.queued_pkts(), 0, "every frame must have left");
        }
    }
    group.finish();
}

criterion_group!(benches, bench_path);
criterion_main!(benches);

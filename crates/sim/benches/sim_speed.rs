//! Simulator speed in packet events (arrivals + departures) per second, on the repo's
//! 100 Gb/s latency scenario (three ports, nine flows, size mixes, Poisson sources).
//! Target: >= 5 million packet events per second.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn bench(c: &mut Criterion) {
    let path = format!(
        "{}/../../scenarios/hp_latency_100g.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).unwrap();
    let events = lanes_sim::run_toml(&text, None).unwrap()["stats"]["packet_events"]
        .as_u64()
        .unwrap();
    let mut g = c.benchmark_group("sim");
    g.throughput(Throughput::Elements(events));
    g.sample_size(10);
    g.bench_function("hp_latency_100g", |b| {
        b.iter(|| lanes_sim::run_toml(&text, None).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

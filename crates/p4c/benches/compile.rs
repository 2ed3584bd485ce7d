//! Compile time of the repo's programs: source read, preprocessed (with core.p4 and
//! v1model.p4), parsed, checked and lowered to bmv2 JSON and P4Info. Target: tm_basic.p4
//! under 100 ms.

use criterion::{criterion_group, criterion_main, Criterion};
use std::path::PathBuf;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("p4c");
    g.sample_size(20);
    for name in ["tm_basic", "nas_inband"] {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../p4/{name}.p4"));
        let opts = lanes_p4c::Options::default();
        g.bench_function(name, |b| {
            b.iter(|| lanes_p4c::compile_file(&path, &opts).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! ftree routing time on the thesis's 36-port fat trees (Paper II Fig. 7 sizes).
use criterion::{criterion_group, criterion_main, Criterion};
use lanes_fabric::{ftree, gen::Pgft};

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("ftree");
    g.sample_size(10);
    for name in ["18-2-1-half", "18-3-1-half", "18-3-1-full"] {
        let f = Pgft::named(name).unwrap().build().unwrap();
        g.bench_function(name, |b| b.iter(|| ftree::route(&f).unwrap()));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

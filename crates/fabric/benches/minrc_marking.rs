//! FTreeMinRC's marking (which switches must change their entry for a migrated VM's LID) on
//! vSwitch fat trees (36-port switches; 24-port for 12-4-1-half): one intra-leaf move, one to the next leaf and one
//! between the edges of the tree (first to last hypervisor, Paper V Table 3's worst case). Paper
//! V's 4-level tree (12-4-1-half: 6912 switches, 20736 hypervisors) fits the LID space only with
//! one VF per hypervisor and a VM on every 30th hypervisor.
use criterion::{criterion_group, criterion_main, Criterion};
use lanes_fabric::migrate::{migrate, Mode};
use lanes_fabric::topo::Topo;
use lanes_fabric::{gen::Pgft, minrc, vswitch};

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("minrc_marking");
    g.sample_size(10);
    let mut one_in_30 = vec![0; 30];
    one_in_30[0] = 1;
    for (name, vfs, vms) in [
        // 2 VFs per hypervisor, one VM each: the other VF is free for a LID copy.
        ("18-2-1-full", 2, vec![1]),
        ("18-3-1-half", 2, vec![1]),
        ("18-3-1-full", 2, vec![1]),
        // hv-0 holds a VM; hv-1, hv-19 and the last hypervisor (20735) have their VF free.
        ("12-4-1-half", 1, one_in_30),
    ] {
        let phys = Pgft::named(name).unwrap().build().unwrap();
        let last = format!("hv-{}", phys.num_hcas() - 1);
        let f = vswitch::expand(&phys, vfs, &vms).unwrap();
        let t = Topo::new(&f).unwrap();
        let (l, _) = vswitch::route(&f, &t, None).unwrap();
        for (scope, to) in [
            ("intra-leaf", "hv-1"),
            ("inter-leaf", "hv-19"),
            ("edges", last.as_str()),
        ] {
            let (moved, _, _) = migrate(&f, &l, "hv-0-vm-0", to, Mode::Copy).unwrap();
            let vm = moved.find("hv-0-vm-0").unwrap();
            let pf = moved.nodes[moved.find(&format!("{to}-pf")).unwrap() as usize].lid;
            g.bench_function(format!("{name}/{scope}"), |b| {
                b.iter(|| minrc::entries_to_keep(&moved, &l, vm, pf).unwrap())
            });
            // Marking alone, on the fat-tree view the SM already has (the one before the move).
            g.bench_function(format!("{name}/{scope}/on-known-view"), |b| {
                b.iter(|| minrc::entries_to_keep_in(&t, &moved, &l, vm, pf).unwrap())
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

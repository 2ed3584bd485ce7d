//! The migration simulator on a 4-ary-2-tree (16 hypervisors, 4 VFs): exact SMP counts that
//! follow from the tree's shape, and state carried from one move to the next.

use lanes_fabric::gen::Pgft;
use lanes_fabric::migplan::{Initial, Pattern};
use lanes_fabric::migrate::Mode;
use lanes_fabric::migsim::{simulate, SimOptions, State};
use lanes_fabric::model::Fabric;
use lanes_fabric::vswitch::HvLid;

fn tree() -> Fabric {
    Pgft::kary(4, 2).unwrap().build().unwrap()
}

fn opts(pattern: Pattern, initial: Initial, mode: Mode) -> SimOptions {
    SimOptions {
        vfs: 4,
        population: 0.25,
        initial,
        pattern,
        migrations: None,
        mode,
        rebalance_every: 0,
        snapshot_percent: 50.0,
        bisect_runs: 20,
        seed: 5,
        progress: false,
        hv_lid: HvLid::Own,
    }
}

#[test]
fn consolidation_with_minimal_copy_costs_six_smps_per_move() {
    // One VM per hypervisor; consolidation fills hv-0..hv-3 (leaf s1-0) with the 12 VMs of the
    // other three leaves. Each move changes, for that VM's LID, the 4 roots (down to the old leaf
    // before, to s1-0 now), the old leaf (down before, up now) and s1-0 (up before, down now);
    // the other two leaves keep their up entries. The two hypervisors' tables take one each.
    let r = simulate(
        &tree(),
        &opts(Pattern::Consolidate, Initial::Uniform, Mode::MinCopy),
    )
    .unwrap();
    assert_eq!((r.hypervisors, r.vms, r.migrations), (16, 16, 12));
    assert_eq!(r.intra_leaf, 0);
    for s in &r.steps {
        assert_eq!(
            (s.smps, s.switches_updated, s.vswitch_smps),
            (6, 6, 2),
            "{s:?}"
        );
        assert!(s.to == "hv-0" || s.to == "hv-1" || s.to == "hv-2" || s.to == "hv-3");
    }
    assert_eq!(r.steps[0].from, "hv-15");
    assert_eq!((r.smps_total, r.steps[11].cumulative_smps), (72, 72));
    // The plain copy sends at most one SMP per physical switch (8) and never fewer than min-copy.
    let c = simulate(
        &tree(),
        &opts(Pattern::Consolidate, Initial::Uniform, Mode::Copy),
    )
    .unwrap();
    assert_eq!(c.migrations, 12);
    assert!(c.steps.iter().all(|s| (6..=8).contains(&s.smps)), "{c:?}");
    // Every snapshot is deadlock free with every node reachable; at the start the tables in place
    // are the fresh routing, so a re-balance would send nothing and the quality is the same.
    for rr in [&r, &c] {
        assert_eq!(
            rr.snapshots.iter().map(|s| s.step).collect::<Vec<_>>(),
            [0, 6, 12]
        );
        assert!(rr
            .snapshots
            .iter()
            .all(|s| s.deadlock_free && s.unreachable == 0));
        let s0 = &rr.snapshots[0];
        assert_eq!((s0.rebalance_smps, &s0.current), (0, &s0.rebalanced));
    }
}

#[test]
fn a_vm_moved_away_and_back_inside_its_leaf_restores_the_tables() {
    let mut st = State::new(&tree(), 4, &[1; 16], HvLid::Own).unwrap();
    let original = st.lfts.clone();
    let m = st.migrate("hv-0-vm-0", "hv-1", Mode::MinCopy).unwrap();
    assert_eq!((m.smps, m.vswitch_smps), (1, 2));
    assert_ne!(st.lfts, original);
    let m = st.migrate("hv-0-vm-0", "hv-0", Mode::MinCopy).unwrap();
    assert_eq!((m.smps, m.vswitch_smps), (1, 2));
    assert_eq!(st.lfts, original);
    // Across leaves and back: the roots, both leaves of the first move and the other two leaves
    // are as they were; only the visited leaf s1-1 may keep the PF's up port for the VM's LID.
    let lid = st.fabric.nodes[st.fabric.find("hv-0-vm-0").unwrap() as usize].lid;
    st.migrate("hv-0-vm-0", "hv-4", Mode::MinCopy).unwrap();
    st.migrate("hv-0-vm-0", "hv-0", Mode::MinCopy).unwrap();
    for (a, b) in original.switches.iter().zip(&st.lfts.switches) {
        if a.name != "s1-1" && a.name != "hv-4" {
            assert_eq!(a.port(lid), b.port(lid), "{}", a.name);
        }
    }
}

#[test]
fn re_balancing_every_move_keeps_the_fresh_routing_and_seeds_repeat() {
    let mut o = opts(Pattern::Random, Initial::Random, Mode::MinCopy);
    o.migrations = Some(10);
    o.rebalance_every = 1;
    let r = simulate(&tree(), &o).unwrap();
    assert_eq!((r.migrations, r.rebalances), (10, 10));
    for s in &r.snapshots {
        assert_eq!(s.rebalance_smps, 0);
        assert_eq!(s.current, s.rebalanced);
    }
    let last = r.steps.last().unwrap();
    assert_eq!(last.cumulative_smps, r.smps_total + r.rebalance_smps_total);
    // Everything but the marking time repeats with the seed.
    let untimed = |r: &lanes_fabric::migsim::SimResult| {
        let mut v = r.steps.clone();
        v.iter_mut().for_each(|s| s.marking_ms = 0.0);
        v
    };
    let again = simulate(&tree(), &o).unwrap();
    assert_eq!(untimed(&r), untimed(&again));
    assert_eq!(r.snapshots, again.snapshots);
    o.seed = 6;
    let other = simulate(&tree(), &o).unwrap();
    assert_ne!(untimed(&r), untimed(&other));
}

#[test]
fn hypervisors_sharing_the_pf_lid_use_table_one_counts() {
    // Paper II: LIDs = switches + hypervisors x (1 + VFs) with prepopulated VFs; lanes's own
    // scheme adds one LID per hypervisor. 4-ary-2-tree: 8 switches, 16 hypervisors, 4 VFs.
    let full = [4u32; 16];
    for (scheme, lids) in [(HvLid::SharedWithPf, 8 + 16 * 5), (HvLid::Own, 8 + 16 * 6)] {
        let st = State::new(&tree(), 4, &full, scheme).unwrap();
        assert_eq!(st.fabric.num_lids(), lids, "{scheme:?}");
        assert_eq!(st.fabric.max_lid() as usize, lids, "dense LIDs");
    }
    // 18-2-1-half with 16 VFs: 36 + 324 x 17 = 5544 LIDs shared, 5868 own.
    let phys = Pgft::named("18-2-1-half").unwrap().build().unwrap();
    let g = lanes_fabric::vswitch::expand_with(&phys, 16, &[], HvLid::SharedWithPf).unwrap();
    assert_eq!(g.num_lids(), 36 + 324 * 17);
    // Routed, checked and migrated with shared LIDs: the hypervisor's entry for its LID is the
    // PF's port, and min-copy still costs 6 SMPs across leaves.
    let mut st = State::new(&tree(), 4, &[1; 16], HvLid::SharedWithPf).unwrap();
    let f = &st.fabric;
    let hv = &f.nodes[f.find("hv-3").unwrap() as usize];
    let pf = &f.nodes[f.find("hv-3-pf").unwrap() as usize];
    assert_eq!(hv.lid, pf.lid);
    let t = lanes_fabric::topo::Topo::new(f).unwrap();
    let r = lanes_fabric::check::check(f, &t, &st.lfts).unwrap();
    assert!(r.deadlock_free && r.unreachable == 0, "{r:?}");
    let sw = st.lfts.switches.iter().find(|s| s.name == "hv-3").unwrap();
    assert_eq!(sw.port(hv.lid), lanes_fabric::vswitch::PF_PORT);
    let m = st.migrate("hv-0-vm-0", "hv-15", Mode::MinCopy).unwrap();
    assert_eq!((m.smps, m.vswitch_smps), (6, 2));
}

#[test]
fn marking_on_the_view_before_the_moves_gives_the_same_tables() {
    // The simulator marks on the fat-tree view it built once; a fresh view of every new fabric
    // must give the same tables, move after move (random moves, 50 % of 4 VFs, 4-ary-3-tree).
    let phys = Pgft::kary(4, 3).unwrap().build().unwrap();
    let counts: Vec<u32> = (0..64).map(|i| (i % 4) as u32 + 1).collect();
    let mut st = State::new(&phys, 4, &counts, HvLid::Own).unwrap();
    let (mut f, mut l) = (st.fabric.clone(), st.lfts.clone());
    let mut rng = lanes_fabric::patterns::Rng::new(11);
    let vms: Vec<String> = counts
        .iter()
        .enumerate()
        .flat_map(|(h, &c)| (0..c).map(move |j| format!("hv-{h}-vm-{j}")))
        .collect();
    let mut moved = 0;
    while moved < 40 {
        let vm = &vms[rng.below(vms.len())];
        let to = format!("hv-{}", rng.below(64));
        let Ok(m) = st.migrate(vm, &to, Mode::MinCopy) else {
            continue; // full or the same hypervisor
        };
        let (g, n, m2) = lanes_fabric::migrate::migrate(&f, &l, vm, &to, Mode::MinCopy).unwrap();
        assert_eq!((m.smps, m.vswitch_smps), (m2.smps, m2.vswitch_smps));
        assert_eq!(n, st.lfts);
        (f, l) = (g, n);
        moved += 1;
    }
}

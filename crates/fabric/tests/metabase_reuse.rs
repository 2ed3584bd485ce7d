//! The metabase (mfattree's phase I) saved to a file and read back: phase II alone gives exactly
//! the tables of a full run, and a metabase of another topology is refused.

use lanes_fabric::api;
use lanes_fabric::ftree::port_order_slots;
use lanes_fabric::gen::Pgft;
use lanes_fabric::metabase::Metabase;
use lanes_fabric::netlist;
use lanes_fabric::topo::Topo;
use serde_json::{json, Value};

#[test]
fn bytes_round_trip_and_phase_two_equals_a_full_run() {
    let f = Pgft::new(vec![4, 2, 3], vec![1, 2, 2], vec![1, 2, 1])
        .unwrap()
        .build()
        .unwrap();
    let t = Topo::new(&f).unwrap();
    let mb = Metabase::build(&f, &t);
    let back = Metabase::from_bytes(&mb.to_bytes(&f, &t), &f, &t).unwrap();
    assert_eq!(
        (back.nsw, back.per_leaf, &back.data),
        (mb.nsw, mb.per_leaf, &mb.data)
    );
    let slots = port_order_slots(&t);
    assert_eq!(
        back.assign(&f, &t, &slots, "x").0,
        mb.assign(&f, &t, &slots, "x").0
    );
    // Another tree, or a damaged file, is refused with one line.
    let g = Pgft::kary(4, 2).unwrap().build().unwrap();
    let tg = Topo::new(&g).unwrap();
    let e = Metabase::from_bytes(&mb.to_bytes(&f, &t), &g, &tg)
        .unwrap_err()
        .0;
    assert!(e.contains("another topology") && !e.contains('\n'), "{e}");
    assert!(Metabase::from_bytes(b"LANESMB1", &f, &t).is_err());
}

#[test]
fn route_with_a_saved_metabase_writes_the_same_tables() {
    let dir = std::env::temp_dir().join(format!("lanes-mb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = |n: &str| dir.join(n).to_string_lossy().into_owned();
    let f = Pgft::kary(4, 3).unwrap().build().unwrap();
    std::fs::write(p("t.net"), netlist::write(&f)).unwrap();
    // A node order (SlimUpdate by node order): ranks reversed.
    let order: Vec<String> = (0..64).rev().map(|i| format!("h-{i}")).collect();
    let full = json!({"metabase_out": p("t.mb"), "order": order, "check": false});
    let v: Value = serde_json::from_str(
        &api::route(&p("t.net"), "mfattree", &p("full.dump"), &full.to_string()).unwrap(),
    )
    .unwrap();
    assert!(v["metabase_build_seconds"].is_number());
    let reuse = json!({"metabase_in": p("t.mb"), "order": order});
    let v: Value = serde_json::from_str(
        &api::route(
            &p("t.net"),
            "mfattree",
            &p("reuse.dump"),
            &reuse.to_string(),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(v["phase_ii_only"], true);
    assert_eq!(v["check"]["deadlock_free"], true);
    let a = std::fs::read_to_string(p("full.dump")).unwrap();
    let b = std::fs::read_to_string(p("reuse.dump")).unwrap();
    assert!(a.len() > 1000 && a == b);
    // Without an order as well; and not with another engine.
    let plain = api::route(&p("t.net"), "mfattree", &p("a.dump"), "{}").unwrap();
    let again = json!({"metabase_in": p("t.mb")}).to_string();
    api::route(&p("t.net"), "mfattree", &p("b.dump"), &again).unwrap();
    assert!(plain.contains("mfattree"));
    assert_eq!(
        std::fs::read_to_string(p("a.dump")).unwrap(),
        std::fs::read_to_string(p("b.dump")).unwrap()
    );
    let e = api::route(&p("t.net"), "ftree", &p("c.dump"), &again)
        .unwrap_err()
        .0;
    assert!(e.contains("mfattree"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn shared_paths_on_an_oversubscribed_tree() {
    // XGFT(2;8,4;1,4): 8 nodes per leaf over 4 up links: 4 disjoint paths, two nodes each.
    let f = Pgft::xgft(vec![8, 4], vec![1, 4]).unwrap().build().unwrap();
    let t = Topo::new(&f).unwrap();
    assert_eq!(Metabase::disjoint_paths(&t), 4);
    let mb = Metabase::build_paths(&f, &t, 4);
    assert_eq!(mb.data.len(), t.leaves.len() * 4 * t.num_switches());
    let (l, _) = mb.assign(&f, &t, &port_order_slots(&t), "mfattree");
    let r = lanes_fabric::check::check(&f, &t, &l).unwrap();
    assert!(r.deadlock_free && r.unreachable == 0, "{r:?}");
    // h-0 and h-4 (slots 0 and 4 of leaf s1-0) share one path outside their leaf.
    let lid = |n: &str| f.nodes[f.find(n).unwrap() as usize].lid;
    for s in &l.switches {
        if s.name != "s1-0" {
            assert_eq!(s.port(lid("h-0")), s.port(lid("h-4")), "{}", s.name);
        }
    }
    let back = Metabase::from_bytes(&mb.to_bytes(&f, &t), &f, &t).unwrap();
    assert_eq!(back.per_leaf, 4);
}

//! `random(dst, lo, hi)` (bmv2's `modify_field_rng_uniform`): values in [lo, hi], every value of
//! a small range drawn about as often (the generator has a fixed seed: this is repeatable).

use lanes_p4::testprog::{action, field, frame, hex, keyless, load, skeleton};
use serde_json::json;

fn draws(lo: u64, hi: u64, n: usize) -> Vec<u64> {
    let mut j = skeleton(json!([["r", 16, false]]));
    j["actions"] = json!([action(
        0,
        "a",
        json!([]),
        vec![
            json!({"op": "modify_field_rng_uniform", "parameters": [field("scalars", "r"), hex(lo), hex(hi)]})
        ]
    )]);
    j["pipelines"][0] = json!({"name": "ingress", "id": 0, "init_table": "ti", "conditionals": [],
        "tables": [keyless("ti", 0, &[(0, "a")], 0)]});
    let mut p = load(&j);
    let r = p.field("scalars", "r").unwrap();
    let mut st = p.new_state();
    let pkt = frame(0x0800, &[0; 46]);
    (0..n)
        .map(|_| {
            p.ingress(&mut st, &pkt, 1, 0);
            st.field(r)
        })
        .collect()
}

#[test]
fn random_values_fall_in_the_range_and_cover_it() {
    let v = draws(10, 13, 4000);
    let mut count = [0usize; 4];
    for x in &v {
        assert!((10..=13).contains(x), "{x}");
        count[(*x - 10) as usize] += 1;
    }
    // 1000 expected each; a fair generator stays well within +-15 %
    assert!(count.iter().all(|c| (850..=1150).contains(c)), "{count:?}");
    // an empty or reversed range gives lo; the field keeps its width
    assert!(draws(7, 7, 10).iter().all(|x| *x == 7));
    assert!(draws(9, 3, 10).iter().all(|x| *x == 9));
    assert!(draws(0, 0xffff_ffff, 50).iter().all(|x| *x <= 0xffff));
}

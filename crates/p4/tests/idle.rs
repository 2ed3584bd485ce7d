//! Idle timeouts: a hit restarts an entry's idle time; an entry idle past its timeout is
//! reported once, and again only after another hit; tables without `support_timeout` refuse
//! timeouts and keep no hit times.

use lanes_p4::testprog::{action, assign, field, frame, load};
use lanes_p4::{EntryHandle, MatchKey, Program, TableId};
use serde_json::json;

fn program(support_timeout: bool) -> Program {
    let mut j = lanes_p4::testprog::skeleton(json!([]));
    j["actions"] = json!([action(
        0,
        "fwd",
        json!([]),
        vec![assign(
            field("standard_metadata", "egress_spec"),
            json!({"type": "hexstr", "value": "0x2"})
        )]
    )]);
    j["pipelines"][0] = json!({"name": "ingress", "id": 0, "init_table": "t", "conditionals": [],
        "tables": [{"name": "t", "id": 0, "type": "simple", "max_size": 16,
            "support_timeout": support_timeout,
            "key": [{"match_type": "exact", "target": ["ethernet", "etherType"]}],
            "action_ids": [0], "actions": ["fwd"], "next_tables": {"fwd": null},
            "base_default_next": null}]});
    load(&j)
}

fn entry(p: &mut Program, ethertype: u16) -> (TableId, EntryHandle) {
    let t = p.table_id("t").unwrap();
    let a = p.action_id(t, "fwd").unwrap();
    let k = vec![MatchKey::Exact(ethertype.to_be_bytes().to_vec())];
    (t, p.add_entry(t, k, a, vec![], 0).unwrap())
}

fn hit(p: &mut Program, ethertype: u16, now: u64) {
    let mut st = p.new_state();
    p.ingress(&mut st, &frame(ethertype, &[0; 46]), 1, now);
}

#[test]
fn idle_entries_are_reported_once_per_idle_period() {
    let mut p = program(true);
    let (t, h) = entry(&mut p, 0x0800);
    let (_, other) = entry(&mut p, 0x86dd); // no timeout: never reported
    p.set_entry_ttl(t, h, Some(1_000), 0).unwrap();
    hit(&mut p, 0x0800, 500);
    assert_eq!(p.entry_life(t, h, 1_200).unwrap(), Some((700, Some(1_000))));
    assert!(p.take_idle(1_200).is_empty());
    assert_eq!(p.take_idle(1_600), vec![(t, h)]);
    assert!(p.take_idle(2_000).is_empty(), "reported once");
    hit(&mut p, 0x0800, 2_500);
    assert!(p.take_idle(3_400).is_empty());
    assert_eq!(p.take_idle(3_600), vec![(t, h)], "idle again after a hit");
    assert_eq!(p.entry_life(t, other, 9_000).unwrap(), Some((9_000, None)));
    // a new timeout restarts the idle time
    p.set_entry_ttl(t, h, Some(100), 10_000).unwrap();
    assert!(p.take_idle(10_050).is_empty());
    assert_eq!(p.take_idle(10_100), vec![(t, h)]);
    p.set_entry_ttl(t, h, None, 10_200).unwrap();
    assert!(p.take_idle(99_999).is_empty());
}

#[test]
fn tables_without_support_timeout_refuse_timeouts() {
    let mut p = program(false);
    let (t, h) = entry(&mut p, 0x0800);
    let e = p.set_entry_ttl(t, h, Some(1), 0).unwrap_err().to_string();
    assert!(e.contains("does not support idle timeouts"), "{e}");
    assert_eq!(p.entry_life(t, h, 5).unwrap(), None);
    hit(&mut p, 0x0800, 5);
    assert!(p.take_idle(1 << 40).is_empty());
}

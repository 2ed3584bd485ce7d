//! The control-API additions the P4Runtime server uses (p4rt_test.json): entry lookup by key,
//! single-entry reads, const default actions, meter reads and resets.

use lanes_p4::{ApiError, EntryHandle, MatchKey, MeterRates, Program};

fn load() -> Program {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../p4/p4rt_test.json");
    Program::load(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn acl_key(etype: u16, lo: u8, hi: u8) -> Vec<MatchKey> {
    vec![
        MatchKey::Ternary(etype.to_be_bytes().to_vec(), vec![0xff, 0xff]),
        MatchKey::Range(vec![lo], vec![hi]),
    ]
}

#[test]
fn find_entry_by_key_and_priority() {
    let mut p = load();
    let t = p.table_id("MyIngress.acl").unwrap();
    let a = p.action_id(t, "MyIngress.set_port").unwrap();
    let h10 = p
        .add_entry(t, acl_key(0x0800, 1, 3), a, vec![vec![2]], 10)
        .unwrap();
    let h20 = p
        .add_entry(t, acl_key(0x0800, 1, 3), a, vec![vec![3]], 20)
        .unwrap();
    // same key, priority tells them apart; leading zeros do not matter
    let probe = vec![
        MatchKey::Ternary(vec![0, 0x08, 0x00], vec![0xff, 0xff]),
        MatchKey::Range(vec![0, 1], vec![3]),
    ];
    assert_eq!(p.find_entry(t, &probe, 20), Ok(h20));
    assert_eq!(p.find_entry(t, &probe, 10), Ok(h10));
    assert_eq!(p.find_entry(t, &probe, 30), Err(ApiError::NoEntry));
    let v = p.entry_view(t, h20).unwrap();
    assert_eq!((v.priority, v.params.clone()), (20, vec![vec![0u8, 3]]));
    assert!(p.entry_view(t, EntryHandle(99)).is_err());
}

#[test]
fn const_defaults_and_meters() {
    let mut p = load();
    let stats = p.table_id("tbl_port_stats").unwrap();
    let acl = p.table_id("MyIngress.acl").unwrap();
    assert!(p.default_is_const(stats).unwrap());
    assert!(!p.default_is_const(acl).unwrap());
    assert!(p.meter_counts_packets("MyIngress.port_meter").unwrap());
    assert!(!p.meter_counts_packets("MyIngress.acl_meter").unwrap());
    let r = MeterRates {
        cir: 100.0,
        cbs: 10,
        pir: 200.0,
        pbs: 20,
    };
    p.meter_set("MyIngress.port_meter", 3, r).unwrap();
    assert_eq!(p.meter_get("MyIngress.port_meter", 3).unwrap(), Some(r));
    p.meter_reset("MyIngress.port_meter", 3).unwrap();
    assert_eq!(p.meter_get("MyIngress.port_meter", 3).unwrap(), None);
    assert!(p.meter_reset("MyIngress.port_meter", 512).is_err());
    let a = p.action_id(acl, "MyIngress.drop").unwrap();
    let h = p
        .add_entry(acl, acl_key(0x88b5, 0, 9), a, vec![], 1)
        .unwrap();
    assert_eq!(p.direct_meter_get(acl, h).unwrap(), None);
    p.direct_meter_set(acl, h, r).unwrap();
    assert_eq!(p.direct_meter_get(acl, h).unwrap(), Some(r));
    p.direct_meter_reset(acl, h).unwrap();
    assert_eq!(p.direct_meter_get(acl, h).unwrap(), None);
}

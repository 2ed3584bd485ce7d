//! One typed table write (`Program::apply_write`) on p4rt_test.json: an insert with its idle
//! timeout in the same write, modify, delete and direct counter writes by key, defaults, the
//! direct counter and meter rule, and the errors each route maps to its codes.

use lanes_p4::{
    ActionId, ApiError, CounterValue, FieldMatch, KeyRules, MatchKey, MeterRates, Program, TableId,
    TableWrite, WriteKind,
};

/// p4rt_test.json with l2_fwd given a direct counter, and idle timeouts if asked.
fn load(timeouts: bool) -> Program {
    load_with(|l2| {
        l2["with_counters"] = true.into();
        l2["support_timeout"] = timeouts.into();
    })
}

/// p4rt_test.json with l2_fwd's JSON changed by `edit`.
fn load_with(edit: impl Fn(&mut serde_json::Value)) -> Program {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../p4/p4rt_test.json");
    let mut j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for t in j["pipelines"][0]["tables"].as_array_mut().unwrap() {
        if t["name"] == "MyIngress.l2_fwd" {
            edit(t);
        }
    }
    Program::load(&j.to_string()).unwrap()
}

fn l2(p: &Program) -> (TableId, ActionId) {
    let t = p.table_id("MyIngress.l2_fwd").unwrap();
    (t, p.action_id(t, "MyIngress.set_port").unwrap())
}

fn write(kind: WriteKind, t: TableId, mac: u64, action: Option<(ActionId, u8)>) -> TableWrite {
    TableWrite {
        keys: vec![FieldMatch {
            field: 0,
            key: MatchKey::Exact(mac.to_be_bytes()[2..].to_vec()),
        }],
        action: action.map(|(a, port)| (a, vec![vec![port]])),
        ..TableWrite::new(kind, t)
    }
}

#[test]
fn insert_modify_delete_by_key() {
    let mut p = load(false);
    let (t, a) = l2(&p);
    let h = p
        .apply_write(&write(WriteKind::Insert, t, 7, Some((a, 1))), 0)
        .unwrap()
        .unwrap();
    p.apply_write(&write(WriteKind::Modify, t, 7, Some((a, 4))), 0)
        .unwrap();
    assert_eq!(p.entry_view(t, h).unwrap().params, vec![vec![0, 4]]); // 9 bits: two bytes
    let dup = p.apply_write(&write(WriteKind::Insert, t, 7, Some((a, 1))), 0);
    assert_eq!(dup, Err(ApiError::DuplicateEntry));
    let mut counter = write(WriteKind::DirectCounter, t, 7, None);
    counter.counter = Some(CounterValue {
        packets: 3,
        bytes: 300,
    });
    assert_eq!(p.apply_write(&counter, 0), Ok(Some(h)));
    assert_eq!(p.entry_view(t, h).unwrap().counter.bytes, 300);
    assert_eq!(
        p.apply_write(&write(WriteKind::Delete, t, 7, None), 0),
        Ok(Some(h))
    );
    assert_eq!(
        p.apply_write(&write(WriteKind::Delete, t, 7, None), 0),
        Err(ApiError::NoEntry)
    );
    assert_eq!(p.entry_count(t).unwrap(), 0);
}

#[test]
fn the_controller_metadata_lives_and_dies_with_its_entry() {
    let mut p = load(false);
    let (t, a) = l2(&p);
    let with = |kind, port, m: Option<&[u8]>| TableWrite {
        metadata: m.map(<[u8]>::to_vec),
        ..write(kind, t, 7, Some((a, port)))
    };
    let h = p
        .apply_write(&with(WriteKind::Insert, 1, Some(b"one")), 0)
        .unwrap()
        .unwrap();
    assert_eq!(p.entry_view(t, h).unwrap().metadata, b"one");
    // a modify that says nothing of it (Thrift) keeps it; one that gives it replaces it
    p.apply_write(&with(WriteKind::Modify, 2, None), 0).unwrap();
    assert_eq!(p.entry_view(t, h).unwrap().metadata, b"one");
    p.apply_write(&with(WriteKind::Modify, 3, Some(b"two")), 0)
        .unwrap();
    assert_eq!(p.entry_view(t, h).unwrap().metadata, b"two");
    // deleted and added again with no metadata: the reused handle has none
    p.apply_write(&write(WriteKind::Delete, t, 7, None), 0)
        .unwrap();
    let again = p
        .apply_write(&with(WriteKind::Insert, 1, None), 0)
        .unwrap()
        .unwrap();
    assert_eq!(again, h);
    assert!(p.entry_view(t, h).unwrap().metadata.is_empty());
}

#[test]
fn the_idle_timeout_is_set_by_the_write_itself() {
    let mut p = load(true);
    let (t, a) = l2(&p);
    let mut w = write(WriteKind::Insert, t, 9, Some((a, 1)));
    w.idle_timeout_ns = Some(5_000);
    let h = p.apply_write(&w, 1_000).unwrap().unwrap();
    assert_eq!(
        p.entry_life(t, h, 3_000).unwrap(),
        Some((2_000, Some(5_000)))
    );
    assert_eq!(p.take_idle(6_000), vec![(t, h)]);
    // 0: the entry never ages
    let mut m = write(WriteKind::Modify, t, 9, Some((a, 2)));
    m.idle_timeout_ns = Some(0);
    p.apply_write(&m, 7_000).unwrap();
    assert_eq!(p.entry_life(t, h, 9_000).unwrap(), Some((2_000, None)));
    // a table without timeouts refuses one and changes nothing
    let mut p = load(false);
    let (t, a) = l2(&p);
    let mut w = write(WriteKind::Insert, t, 9, Some((a, 1)));
    w.idle_timeout_ns = Some(5_000);
    let e = p.apply_write(&w, 0).unwrap_err();
    assert_eq!(
        e.to_string(),
        "table MyIngress.l2_fwd does not support idle timeouts"
    );
    assert_eq!(p.entry_count(t).unwrap(), 0);
}

#[test]
fn p4runtime_rules_refuse_what_bmv2_rules_take() {
    let mut p = load(false);
    let (t, a) = l2(&p);
    let mut w = write(WriteKind::Insert, t, 9, Some((a, 1)));
    w.priority = 5;
    let e = p.apply_write(&w, 0).unwrap_err();
    assert!(matches!(e, ApiError::BadKey(_)), "{e:?}");
    assert_eq!(p.entry_count(t).unwrap(), 0);
    w.rules = KeyRules::Bmv2;
    p.apply_write(&w, 0).unwrap();
    assert_eq!(p.entry_count(t).unwrap(), 1);
}

#[test]
fn a_const_default_refuses_another_action() {
    let mut p = load(false);
    let t = p.table_id("MyIngress.l2_fwd").unwrap();
    let drop = p.action_id(t, "MyIngress.drop").unwrap();
    let mut w = TableWrite::new(WriteKind::SetDefault, t);
    w.action = Some((drop, vec![]));
    p.apply_write(&w, 0).unwrap();
    assert_eq!(p.default_entry(t).unwrap(), Some((drop, vec![])));
    // the default entry takes no key
    w.priority = 1;
    assert!(matches!(p.apply_write(&w, 0), Err(ApiError::Invalid(_))));
}

#[test]
fn a_table_without_a_direct_counter_or_meter_refuses_them_before_anything_changes() {
    let mut p = load_with(|_| {});
    let (t, a) = l2(&p);
    let h = p
        .apply_write(&write(WriteKind::Insert, t, 7, Some((a, 1))), 0)
        .unwrap()
        .unwrap();
    let no_counter = ApiError::NoDirectCounter("MyIngress.l2_fwd".into());
    let no_meter = ApiError::NoDirectMeter("MyIngress.l2_fwd".into());
    // by key (P4Runtime): also for a key with no entry, which would otherwise be NOT_FOUND
    for mac in [7, 8] {
        let w = write(WriteKind::DirectCounter, t, mac, None);
        assert_eq!(p.apply_write(&w, 0), Err(no_counter.clone()));
        let w = write(WriteKind::DirectMeter, t, mac, None);
        assert_eq!(p.apply_write(&w, 0), Err(no_meter.clone()));
    }
    // an insert carrying counter data adds nothing
    let mut w = write(WriteKind::Insert, t, 9, Some((a, 1)));
    w.counter = Some(CounterValue::default());
    assert_eq!(p.apply_write(&w, 0), Err(no_counter.clone()));
    assert_eq!(p.entry_count(t).unwrap(), 1);
    // by handle (bmv2's Thrift API, `lanes ctl`)
    assert_eq!(p.direct_counter_read(t, h).err(), Some(no_counter.clone()));
    assert_eq!(p.direct_counters_reset(t).err(), Some(no_counter));
    assert_eq!(p.direct_meter_get(t, h).err(), Some(no_meter.clone()));
    assert_eq!(p.direct_meter_reset(t, h).err(), Some(no_meter));
    // and where the table has them, by handle as by key
    let mut p = load(false);
    let h = p
        .apply_write(&write(WriteKind::Insert, t, 7, Some((a, 1))), 0)
        .unwrap()
        .unwrap();
    let c = CounterValue {
        packets: 2,
        bytes: 128,
    };
    p.direct_counter_write(t, h, c).unwrap();
    assert_eq!(p.direct_counter_read(t, h), Ok(c));
    p.direct_counters_reset(t).unwrap();
    assert_eq!(p.direct_counter_read(t, h), Ok(CounterValue::default()));
}

#[test]
fn p4runtime_refuses_any_entry_write_to_a_const_table_before_its_key_is_looked_up() {
    // a table the program gives entries of its own (`const entries`) takes no others
    let mut p = load_with(|l2| {
        l2["entries"] = serde_json::json!([{
            "match_key": [{"match_type": "exact", "key": "0x000000000001"}],
            "action_entry": {"action_id": 3, "action_data": []},
            "priority": 1
        }]);
    });
    let (t, a) = l2(&p);
    let refused = ApiError::ConstTable("MyIngress.l2_fwd".into());
    for kind in [WriteKind::Insert, WriteKind::Modify, WriteKind::Delete] {
        // no entry has this key: without the rule a modify or delete would be NOT_FOUND
        let e = p.apply_write(&write(kind, t, 7, Some((a, 1))), 0);
        assert_eq!(e, Err(refused.clone()));
    }
    // bmv2's routes: an insert is refused too (by the table), with bmv2's code
    let mut w = write(WriteKind::Insert, t, 7, Some((a, 1)));
    w.rules = KeyRules::Bmv2;
    assert_eq!(p.apply_write(&w, 0), Err(refused.clone()));
    assert_eq!(refused.grpc_code(), 7); // PERMISSION_DENIED
    assert_eq!(p.entry_count(t).unwrap(), 1);
}

#[test]
fn meter_rates_are_checked_once_for_every_route_before_anything_changes() {
    let rates = |cir: f64, pir: f64| MeterRates {
        cir,
        cbs: 10,
        pir,
        pbs: 20,
    };
    let negative = ApiError::BadMeterRates("a rate is negative".into());
    let above = ApiError::BadMeterRates("the committed rate is above the peak rate".into());
    // bmv2's INVALID_METER_OPERATION on the Thrift table calls
    assert_eq!(negative.thrift_code(), 19);
    // an indexed meter (P4Runtime MeterEntry, Thrift bm_meter_set_rates, `lanes ctl`)
    let mut p = load(false);
    let m = "MyIngress.port_meter";
    assert_eq!(p.meter_set(m, 3, rates(-1.0, 5.0)), Err(negative.clone()));
    assert_eq!(
        p.meter_set(m, 3, rates(1.0, f64::NAN)),
        Err(negative.clone())
    );
    assert_eq!(p.meter_set(m, 3, rates(6.0, 5.0)), Err(above.clone()));
    assert_eq!(p.meter_get(m, 3), Ok(None));
    p.meter_set(m, 3, rates(5.0, 5.0)).unwrap();
    // a direct meter, by key in the write itself: refused before the entry goes in
    let mut p = load_with(|l2| l2["direct_meters"] = "MyIngress.acl_meter".into());
    let (t, a) = l2(&p);
    let mut w = write(WriteKind::Insert, t, 7, Some((a, 1)));
    w.meter = Some(rates(6.0, 5.0));
    assert_eq!(p.apply_write(&w, 0), Err(above));
    assert_eq!(p.entry_count(t).unwrap(), 0);
    w.meter = Some(rates(1.0, 5.0));
    let h = p.apply_write(&w, 0).unwrap().unwrap();
    // and by handle (Thrift bm_mt_set_meter_rates)
    assert_eq!(p.direct_meter_set(t, h, rates(-2.0, 5.0)), Err(negative));
    assert_eq!(p.direct_meter_get(t, h), Ok(Some(rates(1.0, 5.0))));
}

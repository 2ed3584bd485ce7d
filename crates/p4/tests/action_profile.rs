//! Action profiles and selectors (indirect and indirect_ws tables) with bmv2's semantics:
//! members shared by entries, a group's member chosen as `members[hash % count]` in ascending
//! handle order, an empty group run as a miss, members and groups in use kept.

use lanes_p4::testprog::{load, load_err, profile_program as program};
use lanes_p4::{ApiError, MatchKey, ProfileRef, Program};
use serde_json::json;

fn frame(ethertype: u16, src_low: u8) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, src_low];
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(&[0; 46]);
    f
}

/// The egress port a frame gets, None if dropped.
fn port(p: &mut Program, ethertype: u16, src_low: u8) -> Option<u32> {
    let mut st = p.new_state();
    let ig = p.ingress(&mut st, &frame(ethertype, src_low), 1, 0);
    ig.drop.is_none().then_some(ig.egress_spec)
}

fn key(ethertype: u16) -> Vec<MatchKey> {
    vec![MatchKey::Exact(ethertype.to_be_bytes().to_vec())]
}

#[test]
fn selector_picks_member_at_hash_mod_count_in_handle_order() {
    let mut p = load(&program(true));
    let ap = p.profile_id("ap").unwrap();
    let fwd = p.profile_action_id(ap, "fwd").unwrap();
    // members 0..5 forward to ports 10..15
    for i in 0..5u8 {
        assert_eq!(
            p.add_member(ap, None, fwd, &[vec![10 + i]]).unwrap(),
            u32::from(i)
        );
    }
    let g = p.create_group(ap, None, 0).unwrap();
    let t = p.table_id("t").unwrap();
    p.add_indirect_entry(t, key(0x0800), ProfileRef::Group(g), 0)
        .unwrap();
    // the four member lists and the choices bmv2 makes for srcAddr 0..14
    for members in [
        vec![0, 1, 2],
        vec![0, 1, 2, 3],
        vec![0, 1, 2, 3, 4],
        vec![4, 0, 2],
    ] {
        let list: Vec<(u32, u32)> = members.iter().map(|m| (*m, 1)).collect();
        p.set_group_members(ap, g, &list).unwrap();
        let mut sorted = members.clone();
        sorted.sort_unstable();
        for src in 0..15u8 {
            let want = sorted[usize::from(src) % sorted.len()];
            assert_eq!(
                port(&mut p, 0x0800, src),
                Some(10 + want),
                "{members:?} src {src}"
            );
        }
    }
    // a weight of 2 takes two of the three slots
    p.set_group_members(ap, g, &[(1, 2), (3, 1)]).unwrap();
    let ports: Vec<_> = (0..6u8).map(|s| port(&mut p, 0x0800, s)).collect();
    assert_eq!(
        ports,
        [11, 11, 13, 11, 11, 13].map(Some).to_vec(),
        "weighted slots in handle order"
    );
    // weights are selection slots, bounded
    let e = p.set_group_members(ap, g, &[(1, 1 << 20)]).unwrap_err();
    assert!(e.to_string().contains("over 65536"), "{e}");
}

#[test]
fn members_are_shared_and_groups_keep_what_they_use() {
    let mut p = load(&program(true));
    let ap = p.profile_id("ingress.ap").unwrap();
    let t = p.table_id("t").unwrap();
    let fwd = p.profile_action_id(ap, "fwd").unwrap();
    let m = p.add_member(ap, None, fwd, &[vec![3]]).unwrap();
    let e1 = p
        .add_indirect_entry(t, key(0x0800), ProfileRef::Member(m), 0)
        .unwrap();
    p.add_indirect_entry(t, key(0x86dd), ProfileRef::Member(m), 0)
        .unwrap();
    assert_eq!(port(&mut p, 0x0800, 0), Some(3));
    // one change to the member moves both entries
    p.modify_member(ap, m, fwd, &[vec![7]]).unwrap();
    assert_eq!(
        (port(&mut p, 0x0800, 0), port(&mut p, 0x86dd, 0)),
        (Some(7), Some(7))
    );
    assert!(matches!(
        p.delete_member(ap, m),
        Err(ApiError::MemberInUse(_) | ApiError::GroupInUse(_))
    ));
    // an empty group is a miss: the default action (drop) runs
    let g = p.create_group(ap, None, 2).unwrap();
    p.modify_indirect_entry(t, e1, ProfileRef::Group(g))
        .unwrap();
    assert_eq!(port(&mut p, 0x0800, 0), None);
    assert_eq!(p.stats().empty_group_misses, 1);
    assert!(matches!(
        p.delete_group(ap, g),
        Err(ApiError::MemberInUse(_) | ApiError::GroupInUse(_))
    ));
    p.add_member_to_group(ap, m, g).unwrap();
    assert_eq!(port(&mut p, 0x0800, 0), Some(7));
    // the group's max_size holds
    let m2 = p.add_member(ap, None, fwd, &[vec![8]]).unwrap();
    let m3 = p.add_member(ap, None, fwd, &[vec![9]]).unwrap();
    p.add_member_to_group(ap, m2, g).unwrap();
    assert!(matches!(
        p.add_member_to_group(ap, m3, g),
        Err(ApiError::TableFull(_))
    ));
    // deleting the entries frees the member and the group
    p.delete_entry(t, e1).unwrap();
    p.clear_table(t).unwrap();
    p.remove_member_from_group(ap, m, g).unwrap();
    p.delete_member(ap, m).unwrap();
    p.delete_group(ap, g).unwrap();
    // the member's handle is free again: the lowest free one is handed out
    assert_eq!(p.add_member(ap, None, fwd, &[vec![1]]).unwrap(), m);
    // a default member replaces the JSON default on a miss
    assert_eq!(port(&mut p, 0x1234, 0), None);
    p.set_default_target(t, Some(ProfileRef::Member(m2)))
        .unwrap();
    assert_eq!(port(&mut p, 0x1234, 0), Some(8));
    assert!(matches!(
        p.delete_member(ap, m2),
        Err(ApiError::MemberInUse(_) | ApiError::GroupInUse(_))
    ));
    p.set_default_target(t, None).unwrap();
    p.delete_member(ap, m2).unwrap();
}

#[test]
fn indirect_tables_refuse_direct_actions_and_bad_references() {
    let mut p = load(&program(false));
    let ap = p.profile_id("ap").unwrap();
    let t = p.table_id("t").unwrap();
    let fwd = p.profile_action_id(ap, "fwd").unwrap();
    let err = p
        .add_entry(t, key(0x0800), fwd, vec![vec![1]], 0)
        .unwrap_err()
        .to_string();
    assert!(err.contains("is indirect"), "{err}");
    assert!(matches!(
        p.add_indirect_entry(t, key(0x0800), ProfileRef::Member(4), 0),
        Err(ApiError::NoMember(_))
    ));
    // no selector: no groups
    assert!(p.create_group(ap, None, 0).is_err());
    let m = p.add_member(ap, None, fwd, &[vec![2]]).unwrap();
    assert!(p
        .add_indirect_entry(t, key(0x0800), ProfileRef::Group(m), 0)
        .is_err());
    p.add_indirect_entry(t, key(0x0800), ProfileRef::Member(m), 0)
        .unwrap();
    assert_eq!(port(&mut p, 0x0800, 0), Some(2));
    // parameters must fit, actions must be the table's
    assert!(p.add_member(ap, None, fwd, &[vec![2, 0]]).is_err());
    assert!(p.profile_action_id(ap, "nope").is_none());
    // the profile's size (8 members) holds
    for i in 1..8u8 {
        p.add_member(ap, None, fwd, &[vec![i]]).unwrap();
    }
    assert!(matches!(
        p.add_member(ap, None, fwd, &[vec![1]]),
        Err(ApiError::TableFull(_))
    ));
}

#[test]
fn loader_checks_profiles() {
    let mut j = program(true);
    j["pipelines"][0]["tables"][0]["action_profile"] = json!("ingress.other");
    let m = load_err(&j);
    assert!(
        m.contains("unknown action profile \"ingress.other\""),
        "{m}"
    );
    let mut j = program(true);
    j["pipelines"][0]["tables"][0]["type"] = json!("indirect");
    let m = load_err(&j);
    assert!(m.contains("does not fit action profile"), "{m}");
    let mut j = program(true);
    j["pipelines"][0]["action_profiles"][0]["selector"]["algo"] = json!("crc64");
    let m = load_err(&j);
    assert!(m.contains("algorithm \"crc64\" not supported"), "{m}");
}

//! Multicast in the packet path: a packet whose ingress sets `mcast_grp` leaves once per
//! (port, rid) of the group, each copy with `egress_rid` and `instance_type` 5; the group wins
//! over `egress_spec`, `mark_to_drop` cancels it, an unknown group is counted; the `mc_*`
//! commands and their errors.
//!
//! The program (hand-written bmv2 JSON): ingress runs `ti` (default action chosen per test);
//! egress writes `egress_rid` into the source MAC and `instance_type` into the destination MAC.

use lanes_p4::testprog::{assign, field, hex, keyless, load, skeleton};
use lanes_p4::Program;
use lanes_switch::commands::execute;
use lanes_switch::{Dataplane, TmDefaults, TxOutcome};
use serde_json::{json, Value};

fn action(id: u64, name: &str, prims: Vec<Value>) -> Value {
    lanes_p4::testprog::action(id, name, json!([]), prims)
}

fn program() -> Program {
    let group = |g| assign(field("standard_metadata", "mcast_grp"), hex(g));
    let mut j = skeleton(json!([]));
    let std_fields = j["header_types"][1]["fields"].as_array_mut().unwrap();
    std_fields.insert(std_fields.len() - 1, json!(["egress_rid", 16, false]));
    j["actions"] = json!([
        action(
            0,
            "mc",
            vec![
                assign(field("standard_metadata", "egress_spec"), hex(4)),
                group(7)
            ]
        ),
        action(
            1,
            "mc_then_drop",
            vec![group(7), json!({"op": "mark_to_drop", "parameters": []})]
        ),
        action(2, "mc_unknown", vec![group(9)]),
        action(
            3,
            "mark",
            vec![
                assign(
                    field("ethernet", "srcAddr"),
                    field("standard_metadata", "egress_rid")
                ),
                assign(
                    field("ethernet", "dstAddr"),
                    field("standard_metadata", "instance_type")
                ),
            ]
        ),
    ]);
    j["pipelines"] = json!([
        {"name": "ingress", "id": 0, "init_table": "ti", "conditionals": [],
         "tables": [keyless("ti", 0, &[(0, "mc"), (1, "mc_then_drop"), (2, "mc_unknown")], 0)]},
        {"name": "egress", "id": 1, "init_table": "te", "conditionals": [],
         "tables": [keyless("te", 1, &[(3, "mark")], 3)]}
    ]);
    load(&j)
}

/// Ports 1-4, the program, the commands.
fn switch(commands: &[&str]) -> Dataplane {
    let mut dp = Dataplane::new(TmDefaults {
        rate_bps: 100e6,
        ..TmDefaults::default()
    });
    for port in 1..=4 {
        dp.add_port(port, None).unwrap();
    }
    dp.set_program(program());
    for cmd in commands {
        execute(&mut dp, cmd).unwrap_or_else(|e| panic!("{cmd}: {e}"));
    }
    dp
}

/// One 100-byte frame arrives on port 4 at t=0; returns (port, frame) of everything sent.
fn run(dp: &mut Dataplane) -> Vec<(u32, Vec<u8>)> {
    let mut f = vec![0u8; 12];
    f.extend_from_slice(&[0x88, 0xb5]);
    f.resize(100, 0xab);
    dp.ingress_frame(&f, f.len(), 4, 0);
    let mut out = vec![];
    let mut now = 0;
    while let Some(t) = dp.next_deadline(now) {
        now = t;
        dp.service(now, &mut |port, f| {
            out.push((port, f.to_vec()));
            TxOutcome::Sent
        });
    }
    out.sort();
    out
}

/// (port, egress_rid, instance_type) of each frame sent, and whether its payload is intact.
fn copies(out: &[(u32, Vec<u8>)]) -> Vec<(u32, u64, u64)> {
    out.iter()
        .map(|(port, f)| {
            assert_eq!(f.len(), 100);
            assert!(f[14..].iter().all(|b| *b == 0xab), "payload changed");
            let mac = |b: &[u8]| b.iter().fold(0u64, |a, x| (a << 8) | u64::from(*x));
            (*port, mac(&f[6..12]), mac(&f[0..6]))
        })
        .collect()
}

const GROUP_7: &[&str] = &[
    "mc_mgrp_create 7",
    "mc_node_create 1 1 2",
    "mc_node_create 9 3",
    "mc_node_associate 7 0",
    "mc_node_associate 7 1",
];

#[test]
fn a_packet_leaves_once_per_port_and_rid_of_its_group() {
    let mut dp = switch(GROUP_7);
    let out = run(&mut dp);
    // egress_spec said port 4: the group wins, as in bmv2
    assert_eq!(copies(&out), vec![(1, 1, 5), (2, 1, 5), (3, 9, 5)]);
    assert_eq!(dp.port(4).unwrap().counters.tx_pkts, 0);
    assert_eq!(dp.queued_pkts(), 0);
}

#[test]
fn group_changes_apply_to_the_next_packet() {
    let mut dp = switch(GROUP_7);
    execute(&mut dp, "mc_node_update 0 4").unwrap();
    execute(&mut dp, "mc_node_dissociate 7 1").unwrap();
    assert_eq!(copies(&run(&mut dp)), vec![(4, 1, 5)]);
    execute(&mut dp, "mc_node_destroy 0").unwrap();
    assert!(run(&mut dp).is_empty());
    assert_eq!(dp.drops.no_multicast_group, 1);
}

#[test]
fn unknown_groups_mark_to_drop_and_missing_ports_are_counted() {
    let mut dp = switch(GROUP_7);
    execute(&mut dp, "table_set_default ti mc_unknown").unwrap();
    assert!(run(&mut dp).is_empty());
    assert_eq!(dp.drops.no_multicast_group, 1);
    execute(&mut dp, "table_set_default ti mc_then_drop").unwrap();
    assert!(run(&mut dp).is_empty());
    assert_eq!(dp.drops.ingress, 1);
    // a node naming a port the switch lacks: that copy is counted, the others go
    execute(&mut dp, "table_set_default ti mc").unwrap();
    execute(&mut dp, "mc_node_update 1 3 17").unwrap();
    assert_eq!(copies(&run(&mut dp)), vec![(1, 1, 5), (2, 1, 5), (3, 9, 5)]);
    assert_eq!(dp.drops.unknown_port, 1);
}

#[test]
fn whole_group_commands_are_what_p4runtime_uses() {
    let mut dp = switch(&["mc_group_insert 7 2:0 3:0 3:6"]);
    assert_eq!(copies(&run(&mut dp)), vec![(2, 0, 5), (3, 0, 5), (3, 6, 5)]);
    execute(&mut dp, "mc_group_modify 7 1:2").unwrap();
    assert_eq!(copies(&run(&mut dp)), vec![(1, 2, 5)]);
    let dump = execute(&mut dp, "mc_dump_json").unwrap();
    let v: Value = serde_json::from_str(&dump).unwrap();
    assert_eq!(v["groups"], json!([{"mgid": 7, "nodes": [0]}]));
    assert_eq!(
        v["nodes"],
        json!([{"handle": 0, "rid": 2, "ports": [1], "group": 7}])
    );
    execute(&mut dp, "mc_group_delete 7").unwrap();
    assert!(run(&mut dp).is_empty());
    assert!(execute(&mut dp, "mc_group_modify 7 1:2")
        .unwrap_err()
        .contains("no multicast group 7"));
}

#[test]
fn mc_commands_speak_simple_switch_cli_and_refuse_bad_input_in_one_line() {
    let mut dp = switch(&[]);
    assert_eq!(
        execute(&mut dp, "mc_mgrp_create 3").unwrap(),
        "multicast group 3 was created with handle 3"
    );
    assert_eq!(
        execute(&mut dp, "mc_node_create 0 1 2").unwrap(),
        "node was created with handle 0"
    );
    execute(&mut dp, "mc_node_associate 3 0").unwrap();
    let dump = execute(&mut dp, "mc_dump").unwrap();
    assert!(
        dump.contains("mgrp(3)\n  -> (L1h=0, rid=0) -> (ports=[1, 2], lags=[])"),
        "{dump}"
    );
    for (cmd, want) in [
        ("mc_mgrp_create", "mc_mgrp_create MGID"),
        ("mc_mgrp_create x", "'x' is not a number"),
        ("mc_mgrp_create 3", "exists"),
        ("mc_node_create 1 2 | 5", "LAGs are not supported"),
        ("mc_node_create 1 600", "port 600 out of range"),
        ("mc_node_associate 3 9", "no multicast node 9"),
        ("mc_group_insert 4 1", "not PORT:RID"),
        ("mc_set_lag_membership 1 2", "LAGs are not supported"),
    ] {
        let e = execute(&mut dp, cmd).unwrap_err();
        assert!(e.contains(want), "{cmd}: {e}");
        assert!(!e.contains('\n'), "{cmd}: {e}");
    }
    // groups belong to the switch: a new program keeps them
    dp.set_program(program());
    assert!(dp.pre.has_group(3));
}

//! Mirroring in the packet path: copies made by clones in ingress and egress leave through the
//! mirror session's port, queued and paced by that port's TM; unknown sessions and endless
//! clone chains are counted, not followed; `mirroring_*` commands and their errors.
//!
//! The program (hand-written bmv2 JSON): ingress runs `ti` (default action chosen per test),
//! egress runs `te` for received packets and `tcopy` for copies (instance_type != 0), whose
//! actions write instance_type into the source MAC's last byte.

use lanes_p4::testprog::{assign, field, hex, keyless, load, skeleton};
use lanes_p4::Program;
use lanes_switch::commands::execute;
use lanes_switch::{
    Dataplane, EntryOp, MirrorSession, SettingError, TmDefaults, TxOutcome, MAX_CLONE_GENERATIONS,
};
use serde_json::{json, Value};

fn clone(op: &str, session: u64) -> Value {
    json!({"op": op, "parameters": [hex(session), hex(0)]})
}

fn action(id: u64, name: &str, prims: Vec<Value>) -> Value {
    lanes_p4::testprog::action(id, name, json!([]), prims)
}

fn program() -> Program {
    let to1 = || assign(field("standard_metadata", "egress_spec"), hex(1));
    let mark = || {
        assign(
            field("ethernet", "srcAddr"),
            field("standard_metadata", "instance_type"),
        )
    };
    let mut j = skeleton(json!([]));
    j["actions"] = json!([
        action(0, "fwd", vec![to1()]),
        action(
            1,
            "fwd_i2e",
            vec![to1(), clone("clone_ingress_pkt_to_egress", 5)]
        ),
        action(
            2,
            "drop_i2e",
            vec![
                json!({"op": "mark_to_drop", "parameters": []}),
                clone("clone_ingress_pkt_to_egress", 5)
            ]
        ),
        action(3, "nop", vec![]),
        action(4, "e2e", vec![clone("clone_egress_pkt_to_egress", 5)]),
        action(
            5,
            "e2e_unknown",
            vec![clone("clone_egress_pkt_to_egress", 9)]
        ),
        action(6, "mark", vec![mark()]),
        action(
            7,
            "mark_e2e",
            vec![mark(), clone("clone_egress_pkt_to_egress", 5)]
        ),
    ]);
    j["pipelines"] = json!([
            {"name": "ingress", "id": 0, "init_table": "ti", "conditionals": [],
             "tables": [keyless("ti", 0, &[(0, "fwd"), (1, "fwd_i2e"), (2, "drop_i2e")], 0)]},
            {"name": "egress", "id": 1, "init_table": "is_copy",
             "conditionals": [{"name": "is_copy", "id": 0,
                "expression": {"type": "expression", "value": {"op": "==",
                    "left": field("standard_metadata", "instance_type"), "right": hex(0)}},
                "true_next": "te", "false_next": "tcopy"}],
             "tables": [keyless("te", 1, &[(3, "nop"), (4, "e2e"), (5, "e2e_unknown")], 3),
                        keyless("tcopy", 2, &[(6, "mark"), (7, "mark_e2e")], 6)]}
    ]);
    load(&j)
}

/// Ports 1-4 at 100 Mb/s (port 3 at `port3_bps`), the program, the commands.
fn switch(port3_bps: f64, commands: &[&str]) -> Dataplane {
    let mut dp = Dataplane::new(TmDefaults {
        rate_bps: 100e6,
        ..TmDefaults::default()
    });
    for port in 1..=4 {
        let rate = (port == 3).then_some(port3_bps);
        dp.add_port(port, rate).unwrap();
    }
    dp.set_program(program());
    for cmd in commands {
        execute(&mut dp, cmd).unwrap_or_else(|e| panic!("{cmd}: {e}"));
    }
    dp
}

/// A frame from host `n`, `len` bytes.
fn frame(n: u8, len: usize) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 0xff, 0, 0, 0, 0, 0, n, 0x88, 0xb5];
    f.resize(len, 0xab);
    f
}

/// `count` frames of `len` bytes arrive on port 2 at t=0; the ports drain in virtual time.
/// Returns (time, port, frame) of everything sent.
fn run(dp: &mut Dataplane, count: u8, len: usize) -> Vec<(u64, u32, Vec<u8>)> {
    for i in 0..count {
        let f = frame(i, len);
        dp.ingress_frame(&f, f.len(), 2, u64::from(i));
    }
    let mut out = vec![];
    let mut now = 0;
    while let Some(t) = dp.next_deadline(now) {
        now = t;
        dp.service(now, &mut |port, f| {
            out.push((now, port, f.to_vec()));
            TxOutcome::Sent
        });
    }
    out
}

fn on(out: &[(u64, u32, Vec<u8>)], port: u32) -> Vec<(u64, Vec<u8>)> {
    out.iter()
        .filter(|o| o.1 == port)
        .map(|o| (o.0, o.2.clone()))
        .collect()
}

fn deq_pkts(dp: &Dataplane, port: u32) -> u64 {
    let tm = &dp.port(port).unwrap().tm;
    (0..tm.num_queues())
        .map(|q| tm.queue_status(q).unwrap().counters.deq_pkts)
        .sum()
}

#[test]
fn egress_clones_leave_through_the_session_port_at_its_rate() {
    // port 3 runs at 1 Mb/s: 125 B copies leave 1 ms apart, the originals on port 1 at 100 Mb/s
    let mut dp = switch(1e6, &["table_set_default te e2e", "mirroring_add 5 3"]);
    let out = run(&mut dp, 5, 125);
    let (orig, copies) = (on(&out, 1), on(&out, 3));
    assert_eq!(out.len(), 10, "{out:?}");
    assert_eq!((orig.len(), copies.len()), (5, 5));
    for (i, (_, f)) in orig.iter().enumerate() {
        assert_eq!(
            &f[6..12],
            &[0, 0, 0, 0, 0, i as u8],
            "originals are not marked"
        );
        assert_eq!(f.len(), 125);
    }
    for (i, (_, f)) in copies.iter().enumerate() {
        // the copy ran egress on port 3 with instance_type 2 (egress clone)
        assert_eq!(&f[6..12], &[0, 0, 0, 0, 0, 2], "copy {i}");
        let sent = frame(i as u8, 125);
        assert_eq!((&f[..6], &f[12..]), (&sent[..6], &sent[12..]));
    }
    // through port 3's TM: counted there, and paced at its line rate
    assert_eq!(deq_pkts(&dp, 3), 5);
    assert_eq!(deq_pkts(&dp, 1), 5);
    for w in copies.windows(2) {
        let gap = w[1].0 - w[0].0;
        assert!(
            (999_000..=1_001_000).contains(&gap),
            "copies {gap} ns apart"
        );
    }
    assert!(
        orig.last().unwrap().0 < copies[1].0,
        "originals are not held up by port 3"
    );
    let d = dp.drops;
    assert_eq!((d.no_mirror_session, d.clone_depth), (0, 0));
}

#[test]
fn session_truncation_and_the_cpu_port() {
    let mut dp = switch(100e6, &["table_set_default te e2e", "mirroring_add 5 3 64"]);
    let out = run(&mut dp, 3, 200);
    assert!(on(&out, 3).iter().all(|(_, f)| f.len() == 64), "{out:?}");
    assert!(on(&out, 1).iter().all(|(_, f)| f.len() == 200));
    // a session to the CPU port turns copies into PacketIns
    dp.set_cpu_port(64).unwrap();
    execute(&mut dp, "mirroring_add 5 64").unwrap();
    let out = run(&mut dp, 2, 100);
    assert_eq!(on(&out, 1).len(), 2);
    let ins = dp.take_packet_ins();
    assert_eq!(ins.len(), 2);
    assert!(ins.iter().all(|f| f.len() == 100 && f[11] == 2));
}

#[test]
fn ingress_clone_of_a_dropped_packet_goes_out_alone() {
    let mut dp = switch(
        100e6,
        &["table_set_default ti drop_i2e", "mirroring_add 5 3"],
    );
    let out = run(&mut dp, 4, 100);
    assert_eq!(out.len(), 4, "{out:?}");
    for (i, (_, port, f)) in out.iter().enumerate() {
        assert_eq!(*port, 3);
        assert_eq!(f[11], 1, "instance_type 1: ingress clone");
        assert_eq!(&f[12..], &frame(i as u8, 100)[12..]);
    }
    assert_eq!(dp.drops.ingress, 4);
    // and with the original forwarded, both leave
    execute(&mut dp, "table_set_default ti fwd_i2e").unwrap();
    let out = run(&mut dp, 3, 100);
    assert_eq!((on(&out, 1).len(), on(&out, 3).len()), (3, 3));
}

#[test]
fn clone_to_an_unknown_session_is_counted_and_the_original_still_sent() {
    let mut dp = switch(
        100e6,
        &["table_set_default te e2e_unknown", "mirroring_add 5 3"],
    );
    let out = run(&mut dp, 6, 100);
    assert_eq!(on(&out, 1).len(), 6);
    assert!(on(&out, 3).is_empty());
    assert_eq!(dp.drops.no_mirror_session, 6);
    // deleting a session makes it unknown
    execute(&mut dp, "table_set_default te e2e").unwrap();
    execute(&mut dp, "mirroring_delete 5").unwrap();
    let out = run(&mut dp, 2, 100);
    assert_eq!(out.len(), 2);
    assert_eq!(dp.drops.no_mirror_session, 8);
}

#[test]
fn a_program_that_clones_every_copy_makes_a_bounded_chain() {
    // received packets and every copy clone in egress: each packet makes one chain of copies,
    // MAX_CLONE_GENERATIONS long; the next one is counted and not made
    let mut dp = switch(
        100e6,
        &[
            "table_set_default te e2e",
            "table_set_default tcopy mark_e2e",
            "mirroring_add 5 3",
        ],
    );
    let n = 5u8;
    let out = run(&mut dp, n, 100);
    let copies = on(&out, 3);
    let gens = usize::from(MAX_CLONE_GENERATIONS);
    assert_eq!(on(&out, 1).len(), usize::from(n));
    assert_eq!(copies.len(), usize::from(n) * gens, "{}", copies.len());
    assert_eq!(dp.drops.clone_depth, u64::from(n));
    assert_eq!(dp.queued_pkts(), 0);
    // copies of copies are egress clones too
    assert!(copies.iter().all(|(_, f)| f[11] == 2));
}

#[test]
fn mirroring_commands_and_their_errors() {
    let mut dp = switch(100e6, &[]);
    assert_eq!(execute(&mut dp, "mirroring_add 5 3").unwrap(), "");
    assert_eq!(
        execute(&mut dp, "mirroring_get 5").unwrap(),
        "session 5: port 3"
    );
    execute(&mut dp, "mirroring_add 5 4 128").unwrap();
    assert_eq!(
        execute(&mut dp, "mirroring_get 5").unwrap(),
        "session 5: port 4 truncate 128"
    );
    for (cmd, want) in [
        (
            "mirroring_add 40000 3",
            "mirror session 40000 out of range (0-32767)",
        ),
        ("mirroring_add 5 9", "no port 9"),
        ("mirroring_add 5 600", "no port 600"),
        ("mirroring_add x 3", "mirror session 'x' is not a number"),
        ("mirroring_add 5 y", "port 'y' is not a number"),
        (
            "mirroring_add 5 3 -1",
            "truncation length '-1' is not a number of bytes",
        ),
        (
            "mirroring_add 5",
            "mirroring_add SESSION PORT [TRUNCATE_BYTES]",
        ),
        ("mirroring_delete 6", "no mirror session 6"),
        ("mirroring_delete", "mirroring_delete SESSION"),
        ("mirroring_get 7", "no mirror session 7"),
        (
            "mirroring_get 99999999999999999999",
            "mirror session '99999999999999999999' is not a number",
        ),
        (
            "mirroring_add_mc 5 0",
            "multicast group 0 out of range (1-65535)",
        ),
        ("mirroring_add_mc 5", "mirroring_add_mc SESSION MGID"),
    ] {
        let e = execute(&mut dp, cmd).unwrap_err();
        assert_eq!(e, want, "{cmd}");
    }
    // the failed commands changed nothing
    assert_eq!(
        execute(&mut dp, "mirroring_get 5").unwrap(),
        "session 5: port 4 truncate 128"
    );
    execute(&mut dp, "mirroring_delete 5").unwrap();
    assert!(execute(&mut dp, "mirroring_get 5").is_err());
    let drops = execute(&mut dp, "show_ports").unwrap();
    assert!(
        drops.contains("no_mirror_session=0 clone_depth=0"),
        "{drops}"
    );
}

#[test]
fn sessions_with_a_multicast_group_copy_to_its_ports_too() {
    // session 5: port 4 and group 7 (port 3, rid 9); session 6: group 7 only
    let setup = [
        "table_set_default ti fwd_i2e",
        "mc_mgrp_create 7",
        "mc_node_create 9 3",
        "mc_node_associate 7 0",
        "mirroring_add 5 4",
        "mirroring_add_mc 5 7",
    ];
    let mut dp = switch(100e6, &setup);
    assert_eq!(
        execute(&mut dp, "mirroring_get 5").unwrap(),
        "session 5: port 4 mgid 7"
    );
    let out = run(&mut dp, 1, 100);
    let ports: Vec<u32> = {
        let mut p: Vec<u32> = out.iter().map(|o| o.1).collect();
        p.sort_unstable();
        p
    };
    assert_eq!(ports, vec![1, 3, 4]);
    // the copies are ingress clones (instance_type 1, marked by egress), the original is not
    for (_, port, f) in &out {
        assert_eq!(f[11], if *port == 1 { 0 } else { 1 }, "port {port}");
    }
    // a session with a group and no port: copies only where the group says
    execute(&mut dp, "mirroring_delete 5").unwrap();
    execute(&mut dp, "mirroring_add_mc 5 7").unwrap();
    assert_eq!(
        execute(&mut dp, "mirroring_get 5").unwrap(),
        "session 5: mgid 7"
    );
    let out = run(&mut dp, 1, 100);
    let mut ports: Vec<u32> = out.iter().map(|o| o.1).collect();
    ports.sort_unstable();
    assert_eq!(ports, vec![1, 3]);
    assert_eq!(dp.queued_pkts(), 0);
}

#[test]
fn a_p4runtime_clone_session_write_refuses_what_exists_or_is_missing() {
    let mut dp = switch(100e6, &[]);
    let to = |port| MirrorSession {
        port: Some(port),
        mgid: None,
        truncate: Some(0),
    };
    let e = dp.mirror_write(EntryOp::Modify, 5, to(3)).unwrap_err();
    assert_eq!(
        (e.grpc_code(), e.about_session(5)),
        (5, "no mirror session 5".into())
    );
    assert_eq!(
        dp.mirror_write(EntryOp::Delete, 5, to(3)),
        Err(SettingError::NoSession(5))
    );
    dp.mirror_write(EntryOp::Insert, 5, to(3)).unwrap();
    let e = dp.mirror_write(EntryOp::Insert, 5, to(4)).unwrap_err();
    assert_eq!(
        (e.grpc_code(), e.about_session(5)),
        (6, "mirror session 5 exists".into())
    );
    let e = dp.mirror_write(EntryOp::Modify, 5, to(9)).unwrap_err();
    assert_eq!(e.about_session(5), "clone session 5: no port 9");
    dp.mirror_write(EntryOp::Modify, 5, to(4)).unwrap();
    assert_eq!(dp.mirror(5).and_then(|m| m.port), Some(4));
    let e = dp.mirror_write(EntryOp::Insert, 40000, to(3)).unwrap_err();
    assert_eq!(e, SettingError::SessionOutOfRange(40000));
    dp.mirror_write(EntryOp::Delete, 5, to(3)).unwrap();
    assert!(dp.mirror(5).is_none());
}

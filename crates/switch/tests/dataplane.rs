//! The packet path in memory: tm_basic.json, tables filled by CLI commands, frames through
//! ingress -> TM (rlsp-drr at 100 Mb/s, queue settings from metadata) -> egress.

use lanes_p4::Program;
use lanes_switch::commands::execute;
use lanes_switch::{Dataplane, TmDefaults, TxOutcome};
use lanes_tm::Scheduler;

fn frame(src: [u8; 4], dst: [u8; 4], payload: usize) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 0xff, 0, 0, 0, 0, 0, 0xee, 0x08, 0x00];
    let total = (20 + payload) as u16;
    let mut ip = vec![
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        0,
        0x40,
        0,
        64,
        17,
        0,
        0,
    ];
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&dst);
    f.extend_from_slice(&ip);
    f.extend(std::iter::repeat_n(0xab, payload));
    f
}

fn switch() -> Dataplane {
    let text = std::fs::read_to_string(format!(
        "{}/../../p4/tm_basic.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let mut dp = Dataplane::new(TmDefaults {
        rate_bps: 100e6,
        scheduler: Scheduler::RlspDrr,
        ..TmDefaults::default()
    });
    for port in 1..=4 {
        dp.add_port(port, None).unwrap();
    }
    dp.set_program(Program::load(&text).unwrap());
    for cmd in [
        "table_add ipv4_lpm ipv4_forward 10.0.1.4/32 => 00:00:00:00:01:04 4",
        "table_add src_ip_prio set_priority 10.0.1.1/32 => 7 7500000 7000",
        "table_add src_ip_prio set_priority 10.0.1.2/32 => 6 2500000 1500",
        "table_add src_ip_prio set_priority 10.0.1.3/32 => 5 2500000 1500",
    ] {
        execute(&mut dp, cmd).unwrap_or_else(|e| panic!("{cmd}: {e}"));
    }
    dp
}

/// Feed `per_source` frames from each host at t=0, then drain port 4 in virtual time.
fn run(dp: &mut Dataplane, per_source: usize) -> Vec<(u64, Vec<u8>)> {
    for i in 0..per_source {
        for h in 1..=3u8 {
            let slot = dp.take_slot().unwrap();
            let f = frame([10, 0, 1, h], [10, 0, 1, 4], 1486 - 34);
            dp.slot_buf(slot)[..f.len()].copy_from_slice(&f);
            dp.ingress(slot, f.len(), u32::from(h), i as u64);
        }
    }
    let mut out = vec![];
    let mut now = 0;
    while let Some(t) = dp.next_deadline(now) {
        now = t;
        dp.service(now, &mut |port, f| {
            assert_eq!(port, 4);
            out.push((now, f.to_vec()));
            TxOutcome::Sent
        });
    }
    out
}

#[test]
fn forwards_rewrites_and_schedules_by_metadata() {
    let mut dp = switch();
    let out = run(&mut dp, 60);
    // 60 per queue fit the default depth of 64: nothing dropped
    assert_eq!(out.len(), 180);
    assert_eq!(
        &out[0].1[..6],
        &[0, 0, 0, 0, 1, 4],
        "destination MAC rewritten"
    );
    // queue 7 got its rate from the packets' metadata
    let q = execute(&mut dp, "show_queues 4").unwrap();
    assert!(
        q.lines()
            .any(|l| l.starts_with("4 7 ") && l.contains(" 7500000 7000 ")),
        "{q}"
    );
    // the high source first sends its bucket (9014 B, 1 ms of 60 Mb/s + 1514) as it earns 60 %
    // of each frame time: 1 + (9014 - 1486) / (0.4 x 1486) = 13 frames back to back; then 60 %,
    // the others 20 % each
    let src_of = |f: &Vec<u8>| f[14 + 15];
    let head: Vec<u8> = out.iter().take(20).map(|(_, f)| src_of(f)).collect();
    assert!(head[..13].iter().all(|&s| s == 1), "{head:?}");
    let steady: Vec<u8> = out[20..70].iter().map(|(_, f)| src_of(f)).collect();
    let count = |h| steady.iter().filter(|&&s| s == h).count();
    assert!((29..=31).contains(&count(1)), "high {}", count(1));
    assert!(count(2).abs_diff(count(3)) <= 1);
    // the link is kept busy: 1486 B at 100 Mb/s = 118.88 us apart
    for w in out.windows(2).take(100) {
        assert!(w[1].0 - w[0].0 <= 118_881, "{:?}", w[1].0 - w[0].0);
    }
}

#[test]
fn queueing_delay_is_measured_per_queue() {
    let mut dp = switch();
    let out = run(&mut dp, 60);
    let text = execute(&mut dp, "show_delay 4 reset").unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(' ').collect())
        .collect();
    assert_eq!(rows.len(), 3, "{text}");
    let field = |q: &str, i: usize| -> u64 {
        rows.iter()
            .find(|r| r[1] == q)
            .map(|r| r[i].parse().unwrap())
            .unwrap()
    };
    // every dequeued packet is in its queue's histogram
    assert_eq!(
        field("5", 2) + field("6", 2) + field("7", 2),
        out.len() as u64
    );
    // all 180 frames arrived at t < 60 ns, so each waited until its departure; the last one left
    // at the final departure time (within the histogram's 25 % bucket width for the quantiles)
    let last = out.last().unwrap().0;
    let max = rows
        .iter()
        .map(|r| r[5].parse::<u64>().unwrap())
        .max()
        .unwrap();
    assert!(max <= last && max + 60 >= last, "max {max} last {last}");
    // the high class (60 % of the link) drains first: its median delay is well below the others'
    assert!(field("7", 3) * 2 < field("5", 3), "{text}");
    // reset emptied them
    assert_eq!(execute(&mut dp, "show_delay 4").unwrap().lines().count(), 1);
}

#[test]
fn drops_are_counted_and_never_crash() {
    let mut dp = switch();
    let cases: Vec<Vec<u8>> = vec![
        vec![],
        vec![0; 5],
        frame([10, 0, 1, 1], [10, 0, 1, 4], 10)[..20].to_vec(), // truncated IPv4
        // no src_ip_prio entry: its default drop() is undone by ipv4_forward setting
        // egress_spec afterwards, as in bmv2; this one is forwarded
        frame([10, 0, 1, 9], [10, 0, 1, 4], 10),
        frame([10, 0, 1, 1], [10, 0, 9, 9], 10), // no route: dropped
    ];
    for f in &cases {
        let slot = dp.take_slot().unwrap();
        dp.slot_buf(slot)[..f.len()].copy_from_slice(f);
        dp.ingress(slot, f.len(), 1, 0);
    }
    let slot = dp.take_slot().unwrap();
    dp.ingress(slot, 20_000, 1, 0);
    let d = dp.drops;
    assert_eq!(d.oversize, 1);
    // as in bmv2 the three frames the parser rejects run ingress (parser_error set), find no
    // IPv4 to route and go to egress_spec 0, a port this switch lacks
    assert_eq!(dp.program().unwrap().stats().parser_errors, 3);
    assert_eq!((d.parser, d.unknown_port, d.ingress), (0, 3, 1), "{d:?}");
    assert_eq!(dp.queued_pkts(), 1);
    assert!(execute(&mut dp, "show_ports")
        .unwrap()
        .contains("oversize=1"));
}

#[test]
fn commands_report_errors_in_one_line() {
    let mut dp = switch();
    for (cmd, want) in [
        ("table_add nosuch x 1 => 2", "no table named 'nosuch'"),
        (
            "table_add ipv4_lpm ipv4_forward 10.0.1.4/32 => 00:00:00:00:01:04",
            "takes 2 parameter(s)",
        ),
        (
            "table_add ipv4_lpm ipv4_forward 10.0.1.4/32 => 00:00:00:00:01:04 999",
            "does not fit in 9 bits",
        ),
        (
            "table_add ipv4_lpm ipv4_forward 10.0.1.4 => 00:00:00:00:01:04 1",
            "needs VALUE/LENGTH",
        ),
        ("set_scheduler wfq", "unknown scheduler 'wfq'"),
        ("set_port_rate 9 1Gbps", "no port 9"),
        ("frobnicate", "unknown command"),
    ] {
        let e = execute(&mut dp, cmd).unwrap_err();
        assert!(e.contains(want) && !e.contains('\n'), "{cmd}: {e}");
    }
    execute(&mut dp, "set_scheduler fifo 4").unwrap();
    execute(&mut dp, "set_port_rate 4 1Gbps").unwrap();
    let ports = execute(&mut dp, "show_ports").unwrap();
    assert!(
        ports.lines().any(|l| l.starts_with("4 1000000000 fifo")),
        "{ports}"
    );
    let dump = execute(&mut dp, "table_dump src_ip_prio").unwrap();
    assert_eq!(
        dump.lines().filter(|l| l.contains("set_priority")).count(),
        3,
        "{dump}"
    );
}

#[test]
fn cpu_port_collects_packet_ins_and_injects_packet_outs() {
    let mut dp = switch();
    dp.set_cpu_port(64).unwrap();
    execute(
        &mut dp,
        "table_add ipv4_lpm ipv4_forward 10.0.1.64/32 => 00:00:00:00:00:40 64",
    )
    .unwrap();
    // a PacketOut from the controller enters on the CPU port and is forwarded by the program
    dp.inject(&frame([10, 0, 1, 1], [10, 0, 1, 4], 100), 0)
        .unwrap();
    // a packet the program sends to port 64 becomes a PacketIn
    let f = frame([10, 0, 1, 1], [10, 0, 1, 64], 100);
    let slot = dp.take_slot().unwrap();
    dp.slot_buf(slot)[..f.len()].copy_from_slice(&f);
    dp.ingress(slot, f.len(), 1, 0);
    let mut sent = vec![];
    dp.service(1_000_000, &mut |port, _| {
        sent.push(port);
        TxOutcome::Sent
    });
    assert_eq!(sent, vec![4]);
    let ins = dp.take_packet_ins();
    assert_eq!(ins.len(), 1);
    assert_eq!(&ins[0][..6], &[0, 0, 0, 0, 0, 0x40]);
    assert!(dp.take_packet_ins().is_empty());
}

#[test]
fn packet_ins_a_controller_does_not_take_are_counted_once_as_errors() {
    let mut dp = switch();
    dp.set_cpu_port(64).unwrap();
    execute(
        &mut dp,
        "table_add ipv4_lpm ipv4_forward 10.0.1.64/32 => 00:00:00:00:00:40 64",
    )
    .unwrap();
    let f = frame([10, 0, 1, 1], [10, 0, 1, 64], 100);
    // more than the 4096 PacketIns the switch keeps for a controller that never takes them
    let n = 5000u64;
    let mut now = 0;
    for _ in 0..n {
        let slot = dp.take_slot().unwrap();
        dp.slot_buf(slot)[..f.len()].copy_from_slice(&f);
        dp.ingress(slot, f.len(), 1, now);
        now += 1_000_000;
        dp.service(now, &mut |_, _| TxOutcome::Sent);
    }
    let c = dp.port(64).unwrap().counters;
    assert_eq!(dp.take_packet_ins().len(), 4096);
    assert_eq!(c.tx_pkts, 4096, "only those kept were sent");
    assert_eq!(c.tx_errors, n - 4096, "each one dropped is an error, once");
    assert_eq!(c.tx_bytes, 4096 * f.len() as u64);
}

#[test]
fn queue_burst_comes_from_metadata_and_from_the_command_port() {
    let mut dp = switch();
    execute(
        &mut dp,
        "table_add src_ip_prio set_priority_burst 10.0.1.9/32 => 7 7500000 7000 30000",
    )
    .unwrap();
    execute(
        &mut dp,
        "table_add ipv4_lpm ipv4_forward 10.0.1.5/32 => 00:00:00:00:01:05 4",
    )
    .unwrap();
    let burst_of = |dp: &mut Dataplane, q: &str| {
        let t = execute(dp, "show_queues 4").unwrap();
        let line = t.lines().find(|l| l.starts_with(q)).unwrap().to_string();
        line.split_whitespace().last().unwrap().to_string()
    };
    // set_priority leaves the bucket at its default: 1 ms of the rate + 1514 B
    run(&mut dp, 1);
    assert_eq!(burst_of(&mut dp, "4 7 "), "9014");
    assert_eq!(
        burst_of(&mut dp, "4 2 "),
        "-",
        "queues without a rate have no bucket"
    );
    let slot = dp.take_slot().unwrap();
    let f = frame([10, 0, 1, 9], [10, 0, 1, 5], 100);
    dp.slot_buf(slot)[..f.len()].copy_from_slice(&f);
    dp.ingress(slot, f.len(), 1, 0);
    assert_eq!(burst_of(&mut dp, "4 7 "), "30000");
    execute(&mut dp, "set_queue_burst 4000 4 7").unwrap();
    assert_eq!(burst_of(&mut dp, "4 7 "), "4000");
    assert!(execute(&mut dp, "set_queue_burst 0 4 7").is_err());
}

#[test]
fn a_frame_shorter_than_its_length_is_dropped_as_oversize() {
    let mut dp = switch();
    let f = frame([10, 0, 1, 1], [10, 0, 1, 4], 100);
    dp.ingress_frame(&f[..20], f.len(), 1, 0);
    assert_eq!(dp.drops.oversize, 1);
    assert_eq!(dp.queued_pkts(), 0);
    dp.ingress_frame(&f, f.len(), 1, 0);
    assert_eq!((dp.drops.oversize, dp.queued_pkts()), (1, 1));
}

/// A frame held for a batched send is counted when its sender says what became of it, once:
/// sent frames as tx, refused ones as errors, never first as sent and then taken back.
#[test]
fn a_pending_frame_is_counted_when_the_sender_reports_it() {
    let mut dp = switch();
    for h in 1..=3u8 {
        let f = frame([10, 0, 1, h], [10, 0, 1, 4], 200);
        let slot = dp.take_slot().unwrap();
        dp.slot_buf(slot)[..f.len()].copy_from_slice(&f);
        dp.ingress(slot, f.len(), u32::from(h), 0);
    }
    let mut held = vec![];
    dp.service_until(0, 1_000_000, &mut |port, f| {
        held.push((port, f.len() as u64));
        TxOutcome::Pending
    });
    assert_eq!(held.len(), 3, "all three due within the window");
    let c = dp.port(4).unwrap().counters;
    assert_eq!(
        (c.tx_pkts, c.tx_bytes, c.tx_errors),
        (0, 0, 0),
        "nothing counted yet"
    );
    let bytes: u64 = held[..2].iter().map(|&(_, len)| len).sum();
    dp.tx_sent(4, 2, bytes);
    dp.tx_refused(4, 1);
    let c = dp.port(4).unwrap().counters;
    assert_eq!((c.tx_pkts, c.tx_bytes, c.tx_errors), (2, bytes, 1));
}

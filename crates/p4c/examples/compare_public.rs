//! Runs the same frames through a program compiled by lanes p4c and through p4c's own JSON for
//! it, and compares every outcome frame by frame (ingress result, egress result, the bytes out).
//! The public programs and p4c's JSON are not in the repo: fetch them into a directory as
//! NAME.p4 and NAME.p4c.json (see bench/results/p4c_compiler.md for where they come from).
//!
//! cargo run --release -p lanes-p4c --example compare_public -- DIR

use lanes_p4::{EgressMeta, IngressResult, MatchKey, Program};
use std::path::Path;

fn entry(p: &mut Program, table: &str, keys: Vec<MatchKey>, action: &str, params: Vec<Vec<u8>>) {
    let t = p
        .table_id(table)
        .unwrap_or_else(|| panic!("no table {table}"));
    let a = p
        .action_id(t, action)
        .unwrap_or_else(|| panic!("no action {action} in {table}"));
    p.add_entry(t, keys, a, params, 0)
        .unwrap_or_else(|e| panic!("{table}: {e}"));
}

fn lpm(a: [u8; 4], n: u32) -> Vec<MatchKey> {
    vec![MatchKey::Lpm(a.to_vec(), n)]
}

fn csum(b: &[u8]) -> u16 {
    let mut s = 0u32;
    for c in b.chunks(2) {
        s += (u32::from(c[0]) << 8) | u32::from(*c.get(1).unwrap_or(&0));
    }
    while s > 0xffff {
        s = (s >> 16) + (s & 0xffff);
    }
    !(s as u16)
}

fn eth(t: u16) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 1];
    f.extend_from_slice(&t.to_be_bytes());
    f
}

fn ip(src: [u8; 4], dst: [u8; 4], proto: u8, tos: u8, ttl: u8) -> Vec<u8> {
    let mut h = vec![0x45, tos, 0, 40, 0, 1, 0x40, 0, ttl, proto, 0, 0];
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    let c = csum(&h);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    h
}

fn udp_payload() -> Vec<u8> {
    vec![
        0x04, 0xd2, 0x10, 0xe1, 0, 20, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
    ]
}

fn ipv4_frame(src: [u8; 4], dst: [u8; 4], tos: u8, ttl: u8) -> Vec<u8> {
    let mut f = eth(0x0800);
    f.extend(ip(src, dst, 17, tos, ttl));
    f.extend(udp_payload());
    f
}

/// Table entries and frames for one program.
fn scenario(name: &str, p: &mut Program) -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    let fwd = |p: &mut Program| {
        for h in 1..=3u8 {
            entry(
                p,
                // short names: p4c before 2.12 did not prefix the control's name
                "ipv4_lpm",
                lpm([10, 0, h, 0], 24),
                "ipv4_forward",
                vec![vec![0, 0, 0, 0, h, h], vec![h]],
            );
        }
    };
    let ipv4_mix = |frames: &mut Vec<Vec<u8>>| {
        for (i, d) in [[10, 0, 1, 1], [10, 0, 2, 2], [10, 0, 3, 3], [10, 9, 9, 9]]
            .iter()
            .enumerate()
        {
            for tos in [0u8, 1, 2, 3, 0xb8] {
                frames.push(ipv4_frame([10, 0, 1, 1], *d, tos, [64, 1, 0][i % 3]));
            }
        }
    };
    match name {
        "basic" | "ecn" | "qos" | "mri" | "load_balance" | "firewall" | "multicast" => {
            fwd(p);
            ipv4_mix(&mut frames);
        }
        "basic_tunnel" => {
            fwd(p);
            entry(
                p,
                "MyIngress.myTunnel_exact",
                vec![MatchKey::Exact(vec![0, 7])],
                "MyIngress.myTunnel_forward",
                vec![vec![3]],
            );
            ipv4_mix(&mut frames);
            for (dst, proto) in [(7u16, 0x0800u16), (8, 0x0800), (7, 0x1234)] {
                let mut f = eth(0x1212);
                f.extend_from_slice(&proto.to_be_bytes());
                f.extend_from_slice(&dst.to_be_bytes());
                f.extend(ip([10, 0, 1, 1], [10, 0, 2, 2], 17, 0, 64));
                f.extend(udp_payload());
                frames.push(f);
            }
        }
        "calc" => {
            // P4calc: 'P' '4' version 1, op, operand a, operand b, result
            for (op, a, b) in [
                (b'+', 7u32, 5u32),
                (b'-', 7, 5),
                (b'&', 6, 3),
                (b'|', 6, 3),
                (b'^', 6, 3),
                (b'*', 2, 3),
                (b'+', u32::MAX, 2),
            ] {
                for version in [1u8, 2] {
                    let mut f = eth(0x1234);
                    f.extend_from_slice(&[b'P', b'4', version, op]);
                    f.extend_from_slice(&a.to_be_bytes());
                    f.extend_from_slice(&b.to_be_bytes());
                    f.extend_from_slice(&[0; 4]);
                    frames.push(f);
                }
            }
            let mut short = eth(0x1234);
            short.extend_from_slice(&[b'P', b'4', 1]);
            frames.push(short);
        }
        "link_monitor" => {
            fwd(p);
            let t = p.table_id("MyEgress.swid").unwrap();
            let a = p.action_id(t, "MyEgress.set_swid").unwrap();
            p.set_default(t, a, vec![vec![5]]).unwrap();
            ipv4_mix(&mut frames);
            // probes: hop count, then data elements (bos last), then forwarding ports
            for hops in 0..3u8 {
                let mut f = eth(0x0812);
                f.push(hops);
                for i in 0..hops {
                    let mut d = vec![if i + 1 == hops { 0x81 } else { 0x01 }, 2];
                    d.extend_from_slice(&[0, 0, 1, 0]);
                    d.extend_from_slice(&[0; 12]);
                    f.extend(d);
                }
                for port in [2u8, 3, 1] {
                    f.push(port);
                }
                f.extend_from_slice(&[0xaa; 8]);
                frames.push(f);
            }
        }
        "typedef-test1" => {
            // addr0 addr1 etherType addr2, then the locals (local0 = ingress port, the rest 0)
            let m = |x: u8| vec![0, 0, 0, 0, 0, x];
            for port in [1u8, 2] {
                let keys = vec![
                    MatchKey::Exact(m(1)),
                    MatchKey::Exact(m(2)),
                    MatchKey::Exact(m(3)),
                    MatchKey::Exact(m(1)),
                    MatchKey::Exact(m(2)),
                    MatchKey::Exact(m(port)),
                    MatchKey::Exact(m(0)),
                    MatchKey::Exact(m(0)),
                    MatchKey::Exact(m(0)),
                ];
                let params = vec![m(0xa0 + port), m(0xb0), m(0xc0), vec![0x86, 0xdd]];
                entry(
                    p,
                    "ingress.custom_table",
                    keys,
                    "ingress.set_headers",
                    params,
                );
            }
            for (a1, et) in [(2u8, 0x0800u16), (3, 0x0800), (2, 0x0806)] {
                let mut f = m(1);
                f.extend(m(a1));
                f.extend_from_slice(&et.to_be_bytes());
                f.extend(m(3));
                f.extend_from_slice(&[0x55; 10]);
                frames.push(f);
            }
        }
        _ => ipv4_mix(&mut frames),
    }
    frames.push(vec![1, 2, 3]);
    let mut arp = eth(0x0806);
    arp.extend_from_slice(&[0; 28]);
    frames.push(arp);
    frames
}

/// Byte flips of each frame (deterministic): other parser paths, bad checksums, odd values.
fn mutations(frames: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for f in frames {
        for _ in 0..20 {
            let mut g = f.clone();
            for _ in 0..2 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if !g.is_empty() {
                    let i = (x as usize) % g.len();
                    g[i] ^= (x >> 32) as u8 | 1;
                }
            }
            out.push(g);
        }
    }
    out
}

fn tm_view(mut r: IngressResult) -> IngressResult {
    for f in [&mut r.queue_rate, &mut r.queue_quantum, &mut r.queue_burst] {
        if *f == Some(0) {
            *f = None;
        }
    }
    r
}

fn compare(dir: &Path, name: &str) -> Result<(usize, usize, usize), String> {
    let src = dir.join(format!("{name}.p4"));
    let ours_json = lanes_p4c::compile_file(&src, &lanes_p4c::Options::default())
        .map_err(|d| format!("lanes p4c: {d}"))?;
    let theirs_json =
        std::fs::read_to_string(dir.join(format!("{name}.p4c.json"))).map_err(|e| e.to_string())?;
    let mut ours =
        Program::load(&ours_json.json).map_err(|e| format!("our JSON does not load: {e}"))?;
    let mut theirs =
        Program::load(&theirs_json).map_err(|e| format!("p4c's JSON does not load: {e}"))?;
    let frames = scenario(name, &mut ours);
    scenario(name, &mut theirs);
    let mut all = frames.clone();
    all.extend(mutations(&frames));
    let (mut so, mut st) = (ours.new_state(), theirs.new_state());
    let (mut oo, mut ot) = (Vec::new(), Vec::new());
    let (mut same, mut forwarded) = (0, 0);
    for (k, f) in all.iter().enumerate() {
        let port = 1 + (k % 3) as u32;
        let now = 1_000_000 * k as u64;
        let a = ours.ingress(&mut so, f, port, now);
        let b = theirs.ingress(&mut st, f, port, now);
        // error codes are numbered differently by p4c versions: compare their names
        let named = |p: &Program, r: IngressResult| match r.drop {
            Some(lanes_p4::DropReason::ParserError(c)) => format!(
                "{:?} {:?}",
                p.error_name(c),
                tm_view(IngressResult { drop: None, ..r })
            ),
            _ => format!("{:?}", tm_view(r)),
        };
        if named(&ours, a) != named(&theirs, b) {
            return Err(format!("frame {k}: ingress {a:?} vs p4c {b:?}"));
        }
        if a.drop.is_none() {
            let meta = EgressMeta {
                egress_port: a.egress_spec,
                qid: u32::from(a.priority),
                enq_qdepth: (k % 30) as u64,
                ..EgressMeta::default()
            };
            let ea = ours.egress(&mut so, f, &meta, now + 1000, &mut oo);
            let eb = theirs.egress(&mut st, f, &meta, now + 1000, &mut ot);
            if ea != eb || (ea.drop.is_none() && oo[..ea.len] != ot[..eb.len]) {
                return Err(format!("frame {k}: egress {ea:?} vs p4c {eb:?}"));
            }
            if ea.drop.is_none() {
                forwarded += 1;
            }
        }
        same += 1;
    }
    // counters and registers, every cell
    let names = lanes_p4::p4info::P4Names::from_program(&ours);
    for c in &names.counters {
        for i in 0..c.size {
            let (a, b) = (
                ours.counter_read(&c.name, i),
                theirs.counter_read(&c.name, i),
            );
            if a.as_ref().ok() != b.as_ref().ok() {
                return Err(format!("counter {}[{i}]: {a:?} vs p4c {b:?}", c.name));
            }
        }
    }
    for r in &names.registers {
        for i in 0..r.size {
            let (a, b) = (
                ours.register_read(&r.name, i),
                theirs.register_read(&r.name, i),
            );
            if a.as_ref().ok() != b.as_ref().ok() {
                return Err(format!("register {}[{i}]: {a:?} vs p4c {b:?}", r.name));
            }
        }
    }
    Ok((all.len(), same, forwarded))
}

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: compare_public DIR (with NAME.p4 and NAME.p4c.json)");
        std::process::exit(2);
    };
    let dir = Path::new(&dir);
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| {
                    e.file_name()
                        .to_str()
                        .and_then(|n| n.strip_suffix(".p4c.json"))
                        .map(String::from)
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    println!("| program | frames | identical | forwarded | result |");
    println!("|---|---|---|---|---|");
    let mut failed = false;
    for n in names {
        match compare(dir, &n) {
            Ok((total, same, fwd)) => println!("| {n} | {total} | {same} | {fwd} | identical |"),
            Err(e) => {
                failed = true;
                println!("| {n} | | | | {e} |");
            }
        }
    }
    std::process::exit(i32::from(failed));
}

//! Runs the same frames through a program compiled by lanes p4c and through p4c's own JSON for
//! it, and compares every outcome frame by frame (ingress result, egress result, the bytes out).
//! The public programs and p4c's JSON are not in the repo: fetch them into a directory as
//! NAME.p4 and NAME.p4c.json (see bench/results/p4c_compiler.md for where they come from).
//!
//! cargo run --release -p lanes-p4c --example compare_public -- DIR

use lanes_p4::{EgressMeta, IngressResult, MatchKey, PacketState, Program, Reentry};
use std::path::Path;

#[path = "../tests/common/mod.rs"]
mod common;
use common::{csum, entry};

fn lpm(a: [u8; 4], n: u32) -> Vec<MatchKey> {
    vec![MatchKey::Lpm(a.to_vec(), n)]
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
        "label_routing" => {
            // label 1 -> port 2, label 2 popped to port 3, others dropped
            let t = "MyIngress.label_exact";
            entry(
                p,
                t,
                vec![MatchKey::Exact(vec![0, 1])],
                "MyIngress.label_output",
                vec![vec![0, 2]],
            );
            entry(
                p,
                t,
                vec![MatchKey::Exact(vec![0, 2])],
                "MyIngress.pop_label_output",
                vec![vec![0, 3]],
            );
            ipv4_mix(&mut frames);
            for (label, bos) in [(1u16, 1u16), (2, 1), (3, 0), (0x7fff, 1)] {
                let mut f = eth(0x1234);
                f.extend_from_slice(&((label << 1) | bos).to_be_bytes());
                f.extend(ip([10, 0, 1, 1], [10, 0, 2, 2], 17, 0, 64));
                f.extend(udp_payload());
                frames.push(f);
            }
        }
        "qos_priority" => {
            // EF (0xb8) and TOS 1 are high priority, the rest low
            for tos in [0xb8u8, 1] {
                entry(
                    p,
                    "MyIngress.qos_classify",
                    vec![MatchKey::Exact(vec![tos])],
                    "MyIngress.set_high_priority",
                    vec![],
                );
            }
            ipv4_mix(&mut frames);
        }
        "mri" => {
            fwd(p);
            let t = p.table_id("MyEgress.swtrace").unwrap();
            let a = p.action_id(t, "MyEgress.add_swtrace").unwrap();
            p.set_default(t, a, vec![vec![0, 0, 0, 7]]).unwrap();
            ipv4_mix(&mut frames);
            // IPv4 with the MRI option (31) and 0-3 switch traces, and another option
            for (option, hops) in [(31u8, 0u8), (31, 1), (31, 3), (7, 0)] {
                let mut ipo = ip([10, 0, 1, 1], [10, 0, 2, 2], 17, 0, 64);
                let words = 1 + 2 * hops;
                ipo[0] = 0x45 + words;
                let mut f = eth(0x0800);
                f.extend(ipo);
                f.extend_from_slice(&[option, 4 + 8 * hops, 0, hops]);
                for h in 0..hops {
                    f.extend_from_slice(&[0, 0, 0, h + 1, 0, 0, 0, 9]);
                }
                f.extend(udp_payload());
                frames.push(f);
            }
        }
        "basic" | "ecn" | "qos" | "load_balance" | "firewall" | "multicast" => {
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
        "v1model-special-ops" => {
            // lpm on the destination: plain, resubmit (to 10.1.0.9), clone to session 5,
            // multicast group 1, and an l2ptr whose bd clones egress-to-egress (session 11)
            let u32b = |v: u32| v.to_be_bytes().to_vec();
            for (net, action, param) in [
                (1u8, "ingress.set_l2ptr", u32b(0x100)),
                (2, "ingress.do_resubmit", vec![10, 1, 0, 9]),
                (3, "ingress.do_clone_i2e", u32b(0x100)),
                (4, "ingress.set_mcast_grp", vec![0, 1]),
                (5, "ingress.set_l2ptr", u32b(0x300)),
                (6, "ingress.set_l2ptr", u32b(0x200)),
            ] {
                entry(
                    p,
                    "ingress.ipv4_da_lpm",
                    vec![MatchKey::Lpm(vec![10, net, 0, 0], 16)],
                    action,
                    vec![param],
                );
            }
            // l2ptr -> (bd, dmac, port): first pass, resubmitted (0xe50b), recirculated (0xec1c)
            for (l2ptr, bd, port) in [
                (0x100u32, 10u32, 2u16),
                (0xe50b, 20, 3),
                (0xec1c, 10, 4),
                (0x300, 30, 1),
                (0x200, 40, 2),
            ] {
                let bd = bd.to_be_bytes()[1..].to_vec();
                entry(
                    p,
                    "ingress.mac_da",
                    vec![MatchKey::Exact(u32b(l2ptr))],
                    "ingress.set_bd_dmac_intf",
                    vec![
                        bd,
                        vec![0, 0, 0, 0xd, 0xd, l2ptr as u8],
                        port.to_be_bytes().to_vec(),
                    ],
                );
            }
            let smac = vec![0, 0, 0, 0x5, 0x5, 0x5];
            entry(
                p,
                "egress.send_frame",
                vec![MatchKey::Exact(vec![0, 0, 10])],
                "egress.rewrite_mac",
                vec![smac.clone()],
            );
            entry(
                p,
                "egress.send_frame",
                vec![MatchKey::Exact(vec![0, 0, 20])],
                "egress.do_recirculate",
                vec![vec![10, 1, 0, 7]],
            );
            entry(
                p,
                "egress.send_frame",
                vec![MatchKey::Exact(vec![0, 0, 30])],
                "egress.do_clone_e2e",
                vec![smac],
            );
            for (i, d) in [
                [10, 1, 0, 1],
                [10, 2, 0, 1],
                [10, 3, 0, 1],
                [10, 4, 0, 1],
                [10, 5, 0, 1],
                [10, 6, 0, 1],
                [10, 9, 9, 9],
            ]
            .iter()
            .enumerate()
            {
                for ttl in [64u8, 1] {
                    frames.push(ipv4_frame([10, 0, 1, 1], *d, i as u8, ttl));
                }
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

/// The two programs, run in lockstep on the same packets and the packets they make.
struct Pair<'a> {
    ours: &'a mut Program,
    theirs: &'a mut Program,
    /// Frames egress sent (originals, copies and later passes).
    sent: usize,
    /// Clones, resubmissions and recirculations both asked for.
    copies: usize,
}

/// At most this many passes through ingress per arrival (resubmit and recirculate loops).
const MAX_PASSES: u8 = 4;

impl Pair<'_> {
    /// One pass of `pkt` through both (ingress, then egress unless dropped or resubmitted),
    /// following every clone, resubmission and recirculation; digests compared as they come.
    #[allow(clippy::too_many_arguments)]
    fn pass(
        &mut self,
        so: &mut PacketState,
        st: &mut PacketState,
        pkt: &[u8],
        port: u32,
        now: u64,
        again: Option<(Reentry, Reentry)>,
        k: usize,
    ) -> Result<(), String> {
        let (a, b) = match again {
            None => (
                self.ours.ingress(so, pkt, port, now),
                self.theirs.ingress(st, pkt, port, now),
            ),
            Some((ro, rt)) => (
                self.ours.reingress(so, pkt, port, now, ro),
                self.theirs.reingress(st, pkt, port, now, rt),
            ),
        };
        // error codes are numbered differently by p4c versions: compare their names
        let named = |p: &Program, r: IngressResult| match r.drop {
            Some(lanes_p4::DropReason::ParserError(c)) => format!(
                "{:?} {:?}",
                p.error_name(c),
                tm_view(IngressResult { drop: None, ..r })
            ),
            _ => format!("{:?}", tm_view(r)),
        };
        if named(self.ours, a) != named(self.theirs, b) {
            return Err(format!("ingress {a:?} vs p4c {b:?}"));
        }
        let (mut da, mut db) = (Vec::new(), Vec::new());
        self.ours.take_digests(so, &mut da);
        self.theirs.take_digests(st, &mut db);
        if da
            .iter()
            .map(|d| &d.fields)
            .ne(db.iter().map(|d| &d.fields))
        {
            return Err(format!("digests {da:?} vs p4c {db:?}"));
        }
        let (ca, cb) = (so.take_clone(), st.take_clone());
        if ca.map(|c| c.session) != cb.map(|c| c.session) {
            return Err(format!("ingress clone {ca:?} vs p4c {cb:?}"));
        }
        if let (Some(ra), Some(rb)) = (ca, cb) {
            self.copies += 1;
            let (mut xo, mut xt) = (self.ours.new_state(), self.theirs.new_state());
            let qa = self
                .ours
                .ingress_clone(so, &mut xo, pkt, port, now, ra, None);
            let qb = self
                .theirs
                .ingress_clone(st, &mut xt, pkt, port, now, rb, None);
            if qa != qb {
                return Err(format!("I2E copy priority {qa:?} vs p4c {qb:?}"));
            }
            self.egress(&mut xo, &mut xt, pkt, ra.session, port, now, k)
                .map_err(|e| format!("I2E copy: {e}"))?;
        }
        let (ra, rb) = (so.take_resubmit(), st.take_resubmit());
        if ra.is_some() != rb.is_some() {
            return Err(format!("resubmit {ra:?} vs p4c {rb:?}"));
        }
        if let (Some(ra), Some(rb)) = (ra, rb) {
            // a resubmission wins over forwarding
            self.copies += 1;
            if so.passes() + 1 < MAX_PASSES {
                return self.pass(so, st, pkt, port, now + 10, Some((ra, rb)), k);
            }
            return Ok(());
        }
        if a.drop.is_some() {
            return Ok(());
        }
        self.egress(so, st, pkt, a.egress_spec, port, now, k)
    }

    /// Egress of both states to `port`, then the E2E clone and recirculation it asks for
    /// (`arrival`: the port the packet first came in on).
    #[allow(clippy::too_many_arguments)]
    fn egress(
        &mut self,
        so: &mut PacketState,
        st: &mut PacketState,
        pkt: &[u8],
        port: u32,
        arrival: u32,
        now: u64,
        k: usize,
    ) -> Result<(), String> {
        let meta = EgressMeta {
            egress_port: port,
            qid: 0,
            enq_qdepth: (k % 30) as u64,
            ..EgressMeta::default()
        };
        let (mut oo, mut ot) = (Vec::new(), Vec::new());
        let ea = self.ours.egress(so, pkt, &meta, now + 1000, &mut oo);
        let eb = self.theirs.egress(st, pkt, &meta, now + 1000, &mut ot);
        if ea != eb || (ea.drop.is_none() && oo[..ea.len] != ot[..eb.len]) {
            return Err(format!("egress {ea:?} vs p4c {eb:?}"));
        }
        if ea.drop.is_none() {
            self.sent += 1;
        }
        let (ca, cb) = (so.take_clone(), st.take_clone());
        if ca.map(|c| c.session) != cb.map(|c| c.session) {
            return Err(format!("egress clone {ca:?} vs p4c {cb:?}"));
        }
        if let (Some(ra), Some(rb)) = (ca, cb) {
            self.copies += 1;
            let (mut xo, mut xt) = (self.ours.new_state(), self.theirs.new_state());
            self.ours.egress_clone(so, &mut xo, ra, None);
            self.theirs.egress_clone(st, &mut xt, rb, None);
            if so.clone_generation() < 3 {
                self.egress(&mut xo, &mut xt, &oo, ra.session, arrival, now + 500, k)
                    .map_err(|e| format!("E2E copy: {e}"))?;
            }
        }
        let (ra, rb) = (so.take_recirculate(), st.take_recirculate());
        if ra.is_some() != rb.is_some() {
            return Err(format!("recirculate {ra:?} vs p4c {rb:?}"));
        }
        if let (Some(ra), Some(rb)) = (ra, rb) {
            self.copies += 1;
            if so.passes() + 1 < MAX_PASSES {
                return self.pass(so, st, &oo, arrival, now + 2000, Some((ra, rb)), k);
            }
        }
        Ok(())
    }
}

fn compare(dir: &Path, name: &str) -> Result<(usize, usize, usize, usize), String> {
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
    let (mut same, mut forwarded) = (0, 0);
    let mut pair = Pair {
        ours: &mut ours,
        theirs: &mut theirs,
        sent: 0,
        copies: 0,
    };
    for (k, f) in all.iter().enumerate() {
        let port = 1 + (k % 3) as u32;
        let now = 1_000_000 * k as u64;
        let (mut so, mut st) = (pair.ours.new_state(), pair.theirs.new_state());
        pair.pass(&mut so, &mut st, f, port, now, None, k)
            .map_err(|e| format!("frame {k}: {e}"))?;
        same += 1;
    }
    forwarded += pair.sent;
    let copies = pair.copies;
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
    Ok((all.len(), same, forwarded, copies))
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
    println!("| program | frames | identical | sent | copies | result |");
    println!("|---|---|---|---|---|---|");
    let mut failed = false;
    for n in names {
        match compare(dir, &n) {
            Ok((total, same, fwd, copies)) => {
                println!("| {n} | {total} | {same} | {fwd} | {copies} | identical |")
            }
            Err(e) => {
                failed = true;
                println!("| {n} | | | | | {e} |");
            }
        }
    }
    std::process::exit(i32::from(failed));
}

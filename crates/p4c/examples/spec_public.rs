//! Public programs with no published p4c JSON, compiled by lanes p4c and checked frame by frame
//! against what the program is documented to do, every expected output built here from the
//! program's description (not from the switch): the P4 tutorials' firewall (a stateful
//! firewall: TCP from outside passes only on a flow that an inside host opened with a SYN,
//! remembered in two bloom filters, crc16 and crc32 of the 5-tuple modulo 4096) and the
//! p4runtime exercise's advanced_tunnel (IPv4 routing plus a tunnel header added, forwarded
//! and removed by table entries, with per-tunnel counters). The programs are not in the repo:
//! fetch them into DIR as firewall.p4 and advanced_tunnel.p4 (see bench/results/p4c_compiler.md).
//!
//! cargo run --release -p lanes-p4c --example spec_public -- DIR

use lanes_p4::{EgressMeta, MatchKey, Program};
use std::path::Path;

#[path = "../tests/common/mod.rs"]
mod common;
use common::{csum, entry};

/// CRC-16/ARC (bmv2's crc16): reflected polynomial 0x8005, initial 0, no final xor.
fn crc16(data: &[u8]) -> u32 {
    let mut c: u16 = 0;
    for &b in data {
        c ^= u16::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xa001
            } else {
                c >> 1
            };
        }
    }
    u32::from(c)
}

/// CRC-32 (IEEE, as zlib): reflected 0x04c11db7, initial and final xor 0xffffffff.
fn crc32(data: &[u8]) -> u32 {
    let mut c: u32 = 0xffff_ffff;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xedb8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

const SW_MAC: [u8; 6] = [0, 0, 0, 0, 0x0e, 0x0e];

fn host_mac(h: u8) -> [u8; 6] {
    [8, 0, 0, 0, h, h * 0x11]
}

/// IPv4 header (protocol, ttl) with a valid checksum.
fn ipv4(src: [u8; 4], dst: [u8; 4], proto: u8, ttl: u8, payload: usize) -> Vec<u8> {
    let len = (20 + payload) as u16;
    let mut h = vec![0x45, 0, 0, 0, 0, 1, 0x40, 0, ttl, proto, 0, 0];
    h[2..4].copy_from_slice(&len.to_be_bytes());
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    let c = csum(&h);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    h
}

fn eth(dst: [u8; 6], src: [u8; 6], t: u16) -> Vec<u8> {
    let mut f = dst.to_vec();
    f.extend_from_slice(&src);
    f.extend_from_slice(&t.to_be_bytes());
    f
}

/// TCP header with the given flags byte (0x02 SYN, 0x10 ACK).
fn tcp(sport: u16, dport: u16, flags: u8) -> Vec<u8> {
    let mut t = Vec::new();
    t.extend_from_slice(&sport.to_be_bytes());
    t.extend_from_slice(&dport.to_be_bytes());
    t.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, flags, 0x10, 0, 0, 0, 0, 0]);
    t
}

fn ip_of(h: u8) -> [u8; 4] {
    [10, 0, h, h]
}

/// A frame from host `from` to host `to` (TCP when `tcp_part` is given, else 8 bytes of UDP).
fn frame(from: u8, to: u8, l4: Option<Vec<u8>>, ttl: u8) -> Vec<u8> {
    let (proto, payload) = match l4 {
        Some(t) => (6, t),
        None => (17, vec![0x30, 0x39, 0x00, 0x35, 0, 8, 0, 0]),
    };
    let mut f = eth(SW_MAC, host_mac(from), 0x0800);
    f.extend(ipv4(ip_of(from), ip_of(to), proto, ttl, payload.len()));
    f.extend(payload);
    f
}

/// What a router sends: MACs rewritten (source the old destination), TTL one less.
fn routed(f: &[u8], to: u8) -> Vec<u8> {
    let mut out = f.to_vec();
    out[6..12].copy_from_slice(&f[0..6]);
    out[0..6].copy_from_slice(&host_mac(to));
    out[22] -= 1;
    out[24..26].copy_from_slice(&[0, 0]);
    let c = csum(&out[14..34]);
    out[24..26].copy_from_slice(&c.to_be_bytes());
    out
}

/// (egress port, bytes out), or None when dropped.
fn run(p: &mut Program, f: &[u8], port: u32) -> Option<(u32, Vec<u8>)> {
    let mut st = p.new_state();
    let ig = p.ingress(&mut st, f, port, 0);
    if ig.drop.is_some() {
        return None;
    }
    let mut out = Vec::new();
    let meta = EgressMeta {
        egress_port: ig.egress_spec,
        ..Default::default()
    };
    let eg = p.egress(&mut st, f, &meta, 0, &mut out);
    if eg.drop.is_some() {
        return None;
    }
    Some((ig.egress_spec, out[..eg.len].to_vec()))
}

fn host_routes(p: &mut Program) {
    for h in 1..=4u8 {
        entry(
            p,
            "MyIngress.ipv4_lpm",
            vec![MatchKey::Lpm(ip_of(h).to_vec(), 32)],
            "MyIngress.ipv4_forward",
            vec![host_mac(h).to_vec(), vec![0, h]],
        );
    }
}

type Check = (String, Option<(u32, Vec<u8>)>, Option<(u32, Vec<u8>)>);

/// Hosts 1 and 2 inside (ports 1, 2), 3 and 4 outside (ports 3, 4), as in the tutorial.
fn firewall(p: &mut Program) -> Result<Vec<Check>, String> {
    host_routes(p);
    for (i, e, dir) in [
        (1u8, 3u8, 0u8),
        (1, 4, 0),
        (2, 3, 0),
        (2, 4, 0),
        (3, 1, 1),
        (4, 1, 1),
        (3, 2, 1),
        (4, 2, 1),
    ] {
        entry(
            p,
            "MyIngress.check_ports",
            vec![MatchKey::Exact(vec![0, i]), MatchKey::Exact(vec![0, e])],
            "MyIngress.set_direction",
            vec![vec![dir]],
        );
    }
    let cell = |inside: u8, outside: u8, sport: u16, dport: u16| {
        let mut t = ip_of(inside).to_vec();
        t.extend_from_slice(&ip_of(outside));
        t.extend_from_slice(&sport.to_be_bytes());
        t.extend_from_slice(&dport.to_be_bytes());
        t.push(6);
        (u64::from(crc16(&t) % 4096), u64::from(crc32(&t) % 4096))
    };
    let mut checks: Vec<Check> = Vec::new();
    let mut go =
        |p: &mut Program, what: &str, f: Vec<u8>, port: u32, want: Option<(u32, Vec<u8>)>| {
            checks.push((what.to_string(), run(p, &f, port), want));
        };
    let syn = frame(1, 3, Some(tcp(1234, 80, 0x02)), 64);
    go(
        p,
        "inside SYN h1->h3 forwarded",
        syn.clone(),
        1,
        Some((3, routed(&syn, 3))),
    );
    let reply = frame(3, 1, Some(tcp(80, 1234, 0x12)), 64);
    go(
        p,
        "its reply h3->h1 passes",
        reply.clone(),
        3,
        Some((1, routed(&reply, 1))),
    );
    let stranger = frame(4, 1, Some(tcp(5555, 22, 0x02)), 64);
    go(p, "outside SYN h4->h1 dropped", stranger, 4, None);
    let ack = frame(1, 4, Some(tcp(2222, 443, 0x10)), 64);
    go(
        p,
        "inside ACK h1->h4 forwarded",
        ack.clone(),
        1,
        Some((4, routed(&ack, 4))),
    );
    let ack_reply = frame(4, 1, Some(tcp(443, 2222, 0x10)), 64);
    go(
        p,
        "reply to a flow opened without SYN dropped",
        ack_reply,
        4,
        None,
    );
    let internal = frame(1, 2, Some(tcp(1000, 2000, 0x02)), 64);
    go(
        p,
        "inside to inside forwarded",
        internal.clone(),
        1,
        Some((2, routed(&internal, 2))),
    );
    let udp = frame(3, 1, None, 64);
    go(
        p,
        "UDP from outside forwarded",
        udp.clone(),
        3,
        Some((1, routed(&udp, 1))),
    );
    let mut miss = frame(1, 3, Some(tcp(1, 2, 0x02)), 64);
    miss[33] = 9; // 10.0.3.9: no route
    let c = {
        let mut h = miss[14..34].to_vec();
        h[10..12].copy_from_slice(&[0, 0]);
        csum(&h)
    };
    miss[24..26].copy_from_slice(&c.to_be_bytes());
    go(p, "no route dropped", miss, 1, None);
    // the filters hold exactly the SYN's flow (and the inside-to-inside SYN is not remembered)
    let (a, b) = cell(1, 3, 1234, 80);
    for (name, set) in [
        ("MyIngress.bloom_filter_1", a),
        ("MyIngress.bloom_filter_2", b),
    ] {
        let ones: Vec<u64> = (0..4096)
            .filter(|&i| p.register_read(name, i).unwrap_or(0) != 0)
            .collect();
        checks.push((
            format!("{name} cells set"),
            Some((0, ones.iter().flat_map(|i| i.to_be_bytes()).collect())),
            Some((0, set.to_be_bytes().to_vec())),
        ));
    }
    Ok(checks)
}

fn tunnel(p: &mut Program) -> Result<Vec<Check>, String> {
    entry(
        p,
        "MyIngress.ipv4_lpm",
        vec![MatchKey::Lpm(ip_of(2).to_vec(), 32)],
        "MyIngress.myTunnel_ingress",
        vec![vec![0, 100]],
    );
    entry(
        p,
        "MyIngress.ipv4_lpm",
        vec![MatchKey::Lpm(ip_of(3).to_vec(), 32)],
        "MyIngress.ipv4_forward",
        vec![host_mac(3).to_vec(), vec![0, 3]],
    );
    entry(
        p,
        "MyIngress.myTunnel_exact",
        vec![MatchKey::Exact(vec![0, 100])],
        "MyIngress.myTunnel_forward",
        vec![vec![0, 2]],
    );
    entry(
        p,
        "MyIngress.myTunnel_exact",
        vec![MatchKey::Exact(vec![0, 200])],
        "MyIngress.myTunnel_egress",
        vec![host_mac(2).to_vec(), vec![0, 1]],
    );
    let tunneled = |f: &[u8], id: u16| {
        let mut t = f[..12].to_vec();
        t.extend_from_slice(&0x1212u16.to_be_bytes());
        t.extend_from_slice(&0x0800u16.to_be_bytes());
        t.extend_from_slice(&id.to_be_bytes());
        t.extend_from_slice(&f[14..]);
        t
    };
    let mut checks: Vec<Check> = Vec::new();
    let mut go =
        |p: &mut Program, what: &str, f: Vec<u8>, port: u32, want: Option<(u32, Vec<u8>)>| {
            checks.push((what.to_string(), run(p, &f, port), want));
        };
    let to2 = frame(1, 2, None, 64);
    go(
        p,
        "IPv4 to h2 enters tunnel 100, forwarded to port 2",
        to2.clone(),
        1,
        Some((2, tunneled(&to2, 100))),
    );
    let to3 = frame(1, 3, None, 64);
    go(
        p,
        "IPv4 to h3 routed",
        to3.clone(),
        1,
        Some((3, routed(&to3, 3))),
    );
    let to9 = frame(1, 9, None, 64);
    go(
        p,
        "IPv4 with no route: NoAction, port 0 unchanged",
        to9.clone(),
        1,
        Some((0, to9)),
    );
    let inner = frame(1, 2, None, 64);
    let mut exit = tunneled(&inner, 200);
    let mut out = inner.clone();
    out[0..6].copy_from_slice(&host_mac(2));
    go(
        p,
        "tunnel 200 leaves the tunnel to port 1",
        exit.clone(),
        2,
        Some((1, out)),
    );
    let through = tunneled(&inner, 100);
    go(
        p,
        "tunnel 100 forwarded unchanged",
        through.clone(),
        3,
        Some((2, through)),
    );
    exit[16..18].copy_from_slice(&300u16.to_be_bytes());
    go(p, "unknown tunnel 300 dropped", exit, 2, None);
    let n = inner.len() as u64;
    for (name, idx, want) in [
        ("MyIngress.ingressTunnelCounter", 100, (1, n)),
        ("MyIngress.egressTunnelCounter", 200, (1, n + 4)),
        ("MyIngress.egressTunnelCounter", 100, (0, 0)),
    ] {
        let c = p.counter_read(name, idx).map_err(|e| e.to_string())?;
        let enc = |(a, b): (u64, u64)| [a.to_be_bytes(), b.to_be_bytes()].concat();
        checks.push((
            format!("{name}[{idx}]"),
            Some((0, enc((c.packets, c.bytes)))),
            Some((0, enc(want))),
        ));
    }
    Ok(checks)
}

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: spec_public DIR (with firewall.p4 and advanced_tunnel.p4)");
        std::process::exit(2);
    };
    let mut failed = false;
    println!("| program | checks | as specified | result |");
    println!("|---|---|---|---|");
    type Spec = fn(&mut Program) -> Result<Vec<Check>, String>;
    for (name, spec) in [
        ("firewall", firewall as Spec),
        ("advanced_tunnel", tunnel as Spec),
    ] {
        let path = Path::new(&dir).join(format!("{name}.p4"));
        let out = match lanes_p4c::compile_file(&path, &lanes_p4c::Options::default()) {
            Ok(o) => o,
            Err(d) => {
                failed = true;
                println!("| {name} | | | {d} |");
                continue;
            }
        };
        let mut p = match Program::load(&out.json) {
            Ok(p) => p,
            Err(e) => {
                failed = true;
                println!("| {name} | | | load: {e} |");
                continue;
            }
        };
        match spec(&mut p) {
            Ok(checks) => {
                let bad: Vec<&Check> = checks.iter().filter(|c| c.1 != c.2).collect();
                for (what, got, want) in &bad {
                    eprintln!("{name}: {what}: got {got:?}, expected {want:?}");
                }
                failed |= !bad.is_empty();
                let res = if bad.is_empty() {
                    "as specified".to_string()
                } else {
                    format!("{} differ", bad.len())
                };
                println!(
                    "| {name} | {} | {} | {res} |",
                    checks.len(),
                    checks.len() - bad.len()
                );
            }
            Err(e) => {
                failed = true;
                println!("| {name} | | | {e} |");
            }
        }
    }
    std::process::exit(i32::from(failed));
}

//! Behaviour checks of p4c-compiled programs from other repositories (see
//! bench/results/p4c_programs.md for where each comes from; the files are not in this repo).
//! Each block installs entries, sends frames through the whole pipeline and asserts the output.
//!
//! cargo run --release -p lanes-p4 --example p4c_corpus_check -- [DIR (default /tmp/p4c-corpus)]

use lanes_p4::{csum16, EgressMeta, MatchKey, Program};
fn load(n: &str) -> Program {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "/tmp/p4c-corpus".into());
    let path = format!("{dir}/{n}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("p4c_corpus_check: {path}: {e}");
        std::process::exit(2)
    });
    Program::load(&text).unwrap_or_else(|e| {
        eprintln!("p4c_corpus_check: {path}: {e}");
        std::process::exit(1)
    })
}
fn ipv4(dst: [u8; 4], ttl: u8) -> Vec<u8> {
    let mut h = vec![0x45, 0, 0, 28, 0, 1, 0, 0, ttl, 17, 0, 0, 10, 0, 1, 1];
    h.extend_from_slice(&dst);
    let c = csum16(&h);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    h.extend_from_slice(&[0x12, 0x34, 0x56, 0x78, 0, 8, 0, 0]);
    h
}
fn eth(ty: u16, rest: &[u8]) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 0xaa, 0, 0, 0, 0, 0, 0xbb];
    f.extend_from_slice(&ty.to_be_bytes());
    f.extend_from_slice(rest);
    f
}
fn main() {
    // tutorials basic.p4 (p4c 2.23): LPM route, MAC rewrite, TTL-1, checksum update
    let mut p = load("bmv2_output_all_pkts_basic.json");
    let t = p.table_id("MyIngress.ipv4_lpm").unwrap();
    let a = p.action_id(t, "MyIngress.ipv4_forward").unwrap();
    p.add_entry(
        t,
        vec![MatchKey::Lpm(vec![10, 0, 2, 0], 24)],
        a,
        vec![vec![0, 0, 0, 0, 2, 2], vec![2]],
        0,
    )
    .unwrap();
    let (mut st, mut out) = (p.new_state(), Vec::new());
    let f = eth(0x0800, &ipv4([10, 0, 2, 2], 64));
    let (ig, eg) = p.process(&mut st, &f, 1, 0, &mut out);
    assert_eq!((eg.drop, ig.egress_spec), (None, 2));
    assert_eq!(&out[0..12], &[0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 0, 0xaa]);
    assert_eq!(out[14 + 8], 63, "ttl");
    assert_eq!(csum16(&out[14..34]), 0, "ipv4 checksum valid after update");
    assert_eq!(&out[34..], &f[34..], "payload kept");
    let ttl_out = out[22];
    let (_, eg) = p.process(
        &mut st,
        &eth(0x0800, &ipv4([10, 9, 9, 9], 64)),
        1,
        0,
        &mut out,
    );
    assert!(eg.drop.is_some(), "no route: default drop");
    println!(
        "basic: route, ttl {} -> {}, checksum ok, miss dropped",
        f[22], ttl_out
    );

    // basic_tunnel: myTunnel_exact on dst_id
    let mut p = load("tutorials_basic_tunnel.json");
    let t = p.table_id("MyIngress.myTunnel_exact").unwrap();
    let a = p.action_id(t, "MyIngress.myTunnel_forward").unwrap();
    p.add_entry(t, vec![MatchKey::Exact(vec![0, 7])], a, vec![vec![3]], 0)
        .unwrap();
    let mut tun = vec![0x08, 0x00, 0, 7];
    tun.extend_from_slice(&ipv4([10, 0, 3, 3], 64));
    let f = eth(0x1212, &tun);
    let mut st = p.new_state();
    let (ig, eg) = p.process(&mut st, &f, 1, 0, &mut out);
    assert_eq!((eg.drop, ig.egress_spec), (None, 3));
    assert_eq!(out, f, "tunnelled packet forwarded unchanged");
    println!("basic_tunnel: dst_id 7 -> port 3, bytes unchanged");

    // link_monitor: probe with one forwarding hop; egress pushes a probe_data element
    let mut p = load("tutorials_link_monitor.json");
    let mut st = p.new_state();
    let f = eth(0x0812, &[0x00, 0x02, 0xde, 0xad]); // hop_cnt 0, probe_fwd[0].egress_spec 2, payload
    let (ig, eg) = p.process(&mut st, &f, 1, 0, &mut out);
    assert_eq!((eg.drop, ig.egress_spec), (None, 2));
    assert_eq!(out[14], 1, "hop_cnt incremented");
    assert_eq!(
        out.len(),
        f.len() + 18,
        "one probe_data element (18 bytes) pushed"
    );
    assert_eq!(out[15] & 0x80, 0x80, "bos set on the first hop");
    assert_eq!(
        &out[out.len() - 3..],
        &[0x02, 0xde, 0xad],
        "probe_fwd and payload follow"
    );
    println!(
        "link_monitor: probe out port 2, hop_cnt 1, probe_data pushed ({} -> {} bytes)",
        f.len(),
        out.len()
    );

    // label routing: pop the label and forward as IPv4
    let mut p = load("lab2_source_routing_label.json");
    let t = p.table_id("MyIngress.label_exact").unwrap();
    let a = p.action_id(t, "MyIngress.pop_label_output").unwrap();
    p.add_entry(t, vec![MatchKey::Exact(vec![0, 5])], a, vec![vec![4]], 0)
        .unwrap();
    let mut lab = vec![0x00, 0x0b]; // label 5, bos 1
    lab.extend_from_slice(&ipv4([10, 0, 4, 4], 64));
    let f = eth(0x1234, &lab);
    let mut st = p.new_state();
    let (ig, eg) = p.process(&mut st, &f, 1, 0, &mut out);
    assert_eq!((eg.drop, ig.egress_spec), (None, 4));
    assert_eq!(&out[12..14], &[0x08, 0x00]);
    assert_eq!(out.len(), f.len() - 2, "label removed");
    println!("label routing: label 5 popped, out port 4, ethertype 0x0800");

    // calc: lookahead<p4calc_t>() (128 bits) in the select, const entries on the op
    let mut p = load("tutorials_calc.json");
    let mut st = p.new_state();
    for (op, a, b, want) in [
        (b'+', 7u32, 5u32, 12u32),
        (b'-', 7, 5, 2),
        (b'&', 6, 3, 2),
        (b'|', 6, 3, 7),
        (b'^', 6, 3, 5),
    ] {
        let mut c = vec![0x50, 0x34, 0x01, op];
        c.extend_from_slice(&a.to_be_bytes());
        c.extend_from_slice(&b.to_be_bytes());
        c.extend_from_slice(&0u32.to_be_bytes());
        let f = eth(0x1234, &c);
        let (ig, eg) = p.process(&mut st, &f, 3, 0, &mut out);
        assert_eq!(
            (eg.drop, ig.egress_spec),
            (None, 3),
            "sent back on the ingress port"
        );
        assert_eq!(
            u32::from_be_bytes(out[26..30].try_into().unwrap()),
            want,
            "{}",
            op as char
        );
        assert_eq!(&out[0..6], &f[6..12], "MACs swapped");
    }
    let mut c = vec![0x50, 0x34, 0x02, b'+'];
    c.extend_from_slice(&[0; 12]);
    let (_, eg) = p.process(&mut st, &eth(0x1234, &c), 3, 0, &mut out);
    assert!(
        eg.drop.is_some(),
        "wrong version: not parsed as p4calc, dropped"
    );
    let (_, eg) = p.process(&mut st, &eth(0x1234, &[0x50, 0x34]), 3, 0, &mut out);
    assert!(
        eg.drop.is_some(),
        "too short for the 128-bit lookahead: dropped"
    );
    println!("calc: + - & | ^ computed, wrong version and short frame dropped");

    // ecn (p4c 2.7, checksum without verify/update flags): mark CE when enq_qdepth >= 4
    let mut p = load("assignment_ecn_p4c2.7.json");
    let t = p.table_id("ipv4_lpm").unwrap();
    let a = p.action_id(t, "ipv4_forward").unwrap();
    p.add_entry(
        t,
        vec![MatchKey::Lpm(vec![10, 0, 2, 0], 24)],
        a,
        vec![vec![0, 0, 0, 0, 2, 2], vec![2]],
        0,
    )
    .unwrap();
    let mut ip = ipv4([10, 0, 2, 2], 64);
    ip[1] = 0x01; // ECT(1)
    let c = {
        ip[10] = 0;
        ip[11] = 0;
        csum16(&ip[..20])
    };
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let f = eth(0x0800, &ip);
    for (depth, ecn) in [(5u64, 3u8), (1, 1)] {
        let mut st = p.new_state();
        let ig = p.ingress(&mut st, &f, 1, 0);
        assert_eq!((ig.drop, ig.egress_spec), (None, 2));
        let meta = EgressMeta {
            egress_port: 2,
            enq_qdepth: depth,
            ..Default::default()
        };
        let eg = p.egress(&mut st, &f, &meta, 0, &mut out);
        assert_eq!(eg.drop, None);
        assert_eq!(out[15] & 3, ecn, "depth {depth}");
        assert_eq!(csum16(&out[14..34]), 0, "checksum updated");
    }
    assert_eq!(
        p.stats().checksum_errors,
        0,
        "valid input checksums verified"
    );
    println!("ecn: CE marked at enq_qdepth 5, not at 1; checksum updated");
}

//! Shared by the compiler's tests: compiling p4/ programs and building frames.
#![allow(dead_code)]

use lanes_p4::{DropReason, EgressMeta, MatchKey, Program};
use std::path::PathBuf;

pub fn repo_path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

/// Compiles `p4/NAME.p4` (panics with the diagnostic).
pub fn compile(name: &str) -> lanes_p4c::Output {
    let path = repo_path(&format!("p4/{name}.p4"));
    lanes_p4c::compile_file(&path, &lanes_p4c::Options::default()).unwrap_or_else(|d| panic!("{d}"))
}

/// Calls of [`compile_src`] so far in this process: tests run in parallel threads and may
/// compile under the same tag, so each call gets a directory of its own.
static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Compiles P4 source text written to a temporary file; the diagnostic on failure.
pub fn compile_src(tag: &str, src: &str) -> Result<lanes_p4c::Output, String> {
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("lanes-p4c-test-{}-{tag}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("prog.p4");
    std::fs::write(&path, src).unwrap();
    let r =
        lanes_p4c::compile_file(&path, &lanes_p4c::Options::default()).map_err(|d| d.to_string());
    let _ = std::fs::remove_dir_all(&dir);
    r
}

/// The diagnostic of a program that must not compile: one line, with the temporary directory
/// cut off the file name.
pub fn one_line_error(tag: &str, src: &str) -> String {
    let e = compile_src(tag, src).expect_err("should not compile");
    assert_eq!(e.lines().count(), 1, "one line: {e}");
    match e.find("prog.p4:") {
        Some(i) => e[i..].to_string(),
        None => e,
    }
}

/// One frame in on `port` through ingress and egress: (egress port, priority, bytes out), or the
/// drop.
pub fn pass(p: &mut Program, f: &[u8], port: u32) -> Result<(u32, u8, Vec<u8>), DropReason> {
    let mut st = p.new_state();
    let ig = p.ingress(&mut st, f, port, 0);
    if let Some(d) = ig.drop {
        return Err(d);
    }
    let mut out = Vec::new();
    let meta = EgressMeta {
        egress_port: ig.egress_spec,
        ..Default::default()
    };
    let eg = p.egress(&mut st, f, &meta, 0, &mut out);
    if let Some(d) = eg.drop {
        return Err(d);
    }
    Ok((ig.egress_spec, ig.priority, out[..eg.len].to_vec()))
}

/// Installs one entry; a table or action the program lacks stops with its name.
pub fn entry(p: &mut Program, table: &str, keys: Vec<MatchKey>, action: &str, data: Vec<Vec<u8>>) {
    let t = p
        .table_id(table)
        .unwrap_or_else(|| panic!("no table {table}"));
    let a = p
        .action_id(t, action)
        .unwrap_or_else(|| panic!("no action {action} in {table}"));
    p.add_entry(t, keys, a, data, 0)
        .unwrap_or_else(|e| panic!("{table}: {e}"));
}

pub fn load(json: &str) -> Program {
    Program::load(json).unwrap_or_else(|e| panic!("{e}"))
}

pub fn csum(b: &[u8]) -> u16 {
    let mut sum = 0u32;
    for c in b.chunks(2) {
        sum += (u32::from(c[0]) << 8) | u32::from(*c.get(1).unwrap_or(&0));
    }
    while sum > 0xffff {
        sum = (sum >> 16) + (sum & 0xffff);
    }
    !(sum as u16)
}

/// Ethernet (given EtherType) + IPv4 (valid checksum unless `bad_csum`) + 8 payload bytes.
pub fn ipv4(
    src: [u8; 4],
    dst: [u8; 4],
    ttl: u8,
    tos: u8,
    ethertype: u16,
    bad_csum: bool,
) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0xbb, 2, 0, 0, 0, 0, 0xaa, 1];
    f.extend_from_slice(&ethertype.to_be_bytes());
    let mut ip = vec![0x45, tos, 0, 28, 0x12, 0x34, 0x40, 0, ttl, 17, 0, 0];
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&dst);
    let c = csum(&ip) ^ u16::from(bad_csum);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
    f
}

/// A test program over an Ethernet header and four bytes `hdr.h.a` .. `hdr.h.d`; `decls` before
/// the ingress control, `ingress` its body.
pub fn program(decls: &str, ingress: &str) -> String {
    format!(
        r#"
#include <core.p4>
#include <v1model.p4>
header ethernet_t {{ bit<48> dst; bit<48> src; bit<16> etherType; }}
header h_t {{ bit<8> a; bit<8> b; bit<8> c; bit<8> d; }}
struct headers {{ ethernet_t eth; h_t h; }}
struct metadata {{ bit<8> m; }}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    state start {{ pkt.extract(hdr.eth); pkt.extract(hdr.h); transition accept; }}
}}
control V(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
{decls}
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    {ingress}
}}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{ apply {{ }} }}
control C(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control D(packet_out pkt, in headers hdr) {{ apply {{ pkt.emit(hdr.eth); pkt.emit(hdr.h); }} }}
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#
    )
}

/// The four bytes after the Ethernet header once the program has run over a frame carrying
/// `h` (after `setup` has installed entries).
pub fn run_with(tag: &str, src: &str, h: [u8; 4], setup: &dyn Fn(&mut Program)) -> [u8; 4] {
    let out = compile_src(tag, src).unwrap_or_else(|e| panic!("{tag}: {e}"));
    let mut p = load(&out.json);
    setup(&mut p);
    let mut f = vec![0u8; 12];
    f.extend_from_slice(&[0x88, 0xb5]);
    f.extend_from_slice(&h);
    let (_, _, bytes) = pass(&mut p, &f, 1).unwrap_or_else(|d| panic!("{tag}: {d:?}"));
    bytes[14..18].try_into().unwrap()
}

/// An Ethernet frame (dst 00:..:02, src 00:..:01) of type `t` followed by `rest`.
pub fn eth(t: u16, rest: &[u8]) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1];
    f.extend_from_slice(&t.to_be_bytes());
    f.extend_from_slice(rest);
    f
}

/// (egress port, priority, bytes out) or the drop, for a frame in on port 9.
pub fn run(p: &mut Program, f: &[u8]) -> Result<(u32, u8, Vec<u8>), DropReason> {
    pass(p, f, 9)
}

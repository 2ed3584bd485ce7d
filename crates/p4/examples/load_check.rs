//! Loads bmv2 JSON files with `Program::load` and prints one line per file: `OK` with what was
//! compiled, or `FAIL` with the load error. With `--run`, every program that loads also gets a
//! few frames (Ethernet/IPv4/UDP, ARP, a runt) through the whole pipeline with empty tables,
//! and the outcome of each is printed. Exit status 1 if any file failed to load.
//!
//! cargo run --release -p lanes-p4 --example load_check -- [--run] FILE.json...

use lanes_p4::p4info::P4Names;
use lanes_p4::{ParserErrorPolicy, Program};

fn frames() -> Vec<(&'static str, Vec<u8>)> {
    let mut ip = vec![0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 2, 2, 0x08, 0x00];
    let mut h = vec![
        0x45, 0, 0, 36, 0x12, 0x34, 0x40, 0, 64, 17, 0, 0, 10, 0, 1, 1, 10, 0, 2, 2,
    ];
    let c = lanes_p4::csum16(&h);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    ip.extend_from_slice(&h);
    ip.extend_from_slice(&[0x30, 0x39, 0x13, 0x88, 0, 16, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]);
    let mut arp = vec![0xff; 6];
    arp.extend_from_slice(&[0, 0, 0, 0, 1, 1, 0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1]);
    arp.extend_from_slice(&[0; 20]);
    vec![("ipv4-udp", ip), ("arp", arp), ("runt", vec![0, 1, 2])]
}

fn run(p: &mut Program) {
    p.set_parser_error_policy(ParserErrorPolicy::Drop);
    let mut st = p.new_state();
    let mut out = Vec::new();
    for (name, f) in frames() {
        let (ig, eg) = p.process(&mut st, &f, 1, 1_000, &mut out);
        match eg.drop {
            Some(d) => println!("    {name}: dropped ({d:?})"),
            None => println!(
                "    {name}: out port {} prio {}, {} -> {} bytes{}",
                ig.egress_spec,
                ig.priority,
                f.len(),
                eg.len,
                if out == f {
                    " (unchanged)"
                } else {
                    " (changed)"
                }
            ),
        }
    }
}

fn main() {
    let mut paths = Vec::new();
    let mut do_run = false;
    for a in std::env::args().skip(1) {
        match a.as_str() {
            "--run" => do_run = true,
            "-h" | "--help" => {
                println!("usage: load_check [--run] FILE.json...");
                return;
            }
            _ => paths.push(a),
        }
    }
    if paths.is_empty() {
        eprintln!("load_check: no files given (usage: load_check [--run] FILE.json...)");
        std::process::exit(2);
    }
    let mut failed = 0;
    for path in &paths {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                println!("FAIL {path}: cannot read: {e}");
                failed += 1;
                continue;
            }
        };
        match Program::load(&text) {
            Ok(mut p) => {
                let n = P4Names::from_program(&p);
                println!(
                    "OK   {path}: {} headers, {} tables, {} actions, {} counters, {} meters, {} registers",
                    p.header_names().len(),
                    n.tables.len(),
                    n.actions.len(),
                    n.counters.len() + n.direct_counters.len(),
                    n.meters.len() + n.direct_meters.len(),
                    n.registers.len()
                );
                if do_run {
                    run(&mut p);
                }
            }
            Err(e) => {
                println!("FAIL {path}: {e}");
                failed += 1;
            }
        }
    }
    if failed > 0 {
        std::process::exit(1);
    }
}

//! PSA programs: compiled by lanes p4c and run by lanes-p4's PSA packet paths, frame in, exact
//! frame out (tests/data/psa_paths.p4: etherType picks what ingress does; egress writes the
//! packet path it saw, 1 unicast, 2 multicast, 3 clone I2E, 4 clone E2E, into srcAddr's last
//! byte and the egress instance into the two bytes before it).

mod common;

use common::{compile_src, one_line_error, repo_path};
use lanes_p4::{DropReason, EgressMeta, PacketState, Program, Reentry};

fn program() -> Program {
    let path = repo_path("crates/p4c/tests/data/psa_paths.p4");
    let out = lanes_p4c::compile_file(&path, &lanes_p4c::Options::default())
        .unwrap_or_else(|d| panic!("{d}"));
    Program::load(&out.json).unwrap_or_else(|e| panic!("{e}"))
}

fn frame(dst: u64, ether_type: u16) -> Vec<u8> {
    let mut f = dst.to_be_bytes()[2..].to_vec();
    f.extend([0x0a, 0, 0, 0, 0, 0]);
    f.extend(ether_type.to_be_bytes());
    f.extend([0xca, 0xfe]);
    f
}

/// The frame egress should send: `f` with srcAddr's last three bytes set to (instance, path).
fn marked(f: &[u8], instance: u16, path: u8) -> Vec<u8> {
    let mut o = f.to_vec();
    o[9..11].copy_from_slice(&instance.to_be_bytes());
    o[11] = path;
    o
}

fn egress(
    p: &mut Program,
    st: &mut PacketState,
    f: &[u8],
    port: u32,
) -> Result<Vec<u8>, DropReason> {
    let mut out = Vec::new();
    let meta = EgressMeta {
        egress_port: port,
        ..Default::default()
    };
    let eg = p.egress(st, f, &meta, 0, &mut out);
    match eg.drop {
        Some(d) => Err(d),
        None => Ok(out[..eg.len].to_vec()),
    }
}

#[test]
fn send_to_port_is_unicast_and_egress_sees_normal_unicast() {
    let mut p = program();
    let f = frame(5, 1);
    let mut st = p.new_state();
    let ig = p.ingress(&mut st, &f, 9, 0);
    assert_eq!((ig.drop, ig.egress_spec, ig.mcast_grp), (None, 5, 0));
    assert_eq!(egress(&mut p, &mut st, &f, 5), Ok(marked(&f, 0, 1)));
}

#[test]
fn ingress_drops_unless_the_program_sends_the_packet() {
    let mut p = program();
    let mut st = p.new_state();
    let ig = p.ingress(&mut st, &frame(5, 2), 9, 0);
    assert_eq!(ig.drop, Some(DropReason::Ingress));
    assert!(st.take_clone().is_none() && st.take_resubmit().is_none());
}

#[test]
fn egress_drop_drops_after_egress() {
    let mut p = program();
    let f = frame(0xdead, 1);
    let mut st = p.new_state();
    let ig = p.ingress(&mut st, &f, 9, 0);
    assert_eq!(ig.egress_spec, 0xdead);
    assert_eq!(egress(&mut p, &mut st, &f, 0xdead), Err(DropReason::Egress));
}

#[test]
fn multicast_copies_see_normal_multicast_and_their_instance() {
    let mut p = program();
    let f = frame(5, 3);
    let mut st = p.new_state();
    let ig = p.ingress(&mut st, &f, 9, 0);
    assert_eq!((ig.drop, ig.mcast_grp), (None, 5));
    for (port, rid) in [(2u32, 7u16), (3, 8)] {
        let mut copy = st.clone();
        p.mark_replica(&mut copy, rid, true);
        assert_eq!(egress(&mut p, &mut copy, &f, port), Ok(marked(&f, rid, 2)));
    }
}

#[test]
fn an_ingress_clone_goes_to_its_session_as_clone_i2e_and_the_original_still_leaves() {
    let mut p = program();
    let f = frame(5, 4);
    let mut st = p.new_state();
    let ig = p.ingress(&mut st, &f, 9, 0);
    assert_eq!((ig.drop, ig.egress_spec), (None, 2));
    let req = st.take_clone().expect("clone asked for");
    assert_eq!(req.session, 7);
    let mut copy = p.new_state();
    p.ingress_clone(&st, &mut copy, &f, 9, 0, req, None)
        .expect("copy made");
    assert_eq!(egress(&mut p, &mut copy, &f, 6), Ok(marked(&f, 0, 3)));
    assert_eq!(egress(&mut p, &mut st, &f, 2), Ok(marked(&f, 0, 1)));
}

#[test]
fn an_egress_clone_is_the_packet_egress_sent_seen_as_clone_e2e() {
    let mut p = program();
    let f = frame(5, 7);
    let mut st = p.new_state();
    let ig = p.ingress(&mut st, &f, 9, 0);
    assert_eq!(ig.egress_spec, 1);
    let sent = egress(&mut p, &mut st, &f, 1).expect("sent");
    assert_eq!(sent, marked(&f, 0, 1));
    let req = st.take_clone().expect("egress clone asked for");
    assert_eq!(req.session, 8);
    let mut copy = p.new_state();
    p.egress_clone(&st, &mut copy, req, None);
    assert_eq!(egress(&mut p, &mut copy, &f, 4), Ok(marked(&f, 0, 4)));
}

#[test]
fn a_resubmitted_packet_enters_ingress_again_as_resubmit() {
    let mut p = program();
    let f = frame(5, 5);
    let mut st = p.new_state();
    let ig = p.ingress(&mut st, &f, 9, 0);
    assert_eq!(ig.drop, None);
    let how = st.take_resubmit().expect("resubmit asked for");
    assert_eq!(how, Reentry::Resubmit(0));
    let ig = p.reingress(&mut st, &f, 9, 0, how);
    assert_eq!((ig.drop, ig.egress_spec), (None, 3));
    assert!(st.take_resubmit().is_none());
    assert_eq!(egress(&mut p, &mut st, &f, 3), Ok(marked(&f, 0, 1)));
}

#[test]
fn a_packet_sent_to_the_recirculate_port_enters_ingress_again_from_it() {
    let mut p = program();
    let f = frame(5, 6);
    let mut st = p.new_state();
    let ig = p.ingress(&mut st, &f, 9, 0);
    assert_eq!(ig.egress_spec, 0xffff_fffa);
    let once = egress(&mut p, &mut st, &f, 0xffff_fffa).expect("egress emits it");
    assert_eq!(once, marked(&f, 0, 1));
    let how = st.take_recirculate().expect("recirculates");
    let ig = p.reingress(&mut st, &once, 9, 0, how);
    assert_eq!((ig.drop, ig.egress_spec), (None, 4));
    let mut want = marked(&f, 0, 1);
    want[..6].copy_from_slice(&0xffff_fffau64.to_be_bytes()[2..]);
    assert_eq!(egress(&mut p, &mut st, &once, 4), Ok(want));
}

const HEAD: &str = "#include <core.p4>\n#include <bmv2/psa.p4>\nheader h_t { bit<8> a; }\nstruct H { h_t h; }\nstruct M {}\nstruct E {}\n";

#[test]
fn psa_metadata_with_fields_between_blocks_is_refused_in_one_line() {
    let src = format!("{HEAD}struct R {{ bit<8> x; }}\nparser IP(packet_in p, out H h, inout M m, in psa_ingress_parser_input_metadata_t i, in R r, in E e) {{ state start {{ transition accept; }} }}\ncontrol I(inout H h, inout M m, in psa_ingress_input_metadata_t i, inout psa_ingress_output_metadata_t o) {{ apply {{}} }}\ncontrol ID(packet_out p, out E c, out R r, out E n, inout H h, in M m, in psa_ingress_output_metadata_t o) {{ apply {{}} }}\nparser EP(packet_in p, out H h, inout M m, in psa_egress_parser_input_metadata_t i, in E n, in E c, in E c2) {{ state start {{ transition accept; }} }}\ncontrol EG(inout H h, inout M m, in psa_egress_input_metadata_t i, inout psa_egress_output_metadata_t o) {{ apply {{}} }}\ncontrol ED(packet_out p, out E c, out R r, inout H h, in M m, in psa_egress_output_metadata_t o, in psa_egress_deparser_input_metadata_t d) {{ apply {{}} }}\nPSA_Switch(IngressPipeline(IP(), I(), ID()), PacketReplicationEngine(), EgressPipeline(EP(), EG(), ED()), BufferingQueueingEngine()) main;\n");
    let e = one_line_error("psa-meta", &src);
    assert!(e.contains("PSA R with fields is not supported"), "{e}");
}

#[test]
fn other_architectures_are_still_refused_by_name() {
    let e = one_line_error("pna", "#include <core.p4>\n#include <pna.p4>\n");
    assert_eq!(e, "prog.p4:2:1: error: the PNA architecture ('pna.p4') is not supported: lanes p4c compiles v1model and PSA programs (include <v1model.p4> or <psa.p4>)");
    assert!(compile_src("psa-empty", HEAD).is_err());
}

#[test]
fn an_egress_with_other_headers_than_ingress_is_refused_in_one_line() {
    let src = format!("{HEAD}header g_t {{ bit<16> b; }}\nstruct G {{ g_t g; }}\nparser IP(packet_in p, out H h, inout M m, in psa_ingress_parser_input_metadata_t i, in E r, in E e) {{ state start {{ transition accept; }} }}\ncontrol I(inout H h, inout M m, in psa_ingress_input_metadata_t i, inout psa_ingress_output_metadata_t o) {{ apply {{}} }}\ncontrol ID(packet_out p, out E c, out E r, out E n, inout H h, in M m, in psa_ingress_output_metadata_t o) {{ apply {{}} }}\nparser EP(packet_in p, out G h, inout M m, in psa_egress_parser_input_metadata_t i, in E n, in E c, in E c2) {{ state start {{ transition accept; }} }}\ncontrol EG(inout G h, inout M m, in psa_egress_input_metadata_t i, inout psa_egress_output_metadata_t o) {{ apply {{}} }}\ncontrol ED(packet_out p, out E c, out E r, inout G h, in M m, in psa_egress_output_metadata_t o, in psa_egress_deparser_input_metadata_t d) {{ apply {{}} }}\nPSA_Switch(IngressPipeline(IP(), I(), ID()), PacketReplicationEngine(), EgressPipeline(EP(), EG(), ED()), BufferingQueueingEngine()) main;\n");
    let e = one_line_error("psa-egress-headers", &src);
    assert!(e.contains("PSA egress parser EP uses headers G"), "{e}");
}

#[test]
fn a_psa_program_has_psa_switchs_blocks_and_p4info_arch() {
    let path = repo_path("crates/p4c/tests/data/psa_paths.p4");
    let out = lanes_p4c::compile_file(&path, &lanes_p4c::Options::default()).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&out.json).unwrap();
    let names = |k: &str| -> Vec<String> {
        doc[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names("parsers"), ["ingress_parser", "egress_parser"]);
    assert_eq!(names("deparsers"), ["ingress_deparser", "egress_deparser"]);
    assert_eq!(names("pipelines"), ["ingress", "egress"]);
    assert!(
        out.p4info.starts_with("pkg_info {\n  arch: \"psa\"\n}\n"),
        "{}",
        out.p4info
    );
}

#[test]
fn register_counter_meter_and_hash_of_a_psa_program() {
    let path = repo_path("crates/p4c/tests/data/psa_externs.p4");
    let out = lanes_p4c::compile_file(&path, &lanes_p4c::Options::default())
        .unwrap_or_else(|d| panic!("{d}"));
    let mut p = Program::load(&out.json).unwrap_or_else(|e| panic!("{e}"));
    let f = frame(5, 0x0800);
    for n in 1..=2u8 {
        let mut st = p.new_state();
        let ig = p.ingress(&mut st, &f, 9, 0);
        assert_eq!((ig.drop, ig.egress_spec), (None, 1));
        let sent = egress(&mut p, &mut st, &f, 1).expect("sent");
        let mut want = f.clone();
        want[6] = 0x47; // the meter's colour with no rates: GREEN
        want[10..12].copy_from_slice(&(0x100u16 + u16::from(n)).to_be_bytes());
        want[12..14].copy_from_slice(&[0xfe, 0x82]); // CRC16 of 0x0456
        assert_eq!(sent, want, "packet {n}");
    }
    assert_eq!(p.register_read("cIngress.seen", 1), Ok(2));
    assert_eq!(
        p.counter_read("cIngress.packets", 1).map(|c| c.packets),
        Ok(2)
    );
}

/// The IPv4 header checksum of `h` (its checksum field taken as zero).
fn ipv4_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for (i, w) in h.chunks(2).enumerate() {
        if i != 5 {
            sum += u32::from(u16::from_be_bytes([w[0], w[1]]));
        }
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[test]
fn internet_checksum_verified_in_the_parser_and_written_by_the_deparser() {
    let path = repo_path("crates/p4c/tests/data/psa_checksum.p4");
    let out = lanes_p4c::compile_file(&path, &lanes_p4c::Options::default())
        .unwrap_or_else(|d| panic!("{d}"));
    let mut p = Program::load(&out.json).unwrap_or_else(|e| panic!("{e}"));
    let mut ip = hex("4500003c1c46400040060000ac100a63ac100a0c");
    let c = ipv4_checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let mut f = frame(5, 0x0800)[..14].to_vec();
    f.extend(&ip);
    f.extend([1, 2, 3]);
    let mut st = p.new_state();
    let ig = p.ingress(&mut st, &f, 9, 0);
    assert_eq!((ig.drop, ig.egress_spec), (None, 1));
    let sent = egress(&mut p, &mut st, &f, 1).expect("sent");
    let mut want = f.clone();
    want[14 + 8] -= 1; // ttl
    let c = ipv4_checksum(&want[14..34]);
    want[14 + 10..14 + 12].copy_from_slice(&c.to_be_bytes());
    assert_eq!(sent, want);
    // a wrong checksum fails the parser's verify: ingress drops it
    let mut bad = f.clone();
    bad[14 + 11] ^= 1;
    let mut st = p.new_state();
    assert_eq!(
        p.ingress(&mut st, &bad, 9, 0).drop,
        Some(DropReason::Ingress)
    );
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

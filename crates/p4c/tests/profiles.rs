//! Action profiles and selectors compiled by lanes p4c and run through the switch's pipeline
//! (lanes-p4): entries of an `indirect` table share members; an `indirect_ws` table's group
//! picks a member by its selector's hash (identity over a field here, so the pick is known);
//! a selector declared once serves two tables. The JSON and P4Info are p4c's shapes.

mod common;
use common::*;
use lanes_p4::{MatchKey, ProfileRef, Program};
use serde_json::Value;

const PROGRAM: &str = r#"
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
struct headers { ethernet_t eth; }
struct metadata { bit<16> pick; bit<8> low; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action_selector(HashAlgorithm.identity, 32w64, 32w16) shared_sel;
    action to(bit<9> port) { sm.egress_spec = port; }
    action tag(bit<16> t) { hdr.eth.etherType = t; }
    table by_dst {
        key = { hdr.eth.dst: exact; }
        actions = { to; }
        implementation = action_profile(32w8);
    }
    table spread {
        key = { meta.low: exact; meta.pick: selector; }
        actions = { to; NoAction; }
        implementation = shared_sel;
    }
    table spread_tag {
        key = { meta.pick: selector; }
        actions = { tag; }
        @name("tagger") implementation = action_selector(HashAlgorithm.crc16, 32w16, 32w8);
    }
    apply {
        meta.pick = hdr.eth.src[15:0];
        meta.low = hdr.eth.src[7:0];
        if (hdr.eth.dst[47:40] == 0) {
            by_dst.apply();
        } else {
            spread.apply();
            spread_tag.apply();
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;

fn compiled(tag: &str) -> lanes_p4c::Output {
    compile_src(tag, PROGRAM).unwrap_or_else(|e| panic!("{e}"))
}

fn frame(dst: [u8; 6], src: [u8; 6]) -> Vec<u8> {
    let mut f = dst.to_vec();
    f.extend_from_slice(&src);
    f.extend_from_slice(&[0x08, 0x00, 1, 2, 3, 4]);
    f
}

fn port_of(p: &mut Program, f: &[u8]) -> (u32, u16) {
    let mut st = p.new_state();
    let mut out = Vec::new();
    let (ig, eg) = p.process(&mut st, f, 1, 0, &mut out);
    assert_eq!(eg.drop, None);
    (ig.egress_spec, u16::from_be_bytes([out[12], out[13]]))
}

#[test]
fn indirect_entries_share_members() {
    let mut p = load(&compiled("ap-members").json);
    let t = p.table_id("I.by_dst").unwrap();
    let prof = p.table_profile(t).unwrap().expect("an indirect table");
    let to = p.profile_action_id(prof, "I.to").unwrap();
    let m = p.add_member(prof, None, to, &[vec![0, 5]]).unwrap();
    for last in [1u8, 2] {
        let key = vec![MatchKey::Exact(vec![0, 0, 0, 0, 0, last])];
        p.add_indirect_entry(t, key, ProfileRef::Member(m), 0)
            .unwrap();
    }
    assert_eq!(port_of(&mut p, &frame([0, 0, 0, 0, 0, 1], [0; 6])).0, 5);
    assert_eq!(port_of(&mut p, &frame([0, 0, 0, 0, 0, 2], [0; 6])).0, 5);
    // one member changed: both entries follow
    p.modify_member(prof, m, to, &[vec![0, 6]]).unwrap();
    assert_eq!(port_of(&mut p, &frame([0, 0, 0, 0, 0, 1], [0; 6])).0, 6);
    assert_eq!(port_of(&mut p, &frame([0, 0, 0, 0, 0, 2], [0; 6])).0, 6);
    // a miss runs nothing: egress_spec stays 0
    assert_eq!(port_of(&mut p, &frame([0, 0, 0, 0, 0, 3], [0; 6])).0, 0);
}

#[test]
fn a_group_picks_the_member_its_identity_hash_names() {
    let mut p = load(&compiled("ap-group").json);
    let t = p.table_id("I.spread").unwrap();
    let prof = p.profile_id("I.shared_sel").unwrap();
    assert_eq!(p.table_profile(t).unwrap(), Some(prof));
    let to = p.profile_action_id(prof, "I.to").unwrap();
    let members: Vec<u32> = [1u8, 2, 3]
        .iter()
        .map(|port| p.add_member(prof, None, to, &[vec![0, *port]]).unwrap())
        .collect();
    let g = p.create_group(prof, None, 0).unwrap();
    for m in &members {
        p.add_member_to_group(prof, *m, g).unwrap();
    }
    p.add_indirect_entry(
        t,
        vec![MatchKey::Exact(vec![0x07])],
        ProfileRef::Group(g),
        0,
    )
    .unwrap();
    // pick = src[15:0]; its low byte is 7 to hit the entry; member = pick % 3, in handle order
    for hi in 0u8..12 {
        let pick = u16::from_be_bytes([hi, 7]);
        let want = [1, 2, 3][(pick % 3) as usize];
        let (port, _) = port_of(&mut p, &frame([1, 0, 0, 0, 0, 0], [0, 0, 0, 0, hi, 7]));
        assert_eq!(port, want, "pick {pick:#x}");
    }
}

#[test]
fn json_has_p4c_shapes() {
    let out = compiled("ap-json");
    let j: Value = serde_json::from_str(&out.json).unwrap();
    let ig = &j["pipelines"][0];
    let table = |n: &str| {
        ig["tables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == n)
            .cloned()
            .unwrap()
    };
    let by_dst = table("I.by_dst");
    assert_eq!(by_dst["type"], "indirect");
    // an anonymous profile: p4c's fresh name next to the extern type's
    assert_eq!(by_dst["action_profile"], "action_profile_0");
    assert!(by_dst.get("default_entry").is_none(), "p4c writes none");
    let spread = table("I.spread");
    assert_eq!(spread["type"], "indirect_ws");
    assert_eq!(spread["action_profile"], "I.shared_sel");
    // the selector key is the selector's input, not part of the match key
    assert_eq!(spread["key"].as_array().unwrap().len(), 1);
    assert_eq!(table("I.spread_tag")["action_profile"], "tagger");
    let profiles = ig["action_profiles"].as_array().unwrap();
    let names: Vec<&str> = profiles
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    // in source order: the declared selector, then those written in the tables
    assert_eq!(names, ["I.shared_sel", "action_profile_0", "tagger"]);
    assert!(profiles[1].get("selector").is_none());
    assert_eq!(profiles[1]["max_size"], 8);
    assert_eq!(profiles[0]["max_size"], 64);
    assert_eq!(profiles[0]["selector"]["algo"], "identity");
    assert_eq!(
        profiles[0]["selector"]["input"],
        serde_json::json!([{"type": "field", "value": ["scalars", "userMetadata.pick"]}])
    );
    assert_eq!(profiles[2]["selector"]["algo"], "crc16");
    // P4Info: kind 0x11 ids, tables listed, with_selector, size; tables name theirs
    let info = &out.p4info;
    let id = |name: &str| -> u32 {
        let at = info.find(&format!("name: \"{name}\"")).unwrap();
        let head = &info[..at];
        let line = head.rfind("id: ").unwrap();
        head[line + 4..].lines().next().unwrap().parse().unwrap()
    };
    let sel = id("I.shared_sel");
    assert_eq!(sel >> 24, 0x11);
    assert_eq!(
        sel,
        0x11 << 24 | (lanes_p4c::ids::jenkins("I.shared_sel") & 0xff_ffff)
    );
    let block = &info[info.find("name: \"I.shared_sel\"").unwrap()..];
    let block = &block[..block.find("\n}\n").unwrap()];
    assert!(
        block.contains(&format!("table_ids: {}", id("I.spread"))),
        "{block}"
    );
    assert!(block.contains("with_selector: true\n  size: 64"), "{block}");
    assert!(info.contains(&format!("  implementation_id: {sel}\n")));
    assert!(
        !info.contains("name: \"meta.pick\""),
        "selector keys are no match fields"
    );
}

#[test]
fn misuse_is_refused() {
    let e = compile_src(
        "ap-bad1",
        &PROGRAM.replace(
            "implementation = shared_sel;",
            "implementation = action_profile(32w4);",
        ),
    )
    .unwrap_err();
    assert!(
        e.contains("has `selector` keys but action_profile_1 is an action_profile"),
        "{e}"
    );
    let e = compile_src(
        "ap-bad2",
        &PROGRAM.replace("HashAlgorithm.crc16, 32w16", "HashAlgorithm.nope, 32w16"),
    )
    .unwrap_err();
    assert!(e.contains("must be a HashAlgorithm member"), "{e}");
}

//! Programs written for these tests, run through the switch's pipeline, for constructs whose
//! meaning depends on copies and control flow: a header or struct argument of an action is a
//! copy when the body could tell (it writes what the argument names); a function that returns
//! from inside an `if` with statements after it; an optional-match key (ternary in the bmv2
//! JSON, OPTIONAL in the P4Info).

mod common;
use common::*;
use lanes_p4::MatchKey;

#[test]
fn a_header_or_struct_argument_the_body_could_observe_is_a_copy() {
    let ing = "
        action keep_all(inout headers val) { hdr.h.a = 2; }
        action read_first(in h_t val) { hdr.h.b = 1; hdr.h.c = val.b; }
        action bump(inout h_t x) { x.d = x.d + 1; hdr.h.d = 100; }
        apply { keep_all(hdr); read_first(hdr.h); bump(hdr.h); }";
    // keep_all: copy-out of the untouched copy undoes the write to a (9 stays);
    // read_first: val.b is the 7 copied in, not the 1 written before it is read;
    // bump: copy-out of x (3 + 1) overwrites the body's 100
    assert_eq!(
        run_with("hdr-copy", &program("", ing), [9, 7, 0, 3], &|_| {}),
        [9, 1, 7, 4]
    );
}

#[test]
fn a_return_inside_an_if_skips_the_rest_of_the_function() {
    let decls = "
        bit<8> pick(in bit<8> v) {
            if (v > 10) {
                if (v > 100) { return 3; }
                v = v + 1;
            }
            if (v == 5) { return 5; }
            return v;
        }
        void early(inout bit<8> x) {
            if (x != 0) {
                if (x == 1) { return; }
                x = x + 10;
            }
            x = x + 1;
        }
        h_t make(in bit<8> k) {
            if (k == 1) { if (true) { return { 1, 1, 1, 1 }; } }
            return { 2, 2, 2, 2 };
        }";
    let ing = "
        action in_action() { early(hdr.h.d); }
        apply {
            if (hdr.h.a == 0xff) { hdr.h = make(hdr.h.b); }
            else {
                hdr.h.a = pick(hdr.h.a);
                hdr.h.b = pick(hdr.h.b);
                early(hdr.h.c);
                in_action();
            }
        }";
    let src = program(decls, ing);
    // pick: 200 -> 3 (inner return), 50 -> 51 (falls through to the last return);
    // early: 1 returns at once, 2 -> 2 + 10 + 1
    assert_eq!(
        run_with("ret", &src, [200, 50, 1, 2], &|_| {}),
        [3, 51, 1, 13]
    );
    // pick: 5 -> 5 (the second if's return), 4 -> 4; early: 0 -> 1
    assert_eq!(run_with("ret", &src, [5, 4, 0, 0], &|_| {}), [5, 4, 1, 1]);
    // a header returned from a nested if, or from the last return
    assert_eq!(
        run_with("ret", &src, [0xff, 1, 0, 0], &|_| {}),
        [1, 1, 1, 1]
    );
    assert_eq!(
        run_with("ret", &src, [0xff, 3, 0, 0], &|_| {}),
        [2, 2, 2, 2]
    );
}

/// A table of two optional keys writing `d`, with `entries` (a table property or nothing).
fn optional_table(entries: &str) -> String {
    let ing = format!(
        "action to(bit<8> v) {{ hdr.h.d = v; }}
        table t {{
            key = {{ hdr.h.a: optional; hdr.h.b: optional; }}
            actions = {{ to; NoAction; }}
            default_action = NoAction();
            {entries}
        }}
        apply {{ t.apply(); }}"
    );
    program("", &ing)
}

const ENTRIES: &str = "const entries = {
    (0xaa, 0x11): to(1);
    (_, 0x11): to(2);
    (0xaa, _): to(3);
}";

#[test]
fn an_optional_key_is_ternary_in_the_json_and_optional_in_the_p4info() {
    let src = optional_table(ENTRIES);
    let out = compile_src("opt", &src).unwrap();
    let json: serde_json::Value = serde_json::from_str(&out.json).unwrap();
    let table = &json["pipelines"][0]["tables"][0];
    assert_eq!(table["match_type"], "ternary");
    for k in table["key"].as_array().unwrap() {
        assert_eq!(k["match_type"], "ternary", "{k}");
    }
    for e in table["entries"].as_array().unwrap() {
        for k in e["match_key"].as_array().unwrap() {
            assert_eq!(k["match_type"], "ternary", "{k}");
        }
    }
    assert_eq!(out.p4info.matches("match_type: OPTIONAL").count(), 2);
    // the const entries in the order written: both, then b alone, then a alone
    let run = |h| run_with("opt", &src, h, &|_| {})[3];
    assert_eq!(run([0xaa, 0x11, 0, 0]), 1);
    assert_eq!(run([0xab, 0x11, 0, 0]), 2);
    assert_eq!(run([0xaa, 0x12, 0, 0]), 3);
    assert_eq!(run([0xa9, 0x10, 0, 9]), 9);
}

#[test]
fn a_control_plane_optional_match_lands_on_the_ternary_key() {
    let src = optional_table("");
    // a P4Runtime controller sends OPTIONAL matches (a value, or the field left out)
    let setup = |p: &mut lanes_p4::Program| {
        let t = p.table_id("I.t").unwrap();
        let a = p.action_id(t, "I.to").unwrap();
        let keys = vec![
            MatchKey::Optional(None),
            MatchKey::Optional(Some(vec![0x11])),
        ];
        p.add_entry(t, keys, a, vec![vec![7]], 10).unwrap();
    };
    assert_eq!(run_with("opt-rt", &src, [0x55, 0x11, 0, 0], &setup)[3], 7);
    assert_eq!(run_with("opt-rt", &src, [0x55, 0x12, 0, 0], &setup)[3], 0);
}

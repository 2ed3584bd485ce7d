//! Smaller language constructs, each on a program written for the test and run through the
//! switch's pipeline: the core library's `_CORE_P4_` guard, compound assignments, `int`
//! constants, a repeated identical typedef, serializable enums in P4Info, `@priority` on const
//! entries, the don't-care argument.

mod common;
use common::*;

fn run(tag: &str, src: &str, h: [u8; 4]) -> [u8; 4] {
    run_with(tag, src, h, &|_| {})
}

#[test]
fn the_core_library_defines_its_guard() {
    let decls = "
#ifdef _CORE_P4_
const bit<8> SEEN = 1;
#else
const bit<8> SEEN = 2;
#endif";
    let ing = "apply { hdr.h.a = SEEN; }";
    assert_eq!(run("guard", &program(decls, ing), [0; 4])[0], 1);
}

#[test]
fn a_key_that_is_an_expression_is_computed_before_each_apply() {
    let ing = "action set(bit<8> v) { hdr.h.d = v; }
        table t {
            key = { hdr.h.a + hdr.h.b : exact @name(\"sum\"); hdr.h.c[7:4] : exact; 8w1 : exact @name(\"one\"); }
            actions = { set; NoAction; }
            default_action = NoAction();
        }
        apply {
            hdr.h.a = hdr.h.a + 1;
            if (!t.apply().hit) { hdr.h.c = 0xee; }
        }";
    let src = program("", ing);
    let out = compile_src("keys", &src).unwrap();
    for name in ["\"sum\"", "\"hdr.h.c[7:4]\"", "\"one\""] {
        assert!(
            out.p4info.contains(&format!("name: {name}")),
            "{name}: {}",
            out.p4info
        );
    }
    let setup = |p: &mut lanes_p4::Program| {
        use lanes_p4::MatchKey::Exact;
        entry(
            p,
            "I.t",
            vec![Exact(vec![5]), Exact(vec![0xa]), Exact(vec![1])],
            "I.set",
            vec![vec![7]],
        );
    };
    // (a + 1) + b = 5 and c[7:4] = 0xa: hit, d = 7
    assert_eq!(
        run_with("keys", &src, [1, 3, 0xa5, 0], &setup),
        [2, 3, 0xa5, 7]
    );
    // the sum read after the increment is 6: miss
    assert_eq!(
        run_with("keys", &src, [2, 3, 0xa5, 0], &setup),
        [3, 3, 0xee, 0]
    );
    // c[7:4] = 0xb: miss
    assert_eq!(
        run_with("keys", &src, [1, 3, 0xb5, 0], &setup),
        [2, 3, 0xee, 0]
    );
}

#[test]
fn compound_assignments_and_int_constants() {
    let ing = "const int K = 3;
        apply {
            hdr.h.a += K;
            hdr.h.b -= 1;
            hdr.h.c <<= 1;
            hdr.h.d >>= 2;
            hdr.h.d |+|= 0xfe;
        }";
    // a = 10 + 3, b = 0 - 1 wraps, c = 0x81 << 1 keeps 8 bits, d = 0x40 >> 2 then saturates
    assert_eq!(
        run("compound", &program("", ing), [10, 0, 0x81, 0x40]),
        [13, 255, 2, 255]
    );
    let bad = program("", "apply { hdr.h.a += ; }");
    assert!(compile_src("compound-bad", &bad).is_err());
}

#[test]
fn headers_and_structs_are_set_from_lists() {
    let decls = "struct pair_t { bit<8> x; bit<8> y; }";
    let ing = "h_t tmp = { 1, 2, 3, 4 };
        apply {
            pair_t p = { 7, 8 };
            if (tmp.isValid()) { hdr.h = tmp; }
            hdr.h.c = p.x;
            hdr.h = { hdr.h.a, hdr.h.b, hdr.h.c, p.y };
        }";
    // the list makes tmp valid; the header copied whole, then its last field from the struct
    assert_eq!(run("lists", &program(decls, ing), [0; 4]), [1, 2, 7, 8]);
    let bad = program("", "apply { hdr.h = { 1, 2 }; }");
    assert!(one_line_error("lists-bad", &bad).contains("has 4 fields, the list 2 values"));
}

#[test]
fn priority_annotations_on_const_entries_order_them() {
    let ing = "action set(bit<8> v) { hdr.h.d = v; }
        table t {
            key = { hdr.h.a : ternary; }
            actions = { set; }
            const entries = {
                0x11 &&& 0x0f : set(1) @priority(3);
                0x11 : set(2);
                0x11 &&& 0xf0 : set(3) @priority(1);
            }
        }
        apply { t.apply(); }";
    // all three match 0x11: the smallest priority number wins (the third entry); the
    // unannotated second entry has its position, 2
    assert_eq!(run("prio", &program("", ing), [0x11, 0, 0, 0])[3], 3);
    // 0x21 matches the first only
    assert_eq!(run("prio", &program("", ing), [0x21, 0, 0, 0])[3], 1);
}

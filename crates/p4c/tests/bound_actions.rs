//! Actions with in/out/inout parameters: bound by the arguments a table's `actions` list gives
//! them (one action per binding, its directionless parameters left as control-plane data), and
//! called directly with constant arguments (inlined rather than run from a keyless table).

mod common;
use common::*;
use lanes_p4::MatchKey::Exact;

const TWO_TABLES: &str = "
    action set(out bit<8> r, bit<8> v) { r = v; }
    action bump(inout bit<8> x) { if (x > 100) { x = 1; return; } x = x + 1; }
    table ta {
        key = { hdr.h.a: exact; }
        actions = { set(hdr.h.b); NoAction; }
        default_action = set(hdr.h.b, 0x33);
    }
    table tb {
        key = { hdr.h.a: exact; }
        actions = { set(hdr.h.c); bump(hdr.h.d); }
        default_action = bump(hdr.h.d);
    }
    apply { ta.apply(); tb.apply(); }";

#[test]
fn a_table_action_list_binds_out_and_inout_parameters_per_table() {
    // no entries: ta's default writes 0x33 into b, tb's default bumps d (return before + 1
    // when d > 100)
    let none = |_: &mut lanes_p4::Program| {};
    let src = program("", TWO_TABLES);
    assert_eq!(
        run_with("bound", &src, [5, 0, 0, 7], &none),
        [5, 0x33, 0, 8]
    );
    assert_eq!(
        run_with("bound", &src, [5, 0, 0, 200], &none),
        [5, 0x33, 0, 1]
    );
    // entries: the same action `I.set` writes b in ta and c in tb, its data the value
    let entries = |p: &mut lanes_p4::Program| {
        entry(p, "I.ta", vec![Exact(vec![5])], "I.set", vec![vec![0x44]]);
        entry(p, "I.tb", vec![Exact(vec![5])], "I.set", vec![vec![0x55]]);
    };
    assert_eq!(
        run_with("bound", &src, [5, 0, 0, 7], &entries),
        [5, 0x44, 0x55, 7]
    );
}

#[test]
fn an_action_with_an_in_parameter_called_with_a_constant_is_inlined() {
    let ing = "
        action put(in bit<8> v) { hdr.h.a = v; }
        apply { put(8w9); }";
    let none = |_: &mut lanes_p4::Program| {};
    assert_eq!(
        run_with("in-const", &program("", ing), [1, 2, 3, 4], &none),
        [9, 2, 3, 4]
    );
}

#[test]
fn a_table_action_list_must_bind_every_directed_parameter() {
    let ing = "
        action set(out bit<8> r, bit<8> v) { r = v; }
        table t { key = { hdr.h.a: exact; } actions = { set; } }
        apply { t.apply(); }";
    let e = one_line_error("unbound", &program("", ing));
    assert!(
        e.contains("must bind exactly its 1 leading in/out/inout parameter"),
        "{e}"
    );
}

#[test]
fn a_return_in_an_inlined_action_skips_to_its_copy_out() {
    // `first` returns early; its caller goes on after it, and the inout copy-out still happens
    let ing = "
        action first(inout bit<8> x) { x = x + 1; if (x > 4) { return; } x = 0; }
        action both() { first(hdr.h.a); hdr.h.b = hdr.h.a; return; hdr.h.c = 99; }
        apply { both(); first(hdr.h.d); }";
    let none = |_: &mut lanes_p4::Program| {};
    let src = program("", ing);
    assert_eq!(run_with("return", &src, [7, 0, 0, 1], &none), [8, 8, 0, 0]);
    assert_eq!(run_with("return", &src, [2, 0, 0, 9], &none), [0, 0, 0, 10]);
}

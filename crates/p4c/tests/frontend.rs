//! Constructs p4c's front end rewrites before lowering, on programs written for these tests, run
//! through the switch's pipeline (lanes-p4) with outcomes worked out by hand: enum-typed
//! variables, self-assignments, slices of slices, `extract(_)`, a lookahead whose value is
//! unused, controls with constructor parameters and controls applied by their type name.

mod common;
use common::*;
use lanes_p4::{DropReason, ParserErrorPolicy};

fn run(tag: &str, src: &str, h: [u8; 4]) -> [u8; 4] {
    run_with(tag, src, h, &|_| {})
}

#[test]
fn enum_variables_hold_members_and_compare() {
    let decls = "enum Choice { First, Second, Third }";
    let ing = "apply {
        Choice c = Choice.Second;
        if (c == Choice.First) { hdr.h.a = 1; } else { hdr.h.a = 2; }
        c = Choice.Third;
        if (c != Choice.Second) { hdr.h.b = 3; }
        if (hdr.h.d == 0) { c = Choice.First; }
        hdr.h.c = c == Choice.First ? 8w4 : 8w5;
    }";
    let src = program(decls, ing);
    assert_eq!(run("enum", &src, [0, 0, 0, 0]), [2, 3, 4, 0]);
    assert_eq!(run("enum", &src, [0, 0, 0, 9]), [2, 3, 5, 9]);
}

#[test]
fn an_assignment_of_a_place_to_itself_is_dropped() {
    // `sm = sm` copies a whole struct: nothing to do, so nothing is refused either
    let ing = "action keep() {
        if (sm.enq_timestamp != 6) { sm = sm; }
        hdr.h = hdr.h;
        hdr.h.c = hdr.h.c;
        hdr.h.a = 5;
    }
    apply { keep(); }";
    assert_eq!(
        run("selfassign", &program("", ing), [1, 2, 3, 4]),
        [5, 2, 3, 4]
    );
}

#[test]
fn a_slice_of_a_slice_is_one_slice_read_or_written() {
    // a[7:4][2:1] is a[6:5]; c[7:2][3:0] is c[5:2]; b[7:0][7:4][3:0] is b[7:4]
    let ing = "apply {
        hdr.h.a[7:4][2:1] = 2w0;
        hdr.h.d = (bit<8>)hdr.h.c[7:2][3:0];
        hdr.h.b[7:0][7:4][3:0] = 4w0x6;
    }";
    assert_eq!(
        run("slices", &program("", ing), [0xff, 0x0f, 0b1011_0100, 0]),
        [0x9f, 0x6f, 0b1011_0100, 0x0d]
    );
}

const SKIPPING_PARSER: &str = r#"
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header four_t { bit<32> x; }
struct six_t { bit<16> a; bit<(8 * 4)> b; }
struct headers { ethernet_t eth; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract<four_t>(_);
        pkt.lookahead<six_t>();
        transition accept;
    }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 2; }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;

#[test]
fn extract_into_dont_care_skips_and_an_unused_lookahead_still_needs_its_bytes() {
    let out = compile_src("skip", SKIPPING_PARSER).unwrap();
    let mut p = load(&out.json);
    p.set_parser_error_policy(ParserErrorPolicy::Drop);
    let eth: Vec<u8> = (1..=14).collect();
    // four bytes skipped (extracted into a header that is not emitted), six looked at
    let mut f = eth.clone();
    f.extend(0xa0..0xaa);
    let mut want = eth.clone();
    want.extend(0xa4..0xaa);
    assert_eq!(pass(&mut p, &f, 1), Ok((2, 0, want)));
    // five bytes after the skipped four: the lookahead of six fails with PacketTooShort (1)
    let mut f = eth.clone();
    f.extend(0xa0..0xa9);
    assert_eq!(pass(&mut p, &f, 1), Err(DropReason::ParserError(1)));
}

#[test]
fn controls_take_control_instances_as_constructor_arguments() {
    // C1 is instantiated once and applied through both C2 and C3; Outer is applied by its type
    let decls = "
    control ctl_t(inout bit<8> x);
    control C1(inout bit<8> x) {
        counter(4, CounterType.packets) stats;
        apply { x = x + 1; stats.count(0); }
    }
    control C2(inout bit<8> x)(ctl_t c) { apply { x = x << 1; c.apply(x); } }
    control C3(inout bit<8> x)(ctl_t c, bit<8> k) { apply { x = x ^ k; c.apply(x); } }
    control Outer(inout bit<8> x) {
        C3(c1, 0xf0) c3;
        C1() c1;
        C2(c1) c2;
        apply { c2.apply(x); c3.apply(x); }
    }";
    let ing = "apply { Outer.apply(hdr.h.a); }";
    // a = 3: << 1 -> 6, + 1 -> 7; ^ 0xf0 -> 0xf7, + 1 -> 0xf8
    let src = program(decls, ing);
    assert_eq!(run("ctor", &src, [3, 0, 0, 0]), [0xf8, 0, 0, 0]);
    let out = compile_src("ctor", &src).unwrap();
    // one counter, named as p4c names it (the instance's path)
    assert!(out.json.contains("\"I.Outer.c1.stats\""), "{}", out.json);
    assert_eq!(
        out.json.matches("\"counter_array\"").count(),
        2,
        "two counts of one counter"
    );
}

#[test]
fn wrong_constructor_arguments_are_one_line_errors() {
    let decls = "
    control ctl_t(inout bit<8> x);
    control C1(inout bit<8> x) { apply { x = x + 1; } }
    control C2(inout bit<8> x)(ctl_t c) { apply { c.apply(x); } }";
    let e = one_line_error(
        "ctor_count",
        &program(
            decls,
            "C1() c1; C2(c1, c1) c2; apply { c2.apply(hdr.h.a); }",
        ),
    );
    assert!(
        e.contains("control 'C2' takes 1 constructor argument(s), 2 given"),
        "{e}"
    );
    let e = one_line_error(
        "ctor_inline",
        &program(decls, "C2(C1()) c2; apply { c2.apply(hdr.h.a); }"),
    );
    assert!(e.contains("declare the instance first"), "{e}");
    let parser_ctor = SKIPPING_PARSER.replace(
        "inout standard_metadata_t sm) {\n    state",
        "inout standard_metadata_t sm)(bit<8> k) {\n    state",
    );
    let e = one_line_error("ctor_parser", &parser_ctor);
    assert!(
        e.contains("constructor parameters of parsers are not supported"),
        "{e}"
    );
}

#[test]
fn header_stack_variables_are_declared_copied_and_read() {
    let ing = "apply {
        h_t[2] tmp;
        tmp[0] = hdr.h;
        tmp[1].setValid();
        tmp[1].a = 7;
        if (tmp[0].isValid() && tmp[1].isValid()) { hdr.h.b = tmp[0].a + tmp[1].a; }
        tmp[0].setInvalid();
        if (!tmp[0].isValid()) { hdr.h.c = tmp.size == 2 ? 8w0xcc : 8w0; }
    }";
    assert_eq!(
        run("stackvar", &program("", ing), [1, 2, 3, 4]),
        [1, 8, 0xcc, 4]
    );
}

#[test]
fn a_list_passed_for_an_in_header_parameter_is_copied_into_a_header() {
    let decls = "struct pair_t { bit<8> x; bit<8> y; }";
    let ing = "action put(in h_t v, in pair_t p) {
        hdr.h.c = v.b;
        hdr.h.d = v.a + v.d + p.y;
        if (v.isValid()) { hdr.h.a = p.x; }
    }
    apply { put({9, 8, 7, 6}, {hdr.h.b, 0x10}); }";
    // c = 8; d = 9 + 6 + 0x10 = 31; the header from a list is valid: a = b = 2
    assert_eq!(
        run("listarg", &program(decls, ing), [1, 2, 3, 4]),
        [2, 2, 8, 31]
    );
}

const STRUCT_IN_HEADER: &str = r#"
#include <core.p4>
#include <v1model.p4>
struct row_t { bit<8> e; bit<16> t; bit<8> l; }
header rows_t { bit<8> first; row_t row; }
struct headers { rows_t r; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.r); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action to(bit<9> p) { sm.egress_spec = p; hdr.r.row.t = hdr.r.row.t + (bit<16>)hdr.r.row.l; }
    table by_row {
        key = { hdr.r.row.e: exact; }
        actions = { to; NoAction; }
        const entries = { 0x01: to(1); 0x02: to(2); }
        default_action = NoAction();
    }
    apply { by_row.apply(); hdr.r.first = hdr.r.row.e; }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.r); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;

#[test]
fn a_struct_field_of_a_header_is_laid_out_in_place_and_matched_on() {
    let out = compile_src("rowhdr", STRUCT_IN_HEADER).unwrap();
    // the key keeps the name it is written with; the fields are p4c's flattened ones
    assert!(
        out.p4info.contains("name: \"hdr.r.row.e\""),
        "{}",
        out.p4info
    );
    assert!(out.json.contains("\"_row_t1\""), "{}", out.json);
    let mut p = load(&out.json);
    // first, row.e, row.t (two bytes), row.l, then payload
    let f = [0, 2, 0x10, 0x00, 5, 0xee];
    assert_eq!(
        pass(&mut p, &f, 7),
        Ok((2, 0, vec![2, 2, 0x10, 0x05, 5, 0xee]))
    );
    let f = [0, 3, 0x10, 0x00, 5, 0xee];
    assert_eq!(
        pass(&mut p, &f, 7),
        Ok((0, 0, vec![3, 3, 0x10, 0x00, 5, 0xee]))
    );
}

#[test]
fn tuple_variables_by_element_and_control_variable_initialisers_calling_functions() {
    let decls = "bit<8> bump(inout bit<8> s) { s = s + 1; return 8w7; }";
    let ing = "tuple<bit<8>, bit<8>> t = { 3, bump(hdr.h.d) };
    h_t copy = { 1, 2, 3, bump(hdr.h.d) };
    apply { hdr.h.a = t[0]; hdr.h.b = t[1]; t[0] = 9; hdr.h.c = t[0] + copy.c; }";
    // d bumped twice (4 -> 6); c = 9 + 3
    assert_eq!(
        run("tuplevar", &program(decls, ing), [0, 0, 0, 4]),
        [3, 7, 12, 6]
    );
    let whole = program(
        "",
        "tuple<bit<8>, bit<8>> t = { 1, 2 }; apply { hdr.h = { t, 1 }; }",
    );
    let e = one_line_error("tuplewhole", &whole);
    assert!(
        e.contains("variables of type list are not supported here"),
        "{e}"
    );
}

#[test]
fn for_loops_with_run_time_bounds_break_and_continue() {
    // b = 1 + 2 + ... + a; c = a * a by nested loops; d counts odd i below 10 up to a break
    // at 7 (1, 3, 5: 3); the loop in apply runs in a synthesized action
    let ing = "action sums() {
        hdr.h.b = 0;
        for (bit<8> i = 1; i <= hdr.h.a; i = i + 1) { hdr.h.b = hdr.h.b + i; }
        hdr.h.c = 0;
        for (bit<8> i = 0; i < hdr.h.a; i = i + 1) {
            for (bit<8> j = 0; j < hdr.h.a; j = j + 1) { hdr.h.c = hdr.h.c + 1; }
        }
    }
    apply {
        sums();
        hdr.h.d = 0;
        for (bit<8> i = 0; i < 10; i += 1) {
            if (i == 7) { break; }
            if ((i & 1) == 0) { continue; }
            hdr.h.d = hdr.h.d + 1;
        }
    }";
    let src = program("", ing);
    assert_eq!(run("forloop", &src, [5, 0, 0, 0]), [5, 15, 25, 3]);
    assert_eq!(run("forloop", &src, [0, 9, 9, 9]), [0, 0, 0, 3]);
}

#[test]
fn a_loop_that_never_ends_is_stopped_by_the_switch() {
    // 2^20 backward jumps, then the action stops: a is incremented 2^20 + 1 times (1 mod 256)
    // and nothing after the loop runs
    let ing = "action spin() { for (;;) { hdr.h.a = hdr.h.a + 1; } hdr.h.b = 1; }
    apply { spin(); hdr.h.c = 2; }";
    assert_eq!(run("spin", &program("", ing), [5, 0, 0, 0]), [6, 0, 2, 0]);
}

#[test]
fn loops_refused_in_one_line() {
    let e = one_line_error("brk", &program("", "apply { break; }"));
    assert!(
        e.contains("break and continue are only allowed in a for loop"),
        "{e}"
    );
    let e = one_line_error(
        "brk_action",
        &program("", "action a() { continue; } apply { a(); }"),
    );
    assert!(e.contains("continue outside a for loop"), "{e}");
    let e = one_line_error(
        "forin",
        &program("", "apply { for (bit<8> i in 1 .. 3) { hdr.h.a = i; } }"),
    );
    assert!(e.contains("for-in loops are not supported"), "{e}");
    let e = one_line_error(
        "forapply",
        &program(
            "",
            "action a() { } table t { actions = { a; } }
            apply { for (bit<8> i = 0; i < 3; i = i + 1) { t.apply(); } }",
        ),
    );
    assert!(
        e.contains("a for loop that applies a table is not supported"),
        "{e}"
    );
}

#[test]
fn headers_stacks_and_structs_compare_with_equals() {
    // two headers are equal when both are invalid or both valid with equal fields
    let decls = "struct two_t { h_t x; bit<8> y; }";
    let ing = "apply {
        h_t other = { hdr.h.a, hdr.h.b, hdr.h.c, 0 };
        h_t none;
        h_t[2] s1;
        h_t[2] s2;
        s1[0] = hdr.h;
        s2[0] = hdr.h;
        two_t p = { hdr.h, 1 };
        two_t q = { hdr.h, 1 };
        bit<8> r = 0;
        if (hdr.h == other) { r = r | 1; }
        if (hdr.h != none) { r = r | 2; }
        if (s1 == s2) { r = r | 4; }
        s2[1].setValid();
        if (s1 != s2) { r = r | 8; }
        if (p == q) { r = r | 16; }
        q.y = 2;
        if (p != q) { r = r | 32; }
        hdr.h.d = r;
    }";
    let src = program(decls, ing);
    // d = 0: other equals hdr.h (1 | 2 | 4 | 8 | 16 | 32 = 63)
    assert_eq!(run("equal", &src, [1, 2, 3, 0]), [1, 2, 3, 63]);
    // d = 5: other (d = 0) differs
    assert_eq!(run("equal", &src, [1, 2, 3, 5]), [1, 2, 3, 62]);
    let bad = program("", "apply { h_t[2] s; if (s == hdr.h) { hdr.h.a = 1; } }");
    let e = one_line_error("equal_bad", &bad);
    assert!(e.contains("cannot compare s with hdr.h"), "{e}");
    let bad = program("", "apply { if (hdr.eth == hdr.h) { hdr.h.a = 1; } }");
    let e = one_line_error("equal_types", &bad);
    assert!(
        e.contains("cannot compare header ethernet_t with header h_t"),
        "{e}"
    );
}

#[test]
fn a_list_is_evaluated_left_to_right_around_a_function_call() {
    // the first element reads d before bump writes it; the header from the list is valid
    let decls = "bit<8> bump(inout bit<8> s) { s = s + 1; return 8w7; }";
    let ing = "apply { hdr.h = { hdr.h.d, bump(hdr.h.d), hdr.h.d, 9 }; }";
    assert_eq!(
        run("listorder", &program(decls, ing), [0, 0, 0, 4]),
        [4, 7, 5, 9]
    );
    // a header element is copied whole before the call writes into it
    let decls = "struct two_t { h_t x; bit<8> y; }
    bit<8> bump(inout bit<8> s) { s = s + 1; return 8w7; }";
    let ing = "apply { two_t p = { hdr.h, bump(hdr.h.d) }; hdr.h.a = p.x.d + p.y; }";
    assert_eq!(
        run("listhdr", &program(decls, ing), [0, 0, 0, 4]),
        [11, 0, 0, 5]
    );
}

#[test]
fn a_function_with_a_loop_is_inlined_with_its_loop() {
    let decls = "bit<8> sum(in bit<8> n) {
        bit<8> t = 0;
        for (bit<8> i = 0; i < n; i = i + 1) { t = t + i; }
        return t;
    }";
    // 0 + 1 + 2 + 3 + 4 = 10
    let ing = "apply { hdr.h.a = sum(hdr.h.d); }";
    assert_eq!(
        run("fnloop", &program(decls, ing), [0, 0, 0, 5]),
        [10, 0, 0, 5]
    );
    let early = decls.replace("{ t = t + i; }", "{ if (i == 3) { return t; } t = t + i; }");
    let e = one_line_error("fnloopret", &program(&early, ing));
    assert!(
        e.contains("return with a value inside a for loop is not supported"),
        "{e}"
    );
}

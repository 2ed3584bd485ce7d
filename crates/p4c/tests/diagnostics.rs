//! The errors a user meets first: each is one line `file:line:col: error: ...` naming the place
//! and what to do; none is a panic.

mod common;
use common::*;

/// A small valid program; `{PRE}`, `{ACT}` and `{APPLY}` are replaced by the test's lines.
const TEMPLATE: &str = r#"#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
struct headers { ethernet_t ethernet; }
struct metadata { bit<8> x; }
{PRE}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.ethernet); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action fwd(bit<9> port) { sm.egress_spec = port; }
{ACT}
    table t { key = { hdr.ethernet.dst: exact; } actions = { fwd; NoAction; } default_action = NoAction(); }
    apply {
{APPLY}
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.ethernet); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;

fn program(pre: &str, act: &str, apply: &str) -> String {
    TEMPLATE
        .replace("{PRE}", pre)
        .replace("{ACT}", act)
        .replace("{APPLY}", apply)
}

#[test]
fn the_template_compiles_and_loads() {
    let out = compile_src("ok", &program("", "", "t.apply();")).unwrap();
    let p = load(&out.json);
    assert!(p.table_id("I.t").is_some());
    assert!(out.p4info.contains("name: \"I.t\""));
}

#[test]
fn missing_include() {
    let src = "#include <v1model.p44>\n";
    assert_eq!(
        one_line_error("inc", src),
        "prog.p4:1:1: error: cannot find include file 'v1model.p44': give its directory with -I DIR (searched: )"
    );
}

#[test]
fn another_architecture_is_named() {
    let src = "#include <core.p4>\n#include <tna.p4>\n";
    assert_eq!(
        one_line_error("tna", src),
        "prog.p4:2:1: error: the TNA architecture ('tna.p4') is not supported: lanes p4c compiles v1model and PSA programs (include <v1model.p4> or <psa.p4>)"
    );
}

#[test]
fn typo_in_a_field_name() {
    let e = one_line_error(
        "typo",
        &program(
            "",
            "",
            "        if (hdr.ethernet.etherTyp == 0x800) { t.apply(); }",
        ),
    );
    assert_eq!(
        e,
        "prog.p4:16:26: error: header ethernet_t (hdr.ethernet) has no field 'etherTyp'; its fields: dst, src, etherType"
    );
}

#[test]
fn undeclared_name() {
    let e = one_line_error("undecl", &program("", "", "        meta.x = y;"));
    assert_eq!(e, "prog.p4:16:18: error: 'y' is not declared");
}

#[test]
fn width_mismatch() {
    let e = one_line_error(
        "width",
        &program("", "", "        meta.x = hdr.ethernet.etherType;"),
    );
    assert_eq!(
        e,
        "prog.p4:16:18: error: type mismatch: bit<16> assigned to meta.x of type bit<8>; cast it with (bit<8>)"
    );
    let e = one_line_error(
        "width2",
        &program(
            "",
            "",
            "        if (meta.x == hdr.ethernet.etherType) { t.apply(); }",
        ),
    );
    assert_eq!(
        e,
        "prog.p4:16:20: error: width mismatch: bit<8> == bit<16>; cast one side, e.g. (bit<16>)"
    );
}

#[test]
fn wrong_arity() {
    let e = one_line_error("arity", &program("", "", "        fwd(1, 2);"));
    assert_eq!(
        e,
        "prog.p4:16:9: error: action fwd takes 1 argument(s), 2 given"
    );
    let e = one_line_error("arity2", &program("", "", "        truncate();"));
    assert_eq!(e, "prog.p4:16:9: error: truncate takes 1 argument, 0 given");
}

#[test]
fn constant_too_wide() {
    let e = one_line_error("wide", &program("", "", "        meta.x = 300;"));
    assert_eq!(
        e,
        "prog.p4:16:18: error: value 300 does not fit in meta.x (bit<8>)"
    );
}

#[test]
fn unsupported_constructs_say_so() {
    let e = one_line_error(
        "varbit",
        &program("header opt_t { varbit<320> options; bit<8> x; }", "", ""),
    );
    assert_eq!(e, "prog.p4:6:44: error: field 'x' follows varbit field 'options': a varbit must be its header's last field");
    let e = one_line_error(
        "recirc",
        &program("", "", "        recirculate_preserving_field_list(0);"),
    );
    assert!(e.starts_with("prog.p4:16:9: error: "), "{e}");
    let e = one_line_error(
        "recirc-ingress",
        &program("", "", "        recirculate_preserving_field_list(0);"),
    );
    assert_eq!(e, "prog.p4:16:9: error: recirculate_preserving_field_list can only be called in egress (v1model), here it is in an action of ingress");
    let e = one_line_error(
        "selector",
        &program(
            "",
            "    table s { key = { hdr.ethernet.dst: selector; } actions = { fwd; } }",
            "        s.apply();",
        ),
    );
    assert_eq!(
        e,
        "prog.p4:13:11: error: table s has `selector` keys but no implementation = action_selector(...)"
    );
}

/// Functions, inlined controls and function-like macros: what they refuse, at the place.
#[test]
fn inlining_refusals() {
    let e = one_line_error(
        "fn-rec",
        &program(
            "bit<8> f(in bit<8> v) { return f(v); }",
            "",
            "        meta.x = f(meta.x);",
        ),
    );
    assert_eq!(
        e,
        "prog.p4:6:32: error: function 'f' calls itself: recursion is not allowed in P4"
    );
    let e = one_line_error(
        "fn-args",
        &program(
            "bit<8> f(in bit<8> v) { return v; }",
            "",
            "        meta.x = f();",
        ),
    );
    assert_eq!(
        e,
        "prog.p4:16:18: error: function 'f' takes 1 argument(s), 0 given"
    );
    let e = one_line_error(
        "fn-generic",
        &program("T f<T>(in T v) { return v; }", "", ""),
    );
    assert_eq!(
        e,
        "prog.p4:6:4: error: generic function 'f' is not supported: give its types"
    );
    let e = one_line_error(
        "fn-key",
        &program(
            "bit<8> low(in bit<48> v) { return v[7:0]; }",
            "    table u { key = { low(hdr.ethernet.dst): exact; } actions = { fwd; } }",
            "        u.apply();",
        ),
    );
    assert_eq!(e, "prog.p4:13:23: error: function 'low' called in a table key: compute it into a variable before applying the table, and match on that");
    let e = one_line_error(
        "macro-arity",
        &program(
            "#define ADD(a, b) ((a) + (b))",
            "",
            "        meta.x = ADD(1);",
        ),
    );
    assert_eq!(
        e,
        "prog.p4:16:18: error: macro 'ADD' takes 2 argument(s), 1 given"
    );
    let e = one_line_error("macro-paste", &program("#define CAT(a, b) a ## b", "", ""));
    assert_eq!(e, "prog.p4:6:1: error: macro 'CAT': the # and ## operators are not supported: write the tokens out");
    let sub = "control Sub(inout bit<8> v) { apply { v = v + 1; } }";
    let e = one_line_error(
        "ctl-args",
        &program(
            sub,
            "    Sub() s;",
            "        s.apply(meta.x); s.apply(hdr.ethernet.etherType[7:0]);",
        ),
    );
    assert_eq!(e, "prog.p4:16:34: error: argument for 'v' of control 'Sub' (inout) must be the same field or variable at every apply of 's'");
    let e = one_line_error(
        "ctl-typo",
        &program(
            "control Sub(inout headers h) { apply { h.ethernet.etherTyp = 1; } }",
            "    Sub() s;",
            "        s.apply(hdr);",
        ),
    );
    assert_eq!(e, "prog.p4:6:51: error: header ethernet_t (hdr.ethernet) has no field 'etherTyp'; its fields: dst, src, etherType");
}

#[test]
fn syntax_errors_name_the_token() {
    let e = one_line_error("syntax", &program("", "", "        meta.x = 1"));
    assert_eq!(e, "prog.p4:17:5: error: expected ';', found '}'");
}

#[test]
fn unknown_state_and_missing_main() {
    let src = program("", "", "").replace("transition accept;", "transition parse_ipv4;");
    assert_eq!(
        one_line_error("state", &src),
        "prog.p4:8:57: error: state 'parse_ipv4' is not declared in parser P"
    );
    let src = program("", "", "").replace("V1Switch(P(), V(), I(), E(), C(), D()) main;", "");
    assert!(one_line_error("main", &src).contains("no 'V1Switch(...) main;'"));
}

#[test]
fn table_errors() {
    let e = one_line_error("dflt", &program("", "    table u { key = { meta.x: exact; } actions = { fwd; } default_action = NoAction(); }", "u.apply();"));
    assert_eq!(
        e,
        "prog.p4:13:76: error: default action 'NoAction' is not in the table's actions list"
    );
    let e = one_line_error(
        "mk",
        &program(
            "",
            "    table u { key = { meta.x: fuzzy; } actions = { fwd; } }",
            "u.apply();",
        ),
    );
    assert_eq!(e, "prog.p4:13:23: error: match kind 'fuzzy' is not supported (exact, lpm, ternary, range, optional)");
    let e = one_line_error("twice", &program("", "", "        t.apply(); t.apply();"));
    assert!(e.contains("table t is applied twice"), "{e}");
}

/// Garbage and truncated programs give an error, not a panic.
#[test]
fn truncated_programs_never_panic() {
    let full = program("", "", "        t.apply();");
    for cut in (0..full.len()).step_by(7) {
        let _ = compile_src(&format!("cut{cut}"), &full[..cut]);
    }
    let _ = compile_src("bin", "\u{1}\u{2}@@@ ((( }}} 0x 12w");
}

#[test]
fn constant_wider_than_the_field_it_is_compared_with() {
    let e = one_line_error(
        "cmp",
        &program("", "", "        if (meta.x == 300) { t.apply(); }"),
    );
    assert_eq!(
        e,
        "prog.p4:16:23: error: value 300 does not fit in the comparison or operation (bit<8>)"
    );
}

/// Programs of p4/ with a token deleted, duplicated or swapped for another at many places:
/// every one compiles or gives a one-line error; none panics.
#[test]
fn mutated_programs_never_panic() {
    let src = std::fs::read_to_string(repo_path("p4/nas_inband.p4")).unwrap();
    let words: Vec<&str> = src
        .split_inclusive(|c: char| !c.is_alphanumeric() && c != '_')
        .collect();
    let swaps = [
        "(", ")", "{", "}", ";", "<", ">", "=", ".", "1", "bit", "hdr", "apply", "0x", "[", "]",
    ];
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for n in 0..300 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let i = (x as usize) % words.len();
        let mut w: Vec<&str> = words.clone();
        match n % 3 {
            0 => {
                w.remove(i);
            }
            1 => w.insert(i, words[i]),
            _ => w[i] = swaps[(x >> 40) as usize % swaps.len()],
        }
        let mutated: String = w.concat();
        if let Err(e) = compile_src(&format!("mut{n}"), &mutated) {
            assert_eq!(e.lines().count(), 1, "{e}");
            assert!(e.contains(": error: "), "{e}");
        }
    }
}

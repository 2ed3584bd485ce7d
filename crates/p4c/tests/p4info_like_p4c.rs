//! P4Info as p4c writes it where lanes once differed: the default action a table starts with
//! (`initial_default_action`, arguments full width), const entries flagged as initial entries,
//! actions called directly from a control listed (with their directionless parameters only), and
//! keys named as written in the control that declares them; what only a constant-false branch
//! reaches left out.

mod common;
use common::*;

fn table_program(default: &str) -> String {
    program(
        "",
        &format!(
            "action set_b(bit<8> v) {{ hdr.h.b = v; }}
             action wide(bit<32> v, bit<12> w) {{ hdr.h.c = v[7:0]; hdr.h.d = w[7:0]; }}
             table t {{ key = {{ hdr.h.a: exact; }} actions = {{ set_b; wide; NoAction; }} {default} }}
             apply {{ t.apply(); }}"
        ),
    )
}

/// The text between `initial_default_action {` and its closing brace.
fn initial_default(p4info: &str) -> String {
    let start = p4info
        .find("  initial_default_action {\n")
        .expect("no initial_default_action");
    let rest = &p4info[start..];
    let end = rest.find("\n  }\n").expect("unclosed");
    rest[..end + 5].to_string()
}

fn action_id(p4info: &str, name: &str) -> String {
    let at = p4info
        .find(&format!("name: \"{name}\""))
        .expect("action not listed");
    let before = &p4info[..at];
    let id_at = before.rfind("id: ").unwrap();
    before[id_at + 4..].lines().next().unwrap().to_string()
}

#[test]
fn a_default_with_arguments_is_written_full_width() {
    let out = compile_src("dflt", &table_program("default_action = wide(10, 0x20a);")).unwrap();
    let id = action_id(&out.p4info, "I.wide");
    assert_eq!(
        initial_default(&out.p4info),
        format!(
            "  initial_default_action {{\n    action_id: {id}\n    arguments {{\n      param_id: 1\n      value: \"\\000\\000\\000\\n\"\n    }}\n    arguments {{\n      param_id: 2\n      value: \"\\002\\n\"\n    }}\n  }}\n"
        )
    );
}

#[test]
fn printable_octets_are_written_as_characters() {
    let out = compile_src("dflt2", &table_program("default_action = set_b(0x41);")).unwrap();
    assert!(initial_default(&out.p4info).contains("value: \"A\"\n"));
}

#[test]
fn no_default_given_starts_with_no_action() {
    let out = compile_src("dflt3", &table_program("")).unwrap();
    let id = action_id(&out.p4info, "NoAction");
    assert_eq!(
        initial_default(&out.p4info),
        format!("  initial_default_action {{\n    action_id: {id}\n  }}\n")
    );
}

#[test]
fn const_entries_are_initial_entries() {
    let src = table_program("const entries = { 1 : set_b(2); }");
    let out = compile_src("consts", &src).unwrap();
    assert!(out
        .p4info
        .contains("  is_const_table: true\n  has_initial_entries: true\n"));
}

#[test]
fn an_action_called_from_a_control_is_listed_and_its_callee_is_not() {
    let src = program(
        "",
        "action inner(out bit<8> x) { x = 7; }
         action direct(inout bit<8> v, bit<8> k) { inner(v); v = v + k; }
         apply { direct(hdr.h.a, 3); }",
    );
    let out = compile_src("called", &src).unwrap();
    let at = out
        .p4info
        .find("name: \"I.direct\"")
        .expect("I.direct not listed");
    let entity = &out.p4info[at..];
    let entity = &entity[..entity.find("\n}\n").unwrap()];
    // `v` is bound by the call; `k` is the one control-plane parameter
    assert!(
        entity.contains("params {\n    id: 1\n    name: \"k\"\n    bitwidth: 8\n"),
        "{entity}"
    );
    assert!(!entity.contains("name: \"v\""), "{entity}");
    assert!(!out.p4info.contains("I.inner"), "{}", out.p4info);
}

#[test]
fn a_validity_key_is_named_as_p4c_names_it() {
    let src = program(
        "",
        "action a() { }
         table v { key = { hdr.h.isValid(): exact; } actions = { a; } }
         apply { v.apply(); }",
    );
    let out = compile_src("validkey", &src).unwrap();
    assert!(
        out.p4info.contains(
            "  match_fields {\n    id: 1\n    name: \"hdr.h.$valid$\"\n    bitwidth: 1\n"
        ),
        "{}",
        out.p4info
    );
}

#[test]
fn a_key_in_an_inlined_control_is_named_as_written_there() {
    let src = program(
        "control inner(inout h_t g) {
             action a() { g.b = 1; }
             table t { key = { g.a: exact; g.isValid(): exact; } actions = { a; } }
             apply { t.apply(); }
         }",
        "inner() c; apply { c.apply(hdr.h); }",
    );
    let out = compile_src("inlinedkey", &src).unwrap();
    for name in ["g.a", "g.$valid$"] {
        assert!(
            out.p4info.contains(&format!("    name: \"{name}\"\n")),
            "{name}: {}",
            out.p4info
        );
    }
    assert!(!out.p4info.contains("hdr.h.a"), "{}", out.p4info);
}

#[test]
fn what_only_a_constant_false_branch_reaches_is_left_out() {
    let src = program(
        "",
        "action never() { hdr.h.b = 1; }
         action hit_only() { }
         table dead { key = { hdr.h.a: exact; } actions = { hit_only; } }
         apply {
             if (false) { never(); }
             hdr.h.c = false ? (dead.apply().hit ? 8w1 : 8w2) : 8w3;
             if (true) { hdr.h.d = 4; } else { never(); }
         }",
    );
    let out = compile_src("deadbranch", &src).unwrap();
    for gone in ["I.never", "I.dead", "I.hit_only"] {
        assert!(!out.p4info.contains(gone), "{gone}: {}", out.p4info);
    }
    assert_eq!(
        run_with("deadbranch", &src, [9, 9, 9, 9], &|_| {}),
        [9, 9, 3, 4]
    );
}

#[test]
fn a_serializable_enum_a_key_is_of_is_listed_with_its_members_full_width() {
    let src = program(
        "enum bit<16> Colour { RED = 10, BLUE = 0xab00 }\nenum bit<8> Unused { X = 1 }",
        "action a() { }
         table t { key = { hdr.h.a: exact; m: ternary; } actions = { a; } }
         Colour m = Colour.RED;
         apply { t.apply(); }",
    );
    let out = compile_src("serenum", &src).unwrap();
    let at = out
        .p4info
        .find("  serializable_enums {\n")
        .expect("no serializable_enums");
    let rest = &out.p4info[at..];
    assert_eq!(
        &rest[..rest.find("\n  }\n").unwrap() + 5],
        "  serializable_enums {\n    key: \"Colour\"\n    value {\n      underlying_type {\n        bitwidth: 16\n      }\n      members {\n        name: \"RED\"\n        value: \"\\000\\n\"\n      }\n      members {\n        name: \"BLUE\"\n        value: \"\\253\\000\"\n      }\n    }\n  }\n"
    );
    assert!(
        !out.p4info.contains("Unused"),
        "an enum no key uses is not listed"
    );
}

#[test]
fn an_action_called_directly_with_constant_arguments_is_listed() {
    let src = program(
        "",
        "action mark(bit<8> v) { hdr.h.b = v; }
         apply { mark(8w7); }",
    );
    let out = compile_src("direct", &src).unwrap();
    assert!(
        out.p4info.contains("name: \"I.mark\""),
        "the action is not in P4Info:\n{}",
        out.p4info
    );
    assert!(
        !out.p4info.contains("tbl_"),
        "the synthesized table is listed"
    );
}

//! `t.apply().hit` / `.miss` inside expressions: the table runs exactly when the expression
//! would evaluate it (not right of a `||` already true, nor in the untaken branch of `?:`).

mod common;
use common::*;
use lanes_p4::MatchKey::Exact;

fn run(src: &str, h: [u8; 4]) -> [u8; 4] {
    // the tag names the program's directory: one per program, as tests run in parallel
    let mut hash = std::hash::DefaultHasher::new();
    std::hash::Hash::hash(src, &mut hash);
    let tag = format!("hit-values-{:x}", std::hash::Hasher::finish(&hash));
    let out = compile_src(&tag, src).unwrap_or_else(|e| panic!("{e}"));
    let mut p = load(&out.json);
    entry(&mut p, "I.t", vec![Exact(vec![5])], "I.mark", vec![]);
    let mut f = vec![0u8; 12];
    f.extend_from_slice(&[0x88, 0xb5]);
    f.extend_from_slice(&h);
    let (_, _, bytes) = pass(&mut p, &f, 1).unwrap_or_else(|d| panic!("{d:?}"));
    bytes[14..18].try_into().unwrap()
}

const TABLE: &str = "
    action mark() { hdr.h.b = 0xee; }
    table t { key = { hdr.h.a: exact; } actions = { mark; NoAction; } default_action = NoAction; }";

#[test]
fn a_hit_right_of_an_or_applies_the_table_only_when_the_left_is_false() {
    let src = program(
        "",
        &format!(
            "{TABLE}
        apply {{ hdr.h.c = (hdr.h.d == 1 || t.apply().hit) ? 8w10 : 8w20; }}"
        ),
    );
    assert_eq!(run(&src, [5, 0, 0, 1]), [5, 0, 10, 1]); // left true: t not applied
    assert_eq!(run(&src, [5, 0, 0, 0]), [5, 0xee, 10, 0]); // hit
    assert_eq!(run(&src, [6, 0, 0, 0]), [6, 0, 20, 0]); // miss
}

#[test]
fn a_miss_in_a_branch_of_a_conditional() {
    let src = program(
        "",
        &format!(
            "{TABLE}
        apply {{ hdr.h.c = hdr.h.d == 0 ? (t.apply().miss ? 8w3 : 8w4) : 8w1; }}"
        ),
    );
    assert_eq!(run(&src, [5, 0, 0, 7]), [5, 0, 1, 7]); // other branch: t not applied
    assert_eq!(run(&src, [5, 0, 0, 0]), [5, 0xee, 4, 0]);
    assert_eq!(run(&src, [6, 0, 0, 0]), [6, 0, 3, 0]);
}

#[test]
fn a_miss_in_a_function_argument() {
    let decls = "bit<8> twice(in bit<8> x) { return x + x; }";
    let src = program(
        decls,
        &format!(
            "{TABLE}
        apply {{ hdr.h.c = twice(t.apply().miss ? 8w3 : 8w4); }}"
        ),
    );
    assert_eq!(run(&src, [5, 0, 0, 0]), [5, 0xee, 8, 0]);
    assert_eq!(run(&src, [6, 0, 0, 0]), [6, 0, 6, 0]);
}

#[test]
fn a_hit_left_of_an_and_in_an_if() {
    let src = program(
        "",
        &format!(
            "{TABLE}
        apply {{ if (t.apply().hit && hdr.h.d == 0) {{ hdr.h.c = 1; }} else {{ hdr.h.c = 2; }} }}"
        ),
    );
    assert_eq!(run(&src, [5, 0, 0, 0]), [5, 0xee, 1, 0]);
    assert_eq!(run(&src, [5, 0, 0, 3]), [5, 0xee, 2, 3]);
    assert_eq!(run(&src, [6, 0, 0, 0]), [6, 0, 2, 0]);
}

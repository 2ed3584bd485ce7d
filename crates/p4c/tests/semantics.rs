//! Evaluation rules of P4-16 that change what a program computes, each on a program written
//! for the test and run through the switch's pipeline: operands are read left to right (a call
//! on the right that writes its argument does not change what the left side read), arguments
//! are copied in and out (an action writing a control variable it also receives inout sees
//! its own copy; two inout arguments naming one place), and an unsized constant next to a
//! bit<W> is cast to bit<W> first (`8w255 == -1` holds; `bit<8> x = -1` is 255).

mod common;
use common::*;

/// The four bytes after the Ethernet header once `src` has run over a frame carrying `h`.
fn run(tag: &str, src: &str, h: [u8; 4]) -> [u8; 4] {
    let out = compile_src(tag, src).unwrap_or_else(|e| panic!("{tag}: {e}"));
    let mut p = load(&out.json);
    let mut f = vec![0u8; 12];
    f.extend_from_slice(&[0x88, 0xb5]);
    f.extend_from_slice(&h);
    let (_, _, bytes) = pass(&mut p, &f, 1).unwrap_or_else(|d| panic!("{tag}: {d:?}"));
    bytes[14..18].try_into().unwrap()
}

#[test]
fn the_left_operand_is_read_before_a_call_on_the_right_writes_it() {
    let decls = "bit<8> set_one(inout bit<8> x) { x = 1; return 1; }";
    // v + set_one(v): 3 + 1 = 4 (read after the call it would be 1 + 1 = 2)
    let ing = "bit<8> v = 3;
        apply {
            hdr.h.a = v + set_one(v);
            hdr.h.b = v;
            bit<8> w = 7;
            if (w == set_one(w)) { hdr.h.c = 1; } else { hdr.h.c = 2; }
            hdr.h.d = hdr.h.d - set_one(hdr.h.d);
        }";
    // w == 1 compares the 7 read first: false; d = 9 - 1 = 8
    assert_eq!(
        run("order", &program(decls, ing), [0, 0, 0, 9]),
        [4, 1, 2, 8]
    );
}

#[test]
fn an_action_inout_argument_is_copied_in_and_out() {
    // the body writes the control variable it also receives inout: the parameter keeps the
    // value copied in, and copy-out overwrites the body's write
    let ing = "bit<8> c = 12;
        action take(inout bit<8> x) { hdr.h.a = x; c = 24; hdr.h.b = x; }
        action add_in(in bit<8> x) { c = 5; hdr.h.c = x + 1; }
        apply {
            take(c);
            take(c);
            hdr.h.d = c;
            add_in(c);
        }";
    // add_in reads x = 12 copied in, not the 5 the body wrote
    assert_eq!(run("copy", &program("", ing), [0; 4]), [12, 12, 13, 12]);
}

#[test]
fn inout_arguments_naming_one_place_are_written_back_left_to_right() {
    let decls = "void two(inout bit<8> x, inout bit<8> y) { x = x + 1; y = y + 10; }";
    // both copies start at 5; x is written back (6), then y (15)
    let ing = "apply { two(hdr.h.a, hdr.h.a); hdr.h.b = hdr.h.a; }";
    assert_eq!(
        run("twice", &program(decls, ing), [5, 0, 0, 0])[..2],
        [15, 15]
    );
}

#[test]
fn an_unsized_constant_is_cast_to_the_width_it_meets() {
    let ing = "apply {
            if (8w255 == -1) { hdr.h.a = 1; } else { hdr.h.a = 2; }
            if (hdr.h.b == -1) { hdr.h.c = 1; } else { hdr.h.c = 2; }
            bit<8> m = -2;
            hdr.h.d = m;
        }";
    assert_eq!(
        run("cast", &program("", ing), [0, 255, 0, 0]),
        [1, 255, 1, 254]
    );
}

#[test]
fn a_call_under_and_or_and_the_conditional_operator_runs_only_when_evaluated() {
    let decls = "bool bump(inout bit<8> x) { x = x + 1; return true; }
        bit<8> set(inout bit<8> x, in bit<8> v) { x = v; return v; }";
    let ing = "action in_action() {
            bool t = hdr.h.a == 0 && bump(hdr.h.c);
            hdr.h.d = t ? 8w1 : 8w0;
        }
        apply {
            bool skip = true || bump(hdr.h.b);
            bool run = false || bump(hdr.h.b);
            hdr.h.b = hdr.h.b + (skip && run ? 8w10 : 8w0);
            in_action();
            hdr.h.a = hdr.h.a == 0 ? set(hdr.h.c, 50) : set(hdr.h.d, 60);
        }";
    // b: bumped once (the || after true never runs), then + 10; c: bumped in the action as
    // a == 0, then set to 50 by the chosen side; d = 1 from the action, untouched by the other
    assert_eq!(
        run("short", &program(decls, ing), [0, 5, 7, 0]),
        [50, 16, 50, 1]
    );
    // a != 0: no bump, d = 0 then set to 60 by the other side; c untouched
    assert_eq!(
        run("short", &program(decls, ing), [1, 5, 7, 0]),
        [60, 16, 7, 60]
    );
}

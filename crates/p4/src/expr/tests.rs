use super::*;
use serde_json::json;

fn layout() -> Layout {
    let j = json!({
        "header_types": [{"name": "h_t", "id": 0, "fields": [["a", 8, false], ["b", 16, false], ["w", 128, false], ["x", 200, false]]}],
        "headers": [{"name": "h", "id": 0, "header_type": "h_t", "metadata": false}]
    });
    Layout::load(&j).unwrap()
}

fn run(l: &Layout, e: Value, w: &[u64]) -> u64 {
    let s = Scope {
        layout: l,
        params: &[],
        lookahead: false,
    };
    let x = compile(&e, &s, "t").unwrap();
    x.eval(&Env {
        w,
        valid: &[true],
        params: &[],
        look: &[],
        stack_next: &[],
    })
}

#[test]
fn wraps_with_mask_like_p4c() {
    let l = layout();
    // (h.a + 0xff) & 0xff with a = 2 -> 1
    let e = json!({"type": "expression", "value": {"op": "&",
        "left": {"type": "expression", "value": {"op": "+",
            "left": {"type": "field", "value": ["h", "a"]},
            "right": {"type": "hexstr", "value": "0xff"}}},
        "right": {"type": "hexstr", "value": "0xff"}}});
    assert_eq!(run(&l, e, &[2, 0, 0, 0]), 1);
    // (h.a - 3) & 0xff with a = 2 -> 0xff
    let e = json!({"type": "expression", "value": {"op": "&",
        "left": {"type": "expression", "value": {"op": "-",
            "left": {"type": "field", "value": ["h", "a"]},
            "right": {"type": "hexstr", "value": "0x3"}}},
        "right": {"type": "hexstr", "value": "0xff"}}});
    assert_eq!(run(&l, e, &[2, 0, 0, 0]), 0xff);
}

#[test]
fn ternary_valid_and_compare() {
    let l = layout();
    let e = json!({"type": "expression", "value": {"op": "?",
        "cond": {"type": "expression", "value": {"op": "d2b", "left": null,
            "right": {"type": "field", "value": ["h", "$valid$"]}}},
        "left": {"type": "expression", "value": {"op": ">",
            "left": {"type": "field", "value": ["h", "b"]},
            "right": {"type": "hexstr", "value": "0x10"}}},
        "right": {"type": "bool", "value": false}}});
    assert_eq!(run(&l, e.clone(), &[0, 0x11, 0, 0]), 1);
    assert_eq!(run(&l, e, &[0, 0x10, 0, 0]), 0);
}

#[test]
fn saturating_add_and_sub_as_p4c_emits_them() {
    // `h.a |+| 0xf0` and `h.a |-| 0x20` on bit<8>: usat_cast(left op right, 8)
    let l = layout();
    let sat = |op: &str, k: u64| {
        json!({"type": "expression", "value": {"op": "usat_cast",
            "left": {"type": "expression", "value": {"op": op,
                "left": {"type": "field", "value": ["h", "a"]},
                "right": {"type": "hexstr", "value": format!("{k:#x}")}}},
            "right": {"type": "hexstr", "value": "0x8"}}})
    };
    assert_eq!(run(&l, sat("+", 0xf0), &[0x0a, 0, 0, 0]), 0xfa);
    assert_eq!(run(&l, sat("+", 0xf0), &[0x20, 0, 0, 0]), 0xff);
    assert_eq!(run(&l, sat("-", 0x20), &[0x30, 0, 0, 0]), 0x10);
    assert_eq!(run(&l, sat("-", 0x20), &[0x10, 0, 0, 0]), 0);
}

#[test]
fn signed_fields_compare_shift_and_saturate_as_bmv2() {
    // s_t: a and b int<8>, u bit<8>
    let l = Layout::load(&json!({
        "header_types": [{"name": "s_t", "id": 0,
            "fields": [["a", 8, true], ["b", 8, true], ["u", 8, false]]}],
        "headers": [{"name": "s", "id": 0, "header_type": "s_t", "metadata": false}]
    }))
    .unwrap();
    let f = |n: &str| json!({"type": "field", "value": ["s", n]});
    let k = |t: &str| json!({"type": "hexstr", "value": t});
    let e = |o: &str, l: Value, r: Value| json!({"type": "expression", "value": {"op": o, "left": l, "right": r}});
    let w = [0xffu64, 0x01, 0xff]; // a = -1, b = 1, u = 255
    assert_eq!(run(&l, e("<", f("a"), f("b")), &w), 1, "-1 < 1 signed");
    assert_eq!(run(&l, e(">=", f("a"), k("-0x1")), &w), 1, "-1 >= -1");
    assert_eq!(
        run(&l, e("<", f("u"), k("0x1")), &w),
        0,
        "bit<8> 255 < 1 unsigned"
    );
    // a cast to bit<8> (& 0xff) compares unsigned again: 255 > 1
    assert_eq!(run(&l, e(">", e("&", f("a"), k("0xff")), f("b")), &w), 1);
    // -1 >> 1 stays -1 (arithmetic); stored in 8 bits
    assert_eq!(run(&l, e(">>", f("a"), k("0x1")), &w) as u8, 0xff);
    // two_comp_mod(127 + 1, 8) = -128; (bit<8>)0xff read as int<8> is -1 < 0
    let w = [0x7fu64, 0x01, 0xff];
    assert_eq!(
        run(&l, e("two_comp_mod", e("+", f("a"), f("b")), k("0x8")), &w) as u8,
        0x80
    );
    assert_eq!(
        run(
            &l,
            e("<", e("two_comp_mod", f("u"), k("0x8")), k("0x0")),
            &w
        ),
        1
    );
    // sat_cast(a + b, 8) and sat_cast(a - b, 8) clamp at 127 and -128
    assert_eq!(
        run(&l, e("sat_cast", e("+", f("a"), f("b")), k("0x8")), &w) as u8,
        0x7f
    );
    let w = [0x80u64, 0x01, 0];
    assert_eq!(
        run(&l, e("sat_cast", e("-", f("a"), f("b")), k("0x8")), &w) as u8,
        0x80
    );
    assert_eq!(
        run(&l, e("sat_cast", e("+", f("a"), f("b")), k("0x8")), &w) as u8,
        0x81
    );
    // unary minus (no left operand) of -128 wraps back to -128 in two_comp_mod(_, 8)
    let neg = json!({"type": "expression", "value": {"op": "-", "left": null, "right": f("a")}});
    assert_eq!(
        run(&l, e("two_comp_mod", neg.clone(), k("0x8")), &w) as u8,
        0x80
    );
    assert_eq!(
        run(&l, e("<", neg, k("0x0")), &w),
        0,
        "-(-128) unbounded is 128, not < 0"
    );
}

#[test]
fn refuses_wide_arithmetic_and_unknown_ops() {
    let l = layout();
    let s = Scope {
        layout: &l,
        params: &[],
        lookahead: false,
    };
    let e = json!({"type": "expression", "value": {"op": "+",
        "left": {"type": "field", "value": ["h", "x"]},
        "right": {"type": "hexstr", "value": "0x1"}}});
    let m = compile(&e, &s, "actions[0]").unwrap_err().to_string();
    assert!(m.contains("200-bit"), "{m}");
    let e = json!({"type": "expression", "value": {"op": "dereference_union_stack",
        "left": {"type": "header_union_stack", "value": "u"},
        "right": {"type": "hexstr", "value": "0x0"}}});
    let m = compile(&e, &s, "actions[0]").unwrap_err().to_string();
    assert_eq!(
        m,
        "actions[0]: expression operator \"dereference_union_stack\" not supported"
    );
    // access_field only of a run-time stack element
    let e = json!({"type": "expression", "value": {"op": "access_field",
        "left": {"type": "field", "value": ["h", "a"]}, "right": 0}});
    let m = compile(&e, &s, "actions[0]").unwrap_err().to_string();
    assert!(m.contains("dereference_header_stack"), "{m}");
}

#[test]
fn wide_values_slice_like_p4c_lookahead_lowering() {
    // p4c lowers `lookahead<h_t>().f` to (tmp128 >> k) & mask128 & mask_f
    let l = layout();
    let s = Scope {
        layout: &l,
        params: &[],
        lookahead: true,
    };
    let look: [u8; 16] = std::array::from_fn(|i| i as u8 + 1);
    let env = Env {
        w: &[],
        valid: &[],
        params: &[],
        look: &look,
        stack_next: &[],
    };
    let e = compile(&json!({"type": "lookahead", "value": [0, 128]}), &s, "t").unwrap();
    assert_eq!(e.eval128(&env), u128::from_be_bytes(look));
    let e = json!({"type": "expression", "value": {"op": "&",
        "left": {"type": "expression", "value": {"op": "&",
            "left": {"type": "expression", "value": {"op": ">>",
                "left": {"type": "lookahead", "value": [0, 128]},
                "right": {"type": "hexstr", "value": "0x60"}}},
            "right": {"type": "hexstr", "value": "0xffffffffffffffffffffffffffffffff"}}},
        "right": {"type": "hexstr", "value": "0xff"}}});
    // byte 4 of the lookahead: bits 96..103 from the right
    assert_eq!(compile(&e, &s, "t").unwrap().eval(&env), 4);
    // the 128-bit field w: word 2 high, word 3 low (after a and b)
    let e = json!({"type": "expression", "value": {"op": "+",
        "left": {"type": "field", "value": ["h", "w"]},
        "right": {"type": "hexstr", "value": "0x1"}}});
    let x = compile(&e, &s, "t").unwrap();
    let w = [0u64, 0, 1, u64::MAX];
    let v = x.eval128(&Env {
        w: &w,
        valid: &[],
        params: &[],
        look: &[],
        stack_next: &[],
    });
    assert_eq!(v, 2u128 << 64, "carry crosses the 64-bit word");
    assert!(compile(
        &json!({"type": "hexstr", "value": "0x1ffffffffffffffffffffffffffffffff"}),
        &s,
        "t"
    )
    .is_err());
}

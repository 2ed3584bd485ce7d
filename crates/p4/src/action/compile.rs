//! Compiling bmv2 JSON actions and their primitives into ops, at program load.

use super::operands::{extern_index, field_list_param};
use super::{Action, Names, Op, ParamInfo, WideSrc};
use crate::bits::{bytes_to_words, words_for};
use crate::expr::{self, Scope};
use crate::json::{self, err, label, R};
use crate::layout::{FieldLoc, FieldRef, Layout};
use serde_json::Value;

/// Wire bytes of header `h` (0 for metadata: its validity is not in the packet's length).
fn wire_bytes(l: &Layout, h: u32) -> i32 {
    let info = &l.headers[h as usize];
    if info.metadata {
        0
    } else {
        (info.bits / 8) as i32
    }
}

fn header_operand(v: &Value, l: &Layout, ctx: &str) -> R<u32> {
    if json::str_(v, "type", ctx)? != "header" {
        return err(ctx, "expected a header operand");
    }
    l.header(json::as_str(json::get(v, "value", ctx)?, ctx)?, ctx)
}

fn field_operand(v: &Value, l: &Layout, ctx: &str) -> R<FieldRef> {
    if json::str_(v, "type", ctx)? != "field" {
        return err(ctx, "expected a field operand");
    }
    l.resolve_field(json::get(v, "value", ctx)?, ctx)
}

fn narrow(f: FieldRef, ctx: &str) -> R<FieldRef> {
    if f.is_wide() {
        return err(
            ctx,
            format!("{}-bit field here not supported (max 64)", f.width),
        );
    }
    Ok(f)
}

/// Compiles `assign`: narrow fields take any expression, wide ones a same-width copy.
pub fn compile_assign(dst: &Value, src: &Value, s: &Scope, ctx: &str) -> R<Op> {
    let l = s.layout;
    let dst_ty = json::str_(dst, "type", ctx)?;
    if crate::expr::stack_index::is_element(dst) || crate::expr::stack_index::is_element(src) {
        let op = crate::expr::stack_index::compile_copy(dst, src, s, ctx)?;
        return Ok(Op::Element(Box::new(op)));
    }
    if dst_ty == "expression" {
        let op = crate::expr::stack_index::compile_set(dst, src, s, ctx)?;
        return Ok(Op::Element(Box::new(op)));
    }
    if dst_ty == "header" {
        let d = header_operand(dst, l, ctx)?;
        let sh = header_operand(src, l, ctx)?;
        if l.headers[d as usize].type_name != l.headers[sh as usize].type_name {
            return err(ctx, "header assignment between different header types");
        }
        let span = |h: u32| l.headers[h as usize].span();
        let ((dst_word, words), (src_word, _)) = (span(d), span(sh));
        return Ok(Op::CopyHeader {
            dst: d,
            src: sh,
            dst_word,
            src_word,
            words,
        });
    }
    if dst_ty == "field" {
        if let FieldLoc::Valid(h) = l.resolve(json::get(dst, "value", ctx)?, ctx)? {
            return Ok(Op::SetValidity(
                h,
                wire_bytes(l, h),
                expr::compile(src, s, ctx)?,
            ));
        }
    }
    let d = field_operand(dst, l, ctx)?;
    if let Some(dv) = l.varbit_of(d) {
        let sv = match json::str_(src, "type", ctx)? {
            "field" => l.varbit_of(field_operand(src, l, ctx)?),
            _ => None,
        };
        let Some(sv) = sv else {
            return err(ctx, "a varbit field takes only another varbit field");
        };
        return Ok(Op::AssignVarbit(Box::new((dv, sv))));
    }
    if !d.is_wide() {
        return Ok(Op::Set {
            dst: d,
            src: expr::compile(src, s, ctx)?,
        });
    }
    let val = json::get(src, "value", ctx)?;
    let copy = match json::str_(src, "type", ctx)? {
        "field" => match l.resolve(val, ctx)? {
            FieldLoc::Field(f) if f.width == d.width => Some(WideSrc::Field(f.word)),
            _ => None,
        },
        "runtime_data" | "local" => {
            let (w, word) = s.param(val, ctx)?;
            (w == d.width).then_some(WideSrc::Param(word))
        }
        "hexstr" => {
            let (neg, bytes) = json::parse_hex(json::as_str(val, ctx)?, ctx)?;
            let mut words = vec![0u64; words_for(d.width) as usize];
            (!neg && bytes_to_words(&bytes, d.width, &mut words))
                .then(|| WideSrc::Const(words.into_boxed_slice()))
        }
        _ => None,
    };
    if let Some(src) = copy {
        return Ok(Op::CopyWide { dst: d, src });
    }
    if d.width <= expr::MAX_BITS {
        return Ok(Op::Set2 {
            dst: d,
            src: expr::compile(src, s, ctx)?,
        });
    }
    err(
        ctx,
        format!(
            "assignment to a {}-bit field other than a same-width copy not supported (max {})",
            d.width,
            expr::MAX_BITS
        ),
    )
}

/// Compiles one primitive call; `idx` is its position (for jump checks), `n` the count.
pub fn compile_primitive(
    p: &Value,
    idx: usize,
    n: usize,
    s: &Scope,
    names: &Names,
    ctx: &str,
) -> R<Op> {
    let op = json::str_(p, "op", ctx)?;
    let ctx = &format!("{ctx} primitive {idx} \"{op}\"");
    let ps = json::arr_or_empty(p, "parameters", ctx)?;
    let want = |k: usize| -> R<()> {
        if ps.len() != k {
            return err(ctx, format!("expected {k} parameters, got {}", ps.len()));
        }
        Ok(())
    };
    let l = names.layout;
    let e = |v: &Value| expr::compile(v, s, ctx);
    Ok(match op {
        "assign" | "modify_field" | "assign_header" | "assign_VL" => {
            want(2)?;
            compile_assign(&ps[0], &ps[1], s, ctx)?
        }
        "add_header" | "setValid" | "remove_header" | "setInvalid"
            if ps.first().is_some_and(crate::expr::stack_index::is_element) =>
        {
            want(1)?;
            let valid = matches!(op, "add_header" | "setValid");
            let op = crate::expr::stack_index::compile_validity(&ps[0], valid, s, ctx)?;
            Op::Element(Box::new(op))
        }
        "add_header" | "setValid" => {
            want(1)?;
            let h = header_operand(&ps[0], l, ctx)?;
            if let Some(v) = crate::varbit_ops::Validity::of(l, h, true) {
                return Ok(Op::VarbitValidity(v));
            }
            match crate::union::siblings(l, h) {
                Some(sib) => Op::SetValidMember(h, wire_bytes(l, h), sib),
                None => Op::SetValid(h, wire_bytes(l, h)),
            }
        }
        "assign_header_stack" => {
            want(2)?;
            Op::CopyStack(Box::new(crate::stack_copy::header_stacks(
                &ps[0], &ps[1], l, ctx,
            )?))
        }
        "assign_union_stack" => {
            want(2)?;
            Op::CopyStack(Box::new(crate::stack_copy::union_stacks(
                &ps[0], &ps[1], l, ctx,
            )?))
        }
        "assign_union" => {
            want(2)?;
            let d = crate::union::operand(&ps[0], l, ctx)?;
            let s = crate::union::operand(&ps[1], l, ctx)?;
            Op::AssignUnion(crate::union::assign_plan(l, d, s, ctx)?)
        }
        "remove_header" | "setInvalid" => {
            want(1)?;
            let h = header_operand(&ps[0], l, ctx)?;
            if let Some(v) = crate::varbit_ops::Validity::of(l, h, false) {
                return Ok(Op::VarbitValidity(v));
            }
            Op::SetInvalid(h, wire_bytes(l, h))
        }
        "mark_to_drop" | "drop" | "_drop" => {
            if names.std.egress_spec.is_none() {
                return err(ctx, "standard_metadata.egress_spec is missing");
            }
            Op::MarkToDrop
        }
        "exit" => Op::Exit,
        "push" | "pop" => {
            want(2)?;
            if json::str_(&ps[0], "type", ctx)? != "header_stack" {
                return err(ctx, "expected a header_stack operand");
            }
            let name = json::as_str(json::get(&ps[0], "value", ctx)?, ctx)?;
            let Some(&stack) = l.stack_by_name.get(name) else {
                return err(ctx, format!("unknown header stack \"{name}\""));
            };
            if json::str_(&ps[1], "type", ctx)? != "hexstr" {
                return err(ctx, "push/pop count must be a constant");
            }
            let n = json::hex_u64(json::as_str(json::get(&ps[1], "value", ctx)?, ctx)?, ctx)?;
            let mut elems = Vec::new();
            let mut words = 0;
            for h in &l.stacks[stack as usize].headers {
                let (first, n) = l.headers[*h as usize].span();
                words = n;
                elems.push((*h, first));
            }
            Op::StackShift {
                stack,
                elems: elems.into_boxed_slice(),
                words,
                n: u32::try_from(n).unwrap_or(u32::MAX),
                push: op == "push",
            }
        }
        "no_op" => Op::Jump(idx as u32 + 1),
        "log_msg" => Op::LogMsg(Box::new(crate::log_msg::LogMsg::compile(ps, s, ctx)?)),
        "count" => {
            want(2)?;
            let arr = extern_index(&names.externs.counter_by_name, &ps[0], "counter_array", ctx)?;
            if names.externs.counters[arr as usize].is_direct {
                return err(ctx, "count() on a direct counter");
            }
            Op::Count {
                arr,
                index: e(&ps[1])?,
            }
        }
        "register_read" => {
            want(3)?;
            Op::RegRead {
                dst: narrow(field_operand(&ps[0], l, ctx)?, ctx)?,
                arr: extern_index(
                    &names.externs.register_by_name,
                    &ps[1],
                    "register_array",
                    ctx,
                )?,
                index: e(&ps[2])?,
            }
        }
        "modify_field_rng_uniform" => {
            want(3)?;
            Op::Random {
                dst: field_operand(&ps[0], l, ctx)?,
                lo: e(&ps[1])?,
                hi: e(&ps[2])?,
            }
        }
        "register_write" => {
            want(3)?;
            Op::RegWrite {
                arr: extern_index(
                    &names.externs.register_by_name,
                    &ps[0],
                    "register_array",
                    ctx,
                )?,
                index: e(&ps[1])?,
                val: e(&ps[2])?,
            }
        }
        "execute_meter" => {
            want(3)?;
            let arr = extern_index(&names.externs.meter_by_name, &ps[0], "meter_array", ctx)?;
            if names.externs.meters[arr as usize].is_direct {
                return err(ctx, "execute_meter() on a direct meter");
            }
            Op::Meter {
                arr,
                index: e(&ps[1])?,
                dst: narrow(field_operand(&ps[2], l, ctx)?, ctx)?,
            }
        }
        "modify_field_with_hash_based_offset" => {
            want(4)?;
            let calc = extern_index(names.calcs, &ps[2], "calculation", ctx)?;
            Op::Hash {
                dst: narrow(field_operand(&ps[0], l, ctx)?, ctx)?,
                base: e(&ps[1])?,
                calc,
                size: e(&ps[3])?,
            }
        }
        "clone_ingress_pkt_to_egress" | "clone_egress_pkt_to_egress" => {
            // p4c: (session, field list id); P4-14 style programs may leave the list out
            if ps.is_empty() || ps.len() > 2 {
                return err(ctx, format!("expected 1 or 2 parameters, got {}", ps.len()));
            }
            Op::Clone {
                session: e(&ps[0])?,
                field_list: field_list_param(ps.get(1), names, ctx)?,
            }
        }
        "generate_digest" => {
            // (receiver, learn list id); the receiver is bmv2's and means nothing here
            want(2)?;
            let v = &ps[1];
            if json::str_(v, "type", ctx)? != "hexstr" {
                return err(ctx, "the learn list id must be a constant");
            }
            let id = json::hex_u64(json::as_str(json::get(v, "value", ctx)?, ctx)?, ctx)?;
            match names.learn_lists.get(&id) {
                Some(i) => Op::Digest(*i - 1),
                None => return err(ctx, format!("unknown learn list id {id}")),
            }
        }
        "resubmit" | "recirculate" | "_recirculate" => {
            // p4c: (field list id); older output may give none
            if ps.len() > 1 {
                return err(ctx, format!("expected 0 or 1 parameters, got {}", ps.len()));
            }
            let field_list = field_list_param(ps.first(), names, ctx)?;
            if op == "resubmit" {
                Op::Resubmit(field_list)
            } else {
                Op::Recirculate(field_list)
            }
        }
        "truncate" => {
            want(1)?;
            Op::Truncate(e(&ps[0])?)
        }
        "_jump" | "_jump_if_zero" => {
            let (cond, target) = if op == "_jump" {
                want(1)?;
                (None, &ps[0])
            } else {
                want(2)?;
                (Some(e(&ps[0])?), &ps[1])
            };
            let t = json::hex_u64(json::as_str(json::get(target, "value", ctx)?, ctx)?, ctx)?;
            // backward jumps are loops (p4c's `for`): `run` bounds how many one action takes
            if t as usize > n || (t as usize == idx && cond.is_none()) {
                return err(ctx, format!("jump target {t} not supported"));
            }
            match cond {
                None => Op::Jump(t as u32),
                Some(c) => Op::JumpIfZero(c, t as u32),
            }
        }
        other => return err(ctx, format!("primitive \"{other}\" not supported")),
    })
}

pub fn load_actions(root: &Value, names: &Names) -> R<Vec<Action>> {
    let mut out = Vec::new();
    for (i, a) in json::arr(root, "actions", "top level")?.iter().enumerate() {
        let ctx = label("actions", i, a);
        let name = json::str_(a, "name", &ctx)?.to_string();
        let id = json::u64_(a, "id", &ctx)?;
        let mut params = Vec::new();
        let mut words = 0u32;
        for p in json::arr_or_empty(a, "runtime_data", &ctx)? {
            let pname = json::str_(p, "name", &ctx)?.to_string();
            let width = json::u64_(p, "bitwidth", &ctx)?;
            if width == 0 || width > 4096 {
                return err(
                    &ctx,
                    format!("parameter \"{pname}\" has bad bitwidth {width}"),
                );
            }
            params.push(ParamInfo {
                name: pname,
                width: width as u32,
                word: words,
            });
            words += words_for(width as u32);
        }
        let pw: Vec<(u32, u32)> = params.iter().map(|p| (p.width, p.word)).collect();
        let scope = Scope {
            layout: names.layout,
            params: &pw,
            lookahead: false,
        };
        let prims = json::arr(a, "primitives", &ctx)?;
        let mut ops = Vec::with_capacity(prims.len());
        for (k, p) in prims.iter().enumerate() {
            ops.push(compile_primitive(p, k, prims.len(), &scope, names, &ctx)?);
        }
        out.push(Action {
            name,
            id,
            params,
            data_words: words,
            ops,
        });
    }
    Ok(out)
}

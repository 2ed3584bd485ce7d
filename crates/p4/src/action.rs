//! Actions: primitives compiled into straight-line ops over the packet state (compile.rs, at
//! load time), and those ops run on a packet (`run`).

mod compile;
mod operands;
pub use compile::{compile_assign, compile_primitive, load_actions};

use crate::bits::mask;
use crate::checksum::Calculation;
use crate::expr::{Env, Expr};
use crate::externs::Externs;
use crate::layout::{FieldRef, Layout};
use crate::state::CloneRequest;
use crate::state::{put, PacketState, StdFields};
use crate::Stats;
use std::collections::HashMap;

#[derive(Debug, Clone)]
pub enum WideSrc {
    Field(u32),
    Param(u32),
    Const(Box<[u64]>),
}

#[derive(Debug, Clone)]
pub enum Op {
    Set {
        dst: FieldRef,
        src: Expr,
    },
    CopyWide {
        dst: FieldRef,
        src: WideSrc,
    },
    /// A 65..=128-bit destination computed by an expression.
    Set2 {
        dst: FieldRef,
        src: Expr,
    },
    /// `add_header` / `remove_header` (p4c's setValid / setInvalid) of a header with this many
    /// wire bytes (0 for metadata): a change of validity changes the packet's length as egress
    /// sees it, as bmv2's packet-length register does.
    SetValid(u32, i32),
    SetInvalid(u32, i32),
    /// `hdr.$valid$ = expr` (p4c writes validity this way, e.g. after a lookahead).
    SetValidity(u32, i32, Expr),
    /// setValid of a header union member: its siblings (with their wire bytes) become invalid.
    SetValidMember(u32, i32, Box<[(u32, i32)]>),
    /// `assign_union`: member by member, validity and fields.
    AssignUnion(Box<[crate::union::MemberCopy]>),
    /// `assign_header_stack` / `assign_union_stack`: a whole stack copied.
    CopyStack(Box<crate::stack_copy::StackCopy>),
    /// A write to a header stack element chosen at run time (boxed: rare, and keeps `Op` small).
    Element(Box<crate::expr::stack_index::ElementOp>),
    /// push_front (`push`) or pop_front of `n` elements of a stack; `elems` are the elements'
    /// (header, first word) in order, each `words` long.
    StackShift {
        stack: u32,
        elems: Box<[(u32, u32)]>,
        words: u32,
        n: u32,
        push: bool,
    },
    /// `add_header` / `remove_header` of a header ending in a varbit field.
    VarbitValidity(crate::varbit_ops::Validity),
    /// `assign_VL`: a varbit field takes another's value and length (boxed: the op stays as
    /// small as it was).
    AssignVarbit(Box<(crate::varbit::VarRef, crate::varbit::VarRef)>),
    CopyHeader {
        dst: u32,
        src: u32,
        dst_word: u32,
        src_word: u32,
        words: u32,
    },
    MarkToDrop,
    Exit,
    Count {
        arr: u32,
        index: Expr,
    },
    RegRead {
        dst: FieldRef,
        arr: u32,
        index: Expr,
    },
    RegWrite {
        arr: u32,
        index: Expr,
        val: Expr,
    },
    Meter {
        arr: u32,
        index: Expr,
        dst: FieldRef,
    },
    Hash {
        dst: FieldRef,
        base: Expr,
        calc: u32,
        size: Expr,
    },
    Jump(u32),
    JumpIfZero(Expr, u32),
    /// `clone_ingress_pkt_to_egress` / `clone_egress_pkt_to_egress` (p4c's `clone` and
    /// `clone_preserving_field_list`): asks for a copy at the end of the running control. As in
    /// bmv2 both primitives set the same request, so which clone it is (I2E or E2E) depends on
    /// the control that runs it. `field_list`: index + 1 in the program's field lists, 0: none.
    Clone {
        session: Expr,
        field_list: u32,
    },
    /// `truncate(len)`: the packet is cut to `len` bytes when it is deparsed.
    Truncate(Expr),
    /// `resubmit` (p4c's `resubmit_preserving_field_list`): the field list the next pass keeps.
    Resubmit(u32),
    /// `recirculate` (p4c's `recirculate_preserving_field_list`): likewise.
    Recirculate(u32),
    /// `digest(receiver, data)` (bmv2's `generate_digest`): the learn list's index.
    Digest(u32),
    /// `log_msg(format, values)`: a line in the switch's log at info level.
    LogMsg(Box<crate::log_msg::LogMsg>),
    /// `random(dst, lo, hi)` (bmv2's `modify_field_rng_uniform`): uniform in [lo, hi].
    Random {
        dst: FieldRef,
        lo: Expr,
        hi: Expr,
    },
}

#[derive(Debug, Clone)]
pub struct ParamInfo {
    pub name: String,
    pub width: u32,
    pub word: u32,
}

#[derive(Debug, Clone)]
pub struct Action {
    pub name: String,
    pub id: u64,
    pub params: Vec<ParamInfo>,
    /// Words of action data an entry carries for this action.
    pub data_words: u32,
    pub ops: Vec<Op>,
}

/// Names a primitive may refer to, resolved while compiling.
pub struct Names<'a> {
    pub layout: &'a Layout,
    pub externs: &'a Externs,
    pub calcs: &'a HashMap<String, u32>,
    pub std: &'a StdFields,
    /// Field list ids of the JSON `field_lists` -> index + 1 in the program's list.
    pub field_lists: &'a HashMap<u64, u32>,
    /// Learn list ids of the JSON `learn_lists` -> index + 1 in the program's list.
    pub learn_lists: &'a HashMap<u64, u32>,
    /// Parser value sets by name -> (index, width).
    pub vsets: &'a HashMap<String, (u32, u32)>,
}

/// Everything an op may touch besides the packet state.
pub struct Exec<'a> {
    pub ext: &'a mut Externs,
    pub calcs: &'a [Calculation],
    pub scratch: &'a mut Vec<u8>,
    pub std: &'a StdFields,
    pub now: u64,
    pub stats: &'a mut Stats,
    /// The per-packet log, when on (see trace.rs).
    pub trace: Option<&'a mut crate::trace::Tracer>,
}

#[inline]
fn index_of(e: &Expr, env: &Env) -> usize {
    usize::try_from(e.eval(env)).unwrap_or(usize::MAX)
}

/// How many backward jumps (loop iterations) one action takes before it is stopped: bmv2
/// would run a loop that never ends forever; the switch stops the action there instead.
pub const MAX_BACKWARD_JUMPS: u32 = 1 << 20;

/// Runs ops on the packet; `params` is the entry's action data.
pub fn run(ops: &[Op], params: &[u64], look: &[u8], st: &mut PacketState, x: &mut Exec) {
    let mut pc = 0usize;
    let mut backward = 0u32;
    while let Some(op) = ops.get(pc) {
        pc += 1;
        macro_rules! env {
            () => {
                Env {
                    w: &st.w,
                    valid: &st.valid,
                    stack_next: &st.stack_next,
                    params,
                    look,
                }
            };
        }
        match op {
            Op::Set { dst, src } => {
                let v = src.eval(&env!());
                st.set(*dst, v);
            }
            Op::Set2 { dst, src } => {
                let v = src.eval128(&env!());
                let d = dst.word as usize;
                st.w[d] = (v >> 64) as u64 & mask(dst.width - 64);
                st.w[d + 1] = v as u64;
            }
            Op::CopyWide { dst, src } => {
                let n = dst.words() as usize;
                let d = dst.word as usize;
                for k in 0..n {
                    let v = match src {
                        WideSrc::Field(w) => st.w[*w as usize + k],
                        WideSrc::Param(w) => params.get(*w as usize + k).copied().unwrap_or(0),
                        WideSrc::Const(c) => c[k],
                    };
                    st.w[d + k] = v;
                }
                st.w[d] &= mask(dst.width - 64 * (n as u32 - 1));
            }
            Op::SetValid(h, bytes) => st.set_validity(*h, true, *bytes),
            Op::SetInvalid(h, bytes) => st.set_validity(*h, false, *bytes),
            Op::SetValidMember(h, bytes, sib) => crate::union::make_valid(st, *h, *bytes, sib),
            Op::AssignUnion(plan) => crate::union::assign(st, plan),
            Op::Element(op) => crate::expr::stack_index::run(op, params, look, st),
            Op::CopyStack(c) => crate::stack_copy::run(st, c),
            Op::SetValidity(h, bytes, e) => {
                let v = e.eval(&env!());
                st.set_validity(*h, v != 0, *bytes);
            }
            Op::StackShift {
                stack,
                elems,
                words,
                n,
                push,
            } => shift_stack(st, *stack, elems, *words as usize, *n as usize, *push),
            Op::CopyHeader {
                dst,
                src,
                dst_word,
                src_word,
                words,
            } => {
                // same header type: both occupy the same number of consecutive words
                st.valid[*dst as usize] = st.valid[*src as usize];
                let s = *src_word as usize;
                st.w.copy_within(s..s + *words as usize, *dst_word as usize);
            }
            Op::AssignVarbit(ds) => ds.0.assign(&ds.1, &mut st.w),
            Op::VarbitValidity(v) => v.apply(st),
            Op::MarkToDrop => {
                put(st, x.std.egress_spec, 511);
                put(st, x.std.mcast_grp, 0);
            }
            Op::Exit => {
                st.exited = true;
                return;
            }
            Op::Count { arr, index } => {
                let i = index_of(index, &env!());
                let bytes = crate::state::take(st, x.std.packet_length).unwrap_or(0);
                match x.ext.counters[*arr as usize].cells.get_mut(i) {
                    Some(c) => c.hit(bytes),
                    None => x.stats.extern_index_errors += 1,
                }
            }
            Op::RegRead { dst, arr, index } => {
                let i = index_of(index, &env!());
                let v = match x.ext.registers[*arr as usize].cells.get(i) {
                    Some(v) => *v,
                    None => {
                        x.stats.extern_index_errors += 1;
                        0
                    }
                };
                st.set(*dst, v);
            }
            Op::Random { dst, lo, hi } => {
                let env = env!();
                let (a, b) = (lo.eval(&env), hi.eval(&env));
                let r = x.ext.next_random();
                let v = match b.checked_sub(a) {
                    None | Some(0) => a,
                    Some(u64::MAX) => r,
                    Some(span) => a + r % (span + 1),
                };
                st.set(*dst, v);
            }
            Op::LogMsg(m) => {
                if let Some(t) = x.trace.as_deref_mut() {
                    t.log_msg(&m.render(&env!()));
                }
            }
            Op::RegWrite { arr, index, val } => {
                let env = env!();
                let i = index_of(index, &env);
                let v = val.eval(&env);
                let r = &mut x.ext.registers[*arr as usize];
                let m = mask(r.width);
                match r.cells.get_mut(i) {
                    Some(c) => *c = v & m,
                    None => x.stats.extern_index_errors += 1,
                }
            }
            Op::Meter { arr, index, dst } => {
                let i = index_of(index, &env!());
                let m = &mut x.ext.meters[*arr as usize];
                let units = if m.packets {
                    1
                } else {
                    crate::state::take(st, x.std.packet_length).unwrap_or(0)
                };
                let colour = match m.cells.get_mut(i) {
                    Some(c) => c.execute(units, x.now),
                    None => {
                        x.stats.extern_index_errors += 1;
                        crate::externs::GREEN
                    }
                };
                st.set(*dst, colour);
            }
            Op::Hash {
                dst,
                base,
                calc,
                size,
            } => {
                let env = env!();
                let b = base.eval(&env);
                let sz = size.eval(&env);
                let h = x.calcs[*calc as usize].compute(st, x.scratch);
                let v = if sz == 0 {
                    b.wrapping_add(h)
                } else {
                    b.wrapping_add(h % sz)
                };
                st.set(*dst, v);
            }
            Op::Clone {
                session,
                field_list,
            } => {
                let s = session.eval(&env!());
                st.clone = Some(CloneRequest {
                    session: u32::try_from(s).unwrap_or(u32::MAX),
                    field_list: *field_list,
                });
            }
            Op::Resubmit(list) => st.resubmit = Some(*list),
            Op::Recirculate(list) => st.recirculate = Some(*list),
            // bounded: a packet's actions cannot fill memory with digests
            Op::Digest(list) if st.digests.len() < 16 => st.digests.push(*list),
            Op::Digest(_) => {}
            Op::Truncate(len) => {
                let n = u32::try_from(len.eval(&env!())).unwrap_or(u32::MAX);
                st.truncate = Some(st.truncate.map_or(n, |t| t.min(n)));
            }
            Op::Jump(t) | Op::JumpIfZero(_, t) => {
                if let Op::JumpIfZero(c, _) = op {
                    if c.eval(&env!()) != 0 {
                        continue;
                    }
                }
                if (*t as usize) < pc {
                    backward += 1;
                    if backward > MAX_BACKWARD_JUMPS {
                        return;
                    }
                }
                pc = *t as usize;
            }
        }
    }
}

/// push_front / pop_front as bmv2: elements move by `n`, the `n` freed ones become invalid,
/// the stack's next index moves with them (within 0..=size). No allocation.
fn shift_stack(
    st: &mut PacketState,
    stack: u32,
    elems: &[(u32, u32)],
    words: usize,
    n: usize,
    push: bool,
) {
    let size = elems.len();
    let n = n.min(size);
    let copy = |st: &mut PacketState, to: usize, from: usize| {
        let ((dh, dw), (sh, sw)) = (elems[to], elems[from]);
        st.valid[dh as usize] = st.valid[sh as usize];
        st.w.copy_within(sw as usize..sw as usize + words, dw as usize);
    };
    let next = st.stack_next[stack as usize] as usize;
    let (freed, next) = if push {
        for i in (n..size).rev() {
            copy(st, i, i - n);
        }
        (0..n, (next + n).min(size))
    } else {
        for i in 0..size - n {
            copy(st, i, i + n);
        }
        (size - n..size, next.saturating_sub(n))
    };
    for (h, _) in &elems[freed] {
        st.valid[*h as usize] = false;
    }
    st.stack_next[stack as usize] = next as u32;
}

#[cfg(test)]
mod tests {
    use crate::testprog::{frame, load, run_action, skeleton};
    use serde_json::{json, Value};

    /// Ethernet, then a stack `s` of three 8-bit elements parsed until an element with the top
    /// bit set (`s.last.v`, a stack_field transition key); `prims` run in ingress.
    fn stack_program(prims: Value) -> Value {
        let mut j = skeleton(json!([]));
        j["header_types"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "e_t", "id": 3, "fields": [["v", 8, false]]}));
        let hs = j["headers"].as_array_mut().unwrap();
        for i in 0..3 {
            hs.push(
                json!({"name": format!("s[{i}]"), "id": 3 + i, "header_type": "e_t",
                "metadata": false}),
            );
        }
        j["header_stacks"] = json!([{"name": "s", "id": 0, "header_type": "e_t", "size": 3,
            "header_ids": [3, 4, 5]}]);
        j["parsers"][0]["parse_states"] = json!([
            {"name": "start", "id": 0,
             "parser_ops": [{"op": "extract", "parameters": [{"type": "regular", "value": "ethernet"}]}],
             "transition_key": [{"type": "field", "value": ["ethernet", "etherType"]}],
             "transitions": [{"value": "0x1234", "mask": null, "next_state": "parse_s"},
                             {"value": "default", "mask": null, "next_state": null}]},
            {"name": "parse_s", "id": 1,
             "parser_ops": [{"op": "extract", "parameters": [{"type": "stack", "value": "s"}]}],
             "transition_key": [{"type": "stack_field", "value": ["s", "v"]}],
             "transitions": [{"value": "0x80", "mask": "0x80", "next_state": null},
                             {"value": "default", "mask": null, "next_state": "parse_s"}]}
        ]);
        j["deparsers"][0]["order"] = json!(["ethernet", "s[0]", "s[1]", "s[2]"]);
        run_action(
            &mut j,
            json!([{"name": "a", "id": 0, "runtime_data": [], "primitives": prims}]),
            0,
        );
        j
    }

    fn last_to_egress_spec() -> Value {
        json!({"op": "assign", "parameters": [
            {"type": "field", "value": ["standard_metadata", "egress_spec"]},
            {"type": "expression", "value": {"type": "stack_field", "value": ["s", "v"]}}]})
    }

    #[test]
    fn push_front_shifts_and_moves_last() {
        let mut p = load(&stack_program(json!([
            {"op": "push", "parameters": [{"type": "header_stack", "value": "s"},
                                          {"type": "hexstr", "value": "0x1"}]},
            {"op": "add_header", "parameters": [{"type": "header", "value": "s[0]"}]},
            {"op": "assign", "parameters": [{"type": "field", "value": ["s[0]", "v"]},
                                            {"type": "hexstr", "value": "0x77"}]},
            last_to_egress_spec()
        ])));
        let mut st = p.new_state();
        let mut out = Vec::new();
        let (ig, eg) = p.process(&mut st, &frame(0x1234, &[0x01, 0x82, 0xaa]), 1, 0, &mut out);
        assert_eq!(eg.drop, None);
        // s = [1, 0x82] -> push -> [0x77, 1, 0x82]; last is s[2]
        assert_eq!(&out[14..], &[0x77, 0x01, 0x82, 0xaa]);
        assert_eq!(ig.egress_spec, 0x82);
    }

    #[test]
    fn pop_front_shifts_invalidates_and_moves_last() {
        let mut p = load(&stack_program(json!([
            {"op": "pop", "parameters": [{"type": "header_stack", "value": "s"},
                                         {"type": "hexstr", "value": "0x1"}]},
            last_to_egress_spec()
        ])));
        let mut st = p.new_state();
        let mut out = Vec::new();
        let (ig, eg) = p.process(
            &mut st,
            &frame(0x1234, &[0x01, 0x02, 0x83, 0xaa]),
            1,
            0,
            &mut out,
        );
        assert_eq!(eg.drop, None);
        // s = [1, 2, 0x83] -> pop -> [2, 0x83, invalid]; last is s[1]
        assert_eq!(&out[14..], &[0x02, 0x83, 0xaa]);
        assert_eq!(ig.egress_spec, 0x83);
        // popping more than the stack holds empties it
        let mut p = load(&stack_program(json!([
            {"op": "pop", "parameters": [{"type": "header_stack", "value": "s"},
                                         {"type": "hexstr", "value": "0x9"}]},
            last_to_egress_spec()
        ])));
        let (ig, _) = p.process(&mut st, &frame(0x1234, &[0x01, 0x82, 0xaa]), 1, 0, &mut out);
        assert_eq!(&out[14..], &[0xaa]);
        assert_eq!(ig.egress_spec, 0);
    }

    #[test]
    fn assigning_valid_bit_sets_validity() {
        // p4c writes `hdr.m.$valid$ = expr` (e.g. a header read by lookahead)
        let mut j = skeleton(json!([]));
        j["header_types"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "m_t", "id": 3, "fields": [["v", 8, false]]}));
        j["headers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "m", "id": 3, "header_type": "m_t", "metadata": false}));
        j["parsers"][0]["parse_states"][0]["parser_ops"]
            .as_array_mut()
            .unwrap()
            .push(json!({"op": "set", "parameters": [
                {"type": "field", "value": ["m", "$valid$"]},
                {"type": "expression", "value": {"op": "&",
                    "left": {"type": "lookahead", "value": [0, 8]},
                    "right": {"type": "hexstr", "value": "0x01"}}}]}));
        j["deparsers"][0]["order"] = json!(["ethernet", "m"]);
        let mut p = load(&j);
        let mut st = p.new_state();
        let mut out = Vec::new();
        p.process(&mut st, &frame(0x0800, &[0x01]), 1, 0, &mut out);
        assert_eq!(
            &out[14..],
            &[0x00, 0x01],
            "m valid: emitted (zero) before the payload"
        );
        p.process(&mut st, &frame(0x0800, &[0x02]), 1, 0, &mut out);
        assert_eq!(&out[14..], &[0x02], "m invalid: not emitted");
    }
}

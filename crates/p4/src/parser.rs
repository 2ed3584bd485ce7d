//! The parser: states with extract/set/verify/advance ops and select transitions on fields and
//! lookahead bits (value/mask), compiled to indices.

use crate::action::{self, compile_assign, compile_primitive, Exec, Names, Op};
use crate::codec::HeaderCodec;
use crate::expr::{self, Env, Expr, Scope};
use crate::json::{self, err, R};
use crate::layout::FieldLoc;
pub use crate::parse_errors::ErrorCodes;
use crate::state::PacketState;
use crate::vset::ValueSet;
use serde_json::Value;
use std::collections::HashMap;

#[derive(Debug, Clone)]
enum POp {
    Extract(u32),
    ExtractStack(u32),
    /// Extract of a header union member: its siblings (and wire bytes) become invalid.
    ExtractMember(u32, Box<[(u32, i32)]>),
    /// `extract(u.next.member)` of a header union stack.
    ExtractUnionStack(Box<crate::union_stack::Extract>),
    /// `extract_VL`: a header ending in a varbit field, the field's length in bits computed
    /// by `len`; the whole header may take at most `max_bytes`.
    ExtractVl {
        into: crate::varbit_ops::VlTarget,
        len: Expr,
        max_bytes: u32,
    },
    Verify {
        cond: Expr,
        error: Expr,
    },
    Advance(Expr),
    Prim(Op),
}

#[derive(Debug, Clone)]
enum KeyPart {
    Field {
        word: u32,
        bytes: u32,
    },
    Valid,
    ValidOf(u32),
    Lookahead {
        bit_off: u32,
        width: u32,
    },
    /// A value computed from the state (a stack's last element's field).
    Expr {
        e: Expr,
        bytes: u32,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    Accept,
    Reject,
    State(u32),
}

/// A select case: a constant (value, mask) or a value set (index, mask).
#[derive(Debug, Clone, Copy)]
enum Case {
    Const(u128, u128, Next),
    Set(u32, u128, Next),
}

#[derive(Debug, Clone)]
struct ParseState {
    ops: Vec<POp>,
    key: Vec<KeyPart>,
    cases: Vec<(u128, u128, Next)>,
    /// The cases in order when some are value sets (then `cases` is unused).
    set_cases: Option<Vec<Case>>,
    default: Option<Next>,
    /// Bits past the cursor the key and set ops read by lookahead.
    look_bits: u32,
}

#[derive(Debug, Clone)]
pub struct Parser {
    states: Vec<ParseState>,
    init: Next,
}

const MAX_STEPS: u32 = 1024;

fn next_of(v: Option<&Value>, ids: &HashMap<&str, u32>, ctx: &str) -> R<Next> {
    match v {
        None | Some(Value::Null) => Ok(Next::Accept),
        Some(Value::String(s)) => match ids.get(s.as_str()) {
            Some(i) => Ok(Next::State(*i)),
            None if s == "accept" => Ok(Next::Accept),
            None if s == "reject" => Ok(Next::Reject),
            None => err(ctx, format!("unknown parse state \"{s}\"")),
        },
        Some(_) => err(ctx, "next_state must be a string or null"),
    }
}

/// The first case matching key `k`, value sets looked up as they are now.
#[inline(never)]
fn select_with_sets(all: &[Case], k: u128, vsets: &[ValueSet]) -> Option<Next> {
    all.iter().find_map(|c| match *c {
        Case::Const(v, m, n) => (k & m == v).then_some(n),
        Case::Set(i, m, n) => vsets[i as usize].contains(k & m).then_some(n),
    })
}

fn hex_u128(s: &str, ctx: &str) -> R<u128> {
    let (neg, b) = json::parse_hex(s, ctx)?;
    if neg || b.len() > 16 {
        return err(ctx, format!("select value {s} not supported"));
    }
    Ok(b.iter().fold(0u128, |a, x| (a << 8) | u128::from(*x)))
}

impl Parser {
    pub fn load(root: &Value, names: &Names) -> R<Parser> {
        let parsers = json::arr(root, "parsers", "top level")?;
        if parsers.len() != 1 {
            return err(
                "parsers",
                format!("expected one parser, found {}", parsers.len()),
            );
        }
        Parser::load_nth(root, names, 0)
    }

    /// The parser at index `i` of the JSON `parsers` (PSA has two: ingress and egress).
    pub fn load_nth(root: &Value, names: &Names, i: usize) -> R<Parser> {
        let parsers = json::arr(root, "parsers", "top level")?;
        let Some(p) = parsers.get(i) else {
            return err("parsers", format!("no parser at index {i}"));
        };
        let pctx = json::label("parsers", i, p);
        let states = json::arr(p, "parse_states", &pctx)?;
        let mut ids = HashMap::new();
        for (i, s) in states.iter().enumerate() {
            ids.insert(json::str_(s, "name", &pctx)?, i as u32);
        }
        let l = names.layout;
        let scope = Scope {
            layout: l,
            params: &[],
            lookahead: true,
        };
        let mut out = Vec::with_capacity(states.len());
        for (i, s) in states.iter().enumerate() {
            let ctx = format!("{pctx} {}", json::label("parse_states", i, s));
            let mut ops = Vec::new();
            let mut look_bits = 0;
            let pops = json::arr(s, "parser_ops", &ctx)?;
            for (k, o) in pops.iter().enumerate() {
                let op = json::str_(o, "op", &ctx)?;
                let octx = format!("{ctx} parser_ops[{k}] \"{op}\"");
                let ps = json::arr_or_empty(o, "parameters", &octx)?;
                let need = |n: usize| -> R<()> {
                    if ps.len() != n {
                        return err(&octx, format!("expected {n} parameters, got {}", ps.len()));
                    }
                    Ok(())
                };
                match op {
                    "extract_VL" => {
                        need(2)?;
                        let (into, len, max_bytes) =
                            crate::varbit_ops::load_extract(&ps[0], &ps[1], &scope, &octx)?;
                        look_bits = look_bits.max(len.lookahead_bits());
                        ops.push(POp::ExtractVl {
                            into,
                            len,
                            max_bytes,
                        });
                    }
                    "extract" => {
                        need(1)?;
                        let value = json::get(&ps[0], "value", &octx)?;
                        let v = value.as_str().unwrap_or_default();
                        match json::str_(&ps[0], "type", &octx)? {
                            "regular" => {
                                let h = l.wire_header(v, &octx)?;
                                if l.headers[h as usize].varbit.is_some() {
                                    return err(
                                        &octx,
                                        format!("\"{v}\" has a varbit field: extract it with extract_VL"),
                                    );
                                }
                                ops.push(match crate::union::siblings(l, h) {
                                    Some(sib) => POp::ExtractMember(h, sib),
                                    None => POp::Extract(h),
                                });
                            }
                            "stack" => match l.stack_by_name.get(v) {
                                Some(x)
                                    if l.stacks[*x as usize]
                                        .headers
                                        .iter()
                                        .any(|h| l.headers[*h as usize].varbit.is_some()) =>
                                {
                                    return err(
                                        &octx,
                                        format!("stack \"{v}\" holds headers with a varbit field: extract them with extract_VL"),
                                    )
                                }
                                Some(x) => ops.push(POp::ExtractStack(*x)),
                                None => return err(&octx, format!("unknown header stack \"{v}\"")),
                            },
                            "union_stack" => {
                                let x = crate::union_stack::extract(value, l, &octx)?;
                                ops.push(POp::ExtractUnionStack(Box::new(x)));
                            }
                            t => return err(&octx, format!("extract of \"{t}\" not supported")),
                        }
                    }
                    "set" => {
                        need(2)?;
                        let op = compile_assign(&ps[0], &ps[1], &scope, &octx)?;
                        if let Op::Set { src, .. } | Op::Set2 { src, .. } = &op {
                            look_bits = look_bits.max(src.lookahead_bits());
                        }
                        ops.push(POp::Prim(op));
                    }
                    "verify" => {
                        need(2)?;
                        ops.push(POp::Verify {
                            cond: expr::compile(&ps[0], &scope, &octx)?,
                            error: expr::compile(&ps[1], &scope, &octx)?,
                        });
                    }
                    "advance" => {
                        need(1)?;
                        ops.push(POp::Advance(expr::compile(&ps[0], &scope, &octx)?));
                    }
                    // p4c writes header, union and stack assignments as parser ops of their own
                    "primitive"
                    | "assign_header"
                    | "assign_union"
                    | "assign_header_stack"
                    | "assign_union_stack" => {
                        let op = if op == "primitive" {
                            need(1)?;
                            compile_primitive(&ps[0], 0, 1, &scope, names, &octx)?
                        } else {
                            compile_primitive(o, 0, 1, &scope, names, &octx)?
                        };
                        if matches!(op, Op::Jump(_) | Op::JumpIfZero(..) | Op::Exit) {
                            return err(&octx, "control flow primitive in a parser not supported");
                        }
                        ops.push(POp::Prim(op));
                    }
                    other => return err(&octx, format!("parser op \"{other}\" not supported")),
                }
            }
            let mut key = Vec::new();
            let mut key_bytes = 0u32;
            for kv in json::arr_or_empty(s, "transition_key", &ctx)? {
                let val = json::get(kv, "value", &ctx)?;
                match json::str_(kv, "type", &ctx)? {
                    "field" => match l.resolve(val, &ctx)? {
                        FieldLoc::Field(f) => {
                            if f.is_wide() {
                                return err(
                                    &ctx,
                                    "select on a field wider than 64 bits not supported",
                                );
                            }
                            let bytes = f.width.div_ceil(8);
                            key_bytes += bytes;
                            key.push(KeyPart::Field {
                                word: f.word,
                                bytes,
                            });
                        }
                        FieldLoc::Valid(h) => {
                            key_bytes += 1;
                            key.push(KeyPart::ValidOf(h));
                            let _ = KeyPart::Valid;
                        }
                    },
                    "stack_field" => {
                        let e = expr::compile(kv, &scope, &ctx)?;
                        let (_, _, width) = l.stack_field(val, &ctx)?;
                        let bytes = width.div_ceil(8);
                        key_bytes += bytes;
                        key.push(KeyPart::Expr { e, bytes });
                    }
                    "lookahead" => {
                        let e = expr::compile(kv, &scope, &ctx)?;
                        let Expr::Lookahead { bit_off, width } = e else {
                            return err(&ctx, "bad lookahead");
                        };
                        if width > 64 {
                            return err(
                                &ctx,
                                "select on more than 64 lookahead bits not supported",
                            );
                        }
                        look_bits = look_bits.max(bit_off + width);
                        key_bytes += width.div_ceil(8);
                        key.push(KeyPart::Lookahead { bit_off, width });
                    }
                    t => {
                        return err(
                            &ctx,
                            format!("transition key of type \"{t}\" not supported"),
                        )
                    }
                }
            }
            if key_bytes > 16 {
                return err(&ctx, "transition key wider than 128 bits not supported");
            }
            let mut cases = Vec::new();
            let mut all = Vec::new();
            let mut default = None;
            for t in json::arr(s, "transitions", &ctx)? {
                let next = next_of(t.get("next_state"), &ids, &ctx)?;
                // p4c omits "type" and writes the default case as "value": "default"
                let ty = match json::opt_str(t, "type", &ctx)? {
                    Some(ty) => ty,
                    None if json::opt_str(t, "value", &ctx)? == Some("default") => "default",
                    None => "hexstr",
                };
                match ty {
                    "default" => {
                        if default.is_none() {
                            default = Some(next);
                        }
                    }
                    "hexstr" => {
                        let v = hex_u128(json::str_(t, "value", &ctx)?, &ctx)?;
                        let m = match json::opt_str(t, "mask", &ctx)? {
                            Some(m) => hex_u128(m, &ctx)?,
                            None => u128::MAX,
                        };
                        // cases after a default can never be taken
                        if default.is_none() {
                            cases.push((v & m, m, next));
                            all.push(Case::Const(v & m, m, next));
                        }
                    }
                    "parse_vset" => {
                        let name = json::str_(t, "value", &ctx)?;
                        let Some(&(set, width)) = names.vsets.get(name) else {
                            return err(&ctx, format!("unknown value set \"{name}\""));
                        };
                        // the key packs each field into whole bytes; a value set's values are
                        // the fields' bits back to back, the same only without padding
                        if key.len() > 1 && width != key_bytes * 8 {
                            return err(
                                &ctx,
                                "a value set on a key of several fields not all whole bytes not supported",
                            );
                        }
                        let m = match json::opt_str(t, "mask", &ctx)? {
                            Some(m) => hex_u128(m, &ctx)?,
                            None => u128::MAX,
                        };
                        if default.is_none() {
                            all.push(Case::Set(set, m, next));
                        }
                    }
                    ty => return err(&ctx, format!("transition of type \"{ty}\" not supported")),
                }
            }
            let has_sets = all.iter().any(|c| matches!(c, Case::Set(..)));
            out.push(ParseState {
                ops,
                key,
                cases,
                set_cases: has_sets.then_some(all),
                default,
                look_bits,
            });
        }
        let init = next_of(p.get("init_state"), &ids, &pctx)?;
        Ok(Parser { states: out, init })
    }

    /// Parses `pkt` into `st`. Returns the parser error code on failure (headers extracted so
    /// far stay valid, as in bmv2). Sets `st.payload_off`. TRACE: write each state's log line
    /// (the program calls `run::<true>` only while the log is on, so the other copy has no test).
    #[allow(clippy::too_many_arguments)]
    pub fn run<const TRACE: bool>(
        &self,
        pkt: &[u8],
        st: &mut PacketState,
        codecs: &[HeaderCodec],
        stacks: &[Vec<u32>],
        codes: &ErrorCodes,
        vsets: &[ValueSet],
        x: &mut Exec,
    ) -> Result<(), u32> {
        let mut cur = 0usize;
        let mut next = self.init;
        let mut steps = 0;
        let result = loop {
            let s = match next {
                Next::Accept => break Ok(()),
                Next::Reject => break Err(codes.no_match),
                Next::State(i) => {
                    if let Some(t) = x.trace.as_deref_mut().filter(|_| TRACE) {
                        t.parse_state(st.trace_id, i as usize);
                    }
                    &self.states[i as usize]
                }
            };
            steps += 1;
            if steps > MAX_STEPS {
                break Err(codes.parser_timeout);
            }
            if let Err(e) = self.run_ops(s, pkt, &mut cur, st, codecs, stacks, codes, x) {
                break Err(e);
            }
            let rest = &pkt[cur..];
            if (s.look_bits as usize).div_ceil(8) > rest.len() {
                break Err(codes.packet_too_short);
            }
            let mut k: u128 = 0;
            for part in &s.key {
                match part {
                    KeyPart::Field { word, bytes } => {
                        k = (k << (8 * bytes)) | u128::from(st.w[*word as usize]);
                    }
                    KeyPart::ValidOf(h) => k = (k << 8) | u128::from(st.valid[*h as usize]),
                    KeyPart::Valid => {}
                    KeyPart::Lookahead { bit_off, width } => {
                        let v = crate::bits::read_bits(rest, *bit_off as usize, *width);
                        k = (k << (8 * width.div_ceil(8))) | u128::from(v);
                    }
                    KeyPart::Expr { e, bytes } => {
                        let env = Env {
                            w: &st.w,
                            valid: &st.valid,
                            params: &[],
                            look: &[],
                            stack_next: &st.stack_next,
                        };
                        k = (k << (8 * bytes)) | u128::from(e.eval(&env));
                    }
                }
            }
            let found = match &s.set_cases {
                None => s.cases.iter().find(|(v, m, _)| k & m == *v).map(|c| c.2),
                Some(all) => select_with_sets(all, k, vsets),
            };
            next = match found {
                Some(n) => n,
                None => match s.default {
                    Some(d) => d,
                    None => break Err(codes.no_match),
                },
            };
        };
        st.payload_off = cur as u32;
        result
    }

    // always: with two copies of `run` the compiler would stop inlining it (+150 instructions a frame)
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn run_ops(
        &self,
        s: &ParseState,
        pkt: &[u8],
        cur: &mut usize,
        st: &mut PacketState,
        codecs: &[HeaderCodec],
        stacks: &[Vec<u32>],
        codes: &ErrorCodes,
        x: &mut Exec,
    ) -> Result<(), u32> {
        for op in &s.ops {
            match op {
                POp::Extract(h) => extract(*h, pkt, cur, st, codecs, codes)?,
                POp::ExtractMember(h, sib) => {
                    extract(*h, pkt, cur, st, codecs, codes)?;
                    for &(m, b) in sib.iter() {
                        st.set_validity(m, false, b);
                    }
                }
                POp::ExtractVl {
                    into,
                    len,
                    max_bytes,
                } => {
                    let vl = crate::varbit_ops::Extract {
                        into: *into,
                        len,
                        max_bytes: *max_bytes,
                        look_bits: s.look_bits,
                    };
                    vl.run(pkt, cur, st, codecs, stacks, codes)?;
                }
                POp::ExtractStack(sk) => {
                    let i = st.stack_next[*sk as usize] as usize;
                    let Some(h) = stacks[*sk as usize].get(i) else {
                        return Err(codes.stack_out_of_bounds);
                    };
                    extract(*h, pkt, cur, st, codecs, codes)?;
                    st.stack_next[*sk as usize] += 1;
                }
                POp::ExtractUnionStack(x) => {
                    let i = st.stack_next[x.slot as usize] as usize;
                    let Some((h, sib)) = x.members.get(i) else {
                        return Err(codes.stack_out_of_bounds);
                    };
                    extract(*h, pkt, cur, st, codecs, codes)?;
                    for &(m, b) in sib.iter() {
                        st.set_validity(m, false, b);
                    }
                    st.stack_next[x.slot as usize] += 1;
                }
                POp::Verify { cond, error } => {
                    let env = Env {
                        w: &st.w,
                        valid: &st.valid,
                        stack_next: &st.stack_next,
                        params: &[],
                        look: &pkt[*cur..],
                    };
                    if cond.eval(&env) == 0 {
                        return Err(error.eval(&env) as u32);
                    }
                }
                POp::Advance(e) => {
                    let env = Env {
                        w: &st.w,
                        valid: &st.valid,
                        stack_next: &st.stack_next,
                        params: &[],
                        look: &[],
                    };
                    let bits = e.eval(&env);
                    if bits % 8 != 0 {
                        return Err(codes.invalid_argument);
                    }
                    let bytes = usize::try_from(bits / 8).unwrap_or(usize::MAX);
                    if pkt.len() - *cur < bytes {
                        return Err(codes.packet_too_short);
                    }
                    *cur += bytes;
                }
                POp::Prim(op) => {
                    if s.look_bits as usize > (pkt.len() - *cur) * 8 {
                        return Err(codes.packet_too_short);
                    }
                    action::run(std::slice::from_ref(op), &[], &pkt[*cur..], st, x);
                }
            }
        }
        Ok(())
    }
}

#[inline]
fn extract(
    h: u32,
    pkt: &[u8],
    cur: &mut usize,
    st: &mut PacketState,
    codecs: &[HeaderCodec],
    codes: &ErrorCodes,
) -> Result<(), u32> {
    let c = &codecs[h as usize];
    let n = c.bytes as usize;
    if pkt.len() - *cur < n {
        return Err(codes.packet_too_short);
    }
    c.extract(&pkt[*cur..*cur + n], &mut st.w);
    st.valid[h as usize] = true;
    *cur += n;
    Ok(())
}

#[cfg(test)]
mod tests;

//! The ops made for headers that end in a varbit field (crate::varbit): `extract_VL` into a
//! header or a stack's next element, and `add_header` / `remove_header`, which move the packet's
//! length by the header's current size.

use crate::codec::HeaderCodec;
use crate::expr::{Env, Expr, Scope};
use crate::json::{self, err, R};
use crate::layout::Layout;
use crate::parse_errors::ErrorCodes;
use crate::state::PacketState;
use serde_json::Value;

/// Loads an `extract_VL` op: `[{"type": "regular" or "stack", "value": NAME}, {"type":
/// "expression", ...}]`, the header (or the stack's next element) ending in a varbit field;
/// returns where it goes, the length expression and the header's maximum bytes.
pub(crate) fn load_extract(
    hdr: &Value,
    len: &Value,
    scope: &Scope,
    ctx: &str,
) -> R<(VlTarget, Expr, u32)> {
    let l = scope.layout;
    let v = json::as_str(json::get(hdr, "value", ctx)?, ctx)?;
    let (into, h) = match json::str_(hdr, "type", ctx)? {
        "regular" => {
            let h = l.wire_header(v, ctx)?;
            if crate::union::siblings(l, h).is_some() {
                return err(ctx, "extract_VL of a header union member not supported");
            }
            (VlTarget::Header(h), h)
        }
        "stack" => match l.stack_by_name.get(v) {
            Some(&s) => (VlTarget::Stack(s), l.stacks[s as usize].headers[0]),
            None => return err(ctx, format!("unknown header stack \"{v}\"")),
        },
        t => return err(ctx, format!("extract_VL into \"{t}\" not supported")),
    };
    let info = &l.headers[h as usize];
    let Some(var) = info.varbit else {
        return err(ctx, format!("\"{v}\" has no varbit field"));
    };
    Ok((
        into,
        crate::expr::compile(len, scope, ctx)?,
        (info.bits + var.max_bits) / 8,
    ))
}

/// `add_header` / `remove_header` of a wire header ending in a varbit field: as in bmv2, the
/// packet's length moves by the header's current size (fixed bytes plus the varbit's).
#[derive(Debug, Clone, Copy)]
pub struct Validity {
    h: u32,
    fixed_bytes: u32,
    len_word: u32,
    valid: bool,
}

impl Validity {
    /// The op for header `h`, if it is a packet header with a varbit and in no union.
    pub fn of(l: &Layout, h: u32, valid: bool) -> Option<Validity> {
        let info = &l.headers[h as usize];
        let v = info.varbit.filter(|_| !info.metadata)?;
        if crate::union::siblings(l, h).is_some() {
            return None;
        }
        Some(Validity {
            h,
            fixed_bytes: info.bits / 8,
            len_word: v.len_word,
            valid,
        })
    }

    #[cold]
    #[inline(never)]
    pub fn apply(&self, st: &mut PacketState) {
        let bytes = self.fixed_bytes + st.w[self.len_word as usize] as u32 / 8;
        st.set_validity(self.h, self.valid, bytes as i32);
    }
}

/// bmv2's `extract_VL` of a header (or a stack's next element: StackOutOfBounds when there is
/// none, checked first): `len` (evaluated first; it may look ahead at the
/// header's own bits, `look_bits` of them) gives the varbit's length. It must be whole bytes
/// (else ParserInvalidArgument), the packet must hold the header (else PacketTooShort) and the
/// header must fit its `max_length` (else HeaderTooShort), checked in that order as bmv2 does.
pub(crate) struct Extract<'a> {
    pub into: VlTarget,
    pub len: &'a Expr,
    pub max_bytes: u32,
    pub look_bits: u32,
}

impl Extract<'_> {
    #[cold]
    #[inline(never)]
    pub(crate) fn run(
        &self,
        pkt: &[u8],
        cur: &mut usize,
        st: &mut PacketState,
        codecs: &[HeaderCodec],
        stacks: &[Vec<u32>],
        codes: &ErrorCodes,
    ) -> Result<(), u32> {
        let h = match self.into {
            VlTarget::Header(h) => h,
            VlTarget::Stack(s) => {
                let next = st.stack_next[s as usize] as usize;
                match stacks[s as usize].get(next) {
                    Some(h) => *h,
                    None => return Err(codes.stack_out_of_bounds),
                }
            }
        };
        if self.look_bits as usize > (pkt.len() - *cur) * 8 {
            return Err(codes.packet_too_short);
        }
        let env = Env {
            w: &st.w,
            valid: &st.valid,
            stack_next: &st.stack_next,
            params: &[],
            look: &pkt[*cur..],
        };
        let nbits = self.len.eval(&env);
        extract(h, nbits, self.max_bytes, pkt, cur, st, codecs, codes)?;
        if let VlTarget::Stack(s) = self.into {
            st.stack_next[s as usize] += 1;
        }
        Ok(())
    }
}

/// Where an `extract_VL` puts the header: a header, or the next element of a stack.
#[derive(Debug, Clone, Copy)]
pub enum VlTarget {
    Header(u32),
    Stack(u32),
}

#[allow(clippy::too_many_arguments)]
fn extract(
    h: u32,
    nbits: u64,
    max_bytes: u32,
    pkt: &[u8],
    cur: &mut usize,
    st: &mut PacketState,
    codecs: &[HeaderCodec],
    codes: &ErrorCodes,
) -> Result<(), u32> {
    let c = &codecs[h as usize];
    let Some(v) = c.varbit else {
        return Err(codes.invalid_argument);
    };
    if !nbits.is_multiple_of(8) {
        return Err(codes.invalid_argument);
    }
    let fixed = c.bytes as usize;
    let total = usize::try_from(nbits / 8)
        .ok()
        .and_then(|n| n.checked_add(fixed))
        .unwrap_or(usize::MAX);
    if pkt.len() - *cur < total {
        return Err(codes.packet_too_short);
    }
    if total > max_bytes as usize {
        return Err(codes.header_too_short);
    }
    c.extract(&pkt[*cur..*cur + fixed], &mut st.w);
    v.set(&pkt[*cur + fixed..*cur + total], &mut st.w);
    st.valid[h as usize] = true;
    *cur += total;
    Ok(())
}

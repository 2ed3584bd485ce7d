//! Reading and writing a member of a struct-typed header field (`hdr.h.row.e`): the flattened
//! field the header was laid out with (crate::env::header_structs).

use crate::ast::Expr;
use crate::env::header_structs::flattens;
use crate::lower::expr::Ref;
use crate::lower::{Lowerer, Scope};

impl Lowerer<'_> {
    /// `base.m` where `base` is `hdr.x.row` and `row` a struct-typed field of header `hdr.x`:
    /// the flattened field; None for anything else.
    pub(crate) fn header_struct_member(&self, sc: &Scope, base: &Expr, m: &str) -> Option<Ref> {
        let Expr::Member(hdr, sf, _) = base else {
            return None;
        };
        let Ok(Ref::Header { inst, htype }) = self.resolve(sc, hdr) else {
            return None;
        };
        let fs = self.env.header_fields(&htype);
        if fs.iter().any(|f| f.name == *sf) {
            return None;
        }
        let f = fs.iter().find(|f| flattens(&f.name, sf, m))?;
        Some(Ref::Field {
            h: inst,
            f: f.name.clone(),
            ty: f.ty.clone(),
        })
    }
}

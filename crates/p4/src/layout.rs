//! Header types, header instances and stacks resolved to slots in the per-packet word arena.

mod unions;

pub use unions::{UnionInfo, UnionStackInfo};

use crate::bits::words_for;
use crate::json::{self, err, label, R};
use serde_json::Value;
use std::collections::HashMap;

/// A field resolved at load time: where its value lives in [`crate::PacketState`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldRef {
    /// First (most significant) word in the arena.
    pub word: u32,
    pub width: u32,
    pub header: u32,
}

impl FieldRef {
    pub fn words(&self) -> u32 {
        words_for(self.width)
    }
    pub fn is_wide(&self) -> bool {
        self.width > 64
    }
}

#[derive(Debug, Clone)]
pub struct FieldInfo {
    pub name: String,
    pub width: u32,
    pub word: u32,
    /// Bit offset of the field inside the header's wire format.
    pub bit_off: u32,
    /// An `int<W>`: its bits are a two's complement value, read sign-extended.
    pub signed: bool,
    /// A `varbit<W>` field (`width` is its maximum); its current length is in
    /// [`HeaderInfo::varbit`]'s `len_word`.
    pub varbit: bool,
}

#[derive(Debug, Clone)]
pub struct HeaderInfo {
    pub name: String,
    pub type_name: String,
    pub metadata: bool,
    pub fields: Vec<FieldInfo>,
    /// Wire size in bits (of the fixed-width fields only when the header has a varbit).
    pub bits: u32,
    /// The header's variable-length field, if it has one.
    pub varbit: Option<crate::varbit::VarRef>,
}

impl HeaderInfo {
    /// The header's words in the arena: the first and how many (fields, then a varbit's
    /// length word), so a header copy moves all of it.
    pub fn span(&self) -> (u32, u32) {
        let first = self.fields.first().map_or(0, |f| f.word);
        let fields: u32 = self.fields.iter().map(|f| words_for(f.width)).sum();
        (first, fields + u32::from(self.varbit.is_some()))
    }
}

#[derive(Debug, Clone)]
pub struct StackInfo {
    pub headers: Vec<u32>,
}

/// A resolved field reference, including the implicit `$valid$` bit.
#[derive(Debug, Clone, Copy)]
pub enum FieldLoc {
    Field(FieldRef),
    Valid(u32),
}

#[derive(Debug, Clone, Default)]
pub struct Layout {
    pub headers: Vec<HeaderInfo>,
    pub by_name: HashMap<String, u32>,
    pub stacks: Vec<StackInfo>,
    pub stack_by_name: HashMap<String, u32>,
    pub total_words: u32,
    /// Header index by bmv2 header id.
    pub by_id: HashMap<u64, u32>,
    pub unions: Vec<UnionInfo>,
    pub union_by_name: HashMap<String, u32>,
    /// The union each header belongs to, by header index.
    pub union_of: Vec<Option<u32>>,
    pub union_stacks: Vec<UnionStackInfo>,
    pub union_stack_by_name: HashMap<String, u32>,
}

/// A field of a header type: name, width (a varbit's maximum), signedness, varbit.
struct TypeField {
    name: String,
    width: u32,
    signed: bool,
    varbit: bool,
}

/// The fields of one `header_types` entry. A varbit field (width `"*"`) takes its maximum
/// from the type's `max_length` (bytes of the whole header, as p4c writes it); it must be the
/// last field, as in every header p4c's front end accepts for bmv2 we know of.
fn type_fields(t: &Value, ctx: &str) -> R<Vec<TypeField>> {
    let mut fields: Vec<TypeField> = Vec::new();
    let mut varbit_name = None;
    for f in json::arr(t, "fields", ctx)? {
        let parts = f.as_array().map(Vec::as_slice).unwrap_or(&[]);
        let fname = parts.first().and_then(Value::as_str);
        let Some(fname) = fname else {
            return err(ctx, "field must be [name, bitwidth, signed]");
        };
        if let Some(v) = varbit_name {
            return err(
                ctx,
                format!("field \"{fname}\" after varbit field \"{v}\" not supported"),
            );
        }
        let width = match parts.get(1) {
            Some(Value::Number(n)) => n.as_u64().unwrap_or(0),
            Some(Value::String(s)) if s == "*" => {
                varbit_name = Some(fname);
                let fixed: u64 = fields.iter().map(|f| u64::from(f.width)).sum();
                if json::opt(t, "max_length").is_none() {
                    return err(
                        ctx,
                        format!("varbit field \"{fname}\" needs the type's \"max_length\""),
                    );
                }
                let max = json::u64_(t, "max_length", ctx)?.saturating_mul(8);
                if max <= fixed {
                    return err(
                        ctx,
                        format!("varbit field \"{fname}\": max_length leaves it no bits"),
                    );
                }
                max - fixed
            }
            _ => return err(ctx, format!("field \"{fname}\" has no bitwidth")),
        };
        if width == 0 || width > 4096 {
            return err(ctx, format!("field \"{fname}\" has bad bitwidth {width}"));
        }
        let signed = parts.get(2).and_then(Value::as_bool) == Some(true);
        if signed && !(2..=128).contains(&width) {
            // bmv2 needs 2 bits at least; expressions compute on 128
            return err(
                ctx,
                format!("signed field \"{fname}\" of {width} bits not supported (2 to 128)"),
            );
        }
        fields.push(TypeField {
            name: fname.to_string(),
            width: width as u32,
            signed,
            varbit: varbit_name.is_some(),
        });
    }
    Ok(fields)
}

impl Layout {
    pub fn load(root: &Value) -> R<Layout> {
        let mut types: HashMap<String, Vec<TypeField>> = HashMap::new();
        for (i, t) in json::arr(root, "header_types", "top level")?
            .iter()
            .enumerate()
        {
            let ctx = label("header_types", i, t);
            let name = json::str_(t, "name", &ctx)?;
            types.insert(name.to_string(), type_fields(t, &ctx)?);
        }
        let mut l = Layout::default();
        for (i, h) in json::arr(root, "headers", "top level")?.iter().enumerate() {
            let ctx = label("headers", i, h);
            let name = json::str_(h, "name", &ctx)?;
            let tname = json::str_(h, "header_type", &ctx)?;
            let metadata = json::bool_or(h, "metadata", false, &ctx)?;
            let Some(tf) = types.get(tname) else {
                return err(&ctx, format!("unknown header_type \"{tname}\""));
            };
            let mut fields = Vec::with_capacity(tf.len());
            let mut bit = 0u32;
            let mut varbit = None;
            for f in tf {
                let word = l.total_words;
                l.total_words += words_for(f.width);
                if f.varbit {
                    // the current length (bits) lives in the word after the value's
                    varbit = Some(crate::varbit::VarRef {
                        word,
                        words: words_for(f.width),
                        len_word: l.total_words,
                        max_bits: f.width,
                    });
                    l.total_words += 1;
                }
                fields.push(FieldInfo {
                    name: f.name.clone(),
                    width: f.width,
                    word,
                    bit_off: bit,
                    signed: f.signed,
                    varbit: f.varbit,
                });
                if !f.varbit {
                    bit = bit.saturating_add(f.width);
                }
            }
            if !metadata && !bit.is_multiple_of(8) {
                return err(
                    &ctx,
                    format!("header is {bit} bits, not a whole number of bytes"),
                );
            }
            if l.total_words > 1 << 20 {
                return err(&ctx, "too many fields");
            }
            let idx = l.headers.len() as u32;
            if l.by_name.insert(name.to_string(), idx).is_some() {
                return err(&ctx, "duplicate header name");
            }
            if let Some(id) = h.get("id").and_then(Value::as_u64) {
                l.by_id.insert(id, idx);
            }
            l.headers.push(HeaderInfo {
                name: name.to_string(),
                type_name: tname.to_string(),
                metadata,
                fields,
                bits: bit,
                varbit,
            });
        }
        for (i, s) in json::arr_or_empty(root, "header_stacks", "top level")?
            .iter()
            .enumerate()
        {
            let ctx = label("header_stacks", i, s);
            let name = json::str_(s, "name", &ctx)?;
            let mut headers = Vec::new();
            for id in json::arr(s, "header_ids", &ctx)? {
                let id = json::as_u64(id, &ctx)?;
                match l.by_id.get(&id) {
                    Some(h) if l.headers[*h as usize].metadata => {
                        return err(
                            &ctx,
                            format!("header id {id} is metadata, not a packet header"),
                        )
                    }
                    Some(h) => headers.push(*h),
                    None => return err(&ctx, format!("unknown header id {id}")),
                }
            }
            if headers.len() > 255 {
                return err(&ctx, "stack too large");
            }
            l.stack_by_name
                .insert(name.to_string(), l.stacks.len() as u32);
            l.stacks.push(StackInfo { headers });
        }
        unions::load(root, &mut l)?;
        Ok(l)
    }

    pub fn header(&self, name: &str, ctx: &str) -> R<u32> {
        match self.by_name.get(name) {
            Some(h) => Ok(*h),
            None => err(ctx, format!("unknown header \"{name}\"")),
        }
    }

    /// A header that lives on the wire: metadata cannot be extracted (it need not be whole bytes).
    pub fn wire_header(&self, name: &str, ctx: &str) -> R<u32> {
        let h = self.header(name, ctx)?;
        if self.headers[h as usize].metadata {
            return err(ctx, format!("\"{name}\" is metadata, not a packet header"));
        }
        Ok(h)
    }

    pub fn field_opt(&self, h: &str, f: &str) -> Option<FieldRef> {
        let hi = *self.by_name.get(h)?;
        let fi = self.headers[hi as usize]
            .fields
            .iter()
            .find(|x| x.name == f)?;
        Some(FieldRef {
            word: fi.word,
            width: fi.width,
            header: hi,
        })
    }

    /// The varbit field `f` is, if it is one.
    pub fn varbit_of(&self, f: FieldRef) -> Option<crate::varbit::VarRef> {
        let v = self.headers.get(f.header as usize)?.varbit?;
        (v.word == f.word).then_some(v)
    }

    /// Whether a resolved field is an `int<W>` (decided here, at load time, once).
    pub fn is_signed(&self, f: FieldRef) -> bool {
        self.headers
            .get(f.header as usize)
            .and_then(|h| h.fields.iter().find(|x| x.word == f.word))
            .is_some_and(|x| x.signed)
    }

    /// Resolves `["hdr", "field"]` (the JSON `field` value), including `$valid$`.
    pub fn resolve(&self, v: &Value, ctx: &str) -> R<FieldLoc> {
        let parts = v.as_array().map(Vec::as_slice).unwrap_or(&[]);
        let (Some(h), Some(f)) = (
            parts.first().and_then(Value::as_str),
            parts.get(1).and_then(Value::as_str),
        ) else {
            return err(ctx, "field reference must be [header, field]");
        };
        let hi = self.header(h, ctx)?;
        if f == "$valid$" {
            return Ok(FieldLoc::Valid(hi));
        }
        match self.field_opt(h, f) {
            Some(r) => Ok(FieldLoc::Field(r)),
            None => err(ctx, format!("unknown field \"{h}.{f}\"")),
        }
    }

    /// Resolves a `stack_field` value `[stack, field]`: the stack, the field's first word in
    /// every element (in order) and the field's width.
    pub fn stack_field(&self, v: &Value, ctx: &str) -> R<(u32, Box<[u32]>, u32)> {
        let parts = v.as_array().map(Vec::as_slice).unwrap_or(&[]);
        let (Some(s), Some(f)) = (
            parts.first().and_then(Value::as_str),
            parts.get(1).and_then(Value::as_str),
        ) else {
            return err(ctx, "stack field reference must be [stack, field]");
        };
        let Some(&si) = self.stack_by_name.get(s) else {
            return err(ctx, format!("unknown header stack \"{s}\""));
        };
        let mut words = Vec::new();
        let mut width = 0;
        for h in &self.stacks[si as usize].headers {
            match self.field_opt(&self.headers[*h as usize].name, f) {
                Some(r) => {
                    words.push(r.word);
                    width = r.width;
                }
                None => return err(ctx, format!("unknown field \"{s}.{f}\"")),
            }
        }
        if words.is_empty() {
            return err(ctx, format!("header stack \"{s}\" is empty"));
        }
        Ok((si, words.into_boxed_slice(), width))
    }

    /// Like [`resolve`](Self::resolve) but refuses `$valid$` (for assignment targets).
    pub fn resolve_field(&self, v: &Value, ctx: &str) -> R<FieldRef> {
        match self.resolve(v, ctx)? {
            FieldLoc::Field(f) => Ok(f),
            FieldLoc::Valid(_) => err(ctx, "writing $valid$ directly not supported"),
        }
    }
}

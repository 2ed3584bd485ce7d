//! The pieces P4Info's text is made of: names and aliases, preambles, annotations, ids fixed by
//! `@id`, type names of serializable enums, action parameter widths.

use crate::ast::{annotation, Annotation};
use crate::diag::{fail, Res};
use crate::env::Env;
use crate::lower::Lowerer;
use serde_json::Value;
use std::fmt::Write;

/// The alias p4c gives a name: its last component (the full name if that is ambiguous).
pub(super) fn alias(name: &str, all: &[String]) -> String {
    let last = name.rsplit('.').next().unwrap_or(name);
    let clashes = all
        .iter()
        .filter(|n| n.rsplit('.').next() == Some(last))
        .count();
    if clashes > 1 {
        name.to_string()
    } else {
        last.to_string()
    }
}

pub(super) fn fixed_id(anns: &[Annotation]) -> Res<Option<u32>> {
    match annotation(anns, "id") {
        None => Ok(None),
        Some(a) => {
            let b = a.body.trim();
            let v = if let Some(h) = b.strip_prefix("0x") {
                u32::from_str_radix(h, 16)
            } else {
                b.parse()
            };
            match v {
                Ok(v) => Ok(Some(v)),
                Err(_) => fail(a.loc, format!("@id needs an integer, found '{b}'")),
            }
        }
    }
}

/// Annotations P4Info lists (p4c leaves out the ones it interprets itself).
pub(super) fn shown(anns: &[Annotation]) -> Vec<String> {
    anns.iter()
        .filter(|a| {
            !matches!(
                a.name.as_str(),
                "name" | "id" | "hidden" | "defaultonly" | "tableonly" | "brief" | "description"
            )
        })
        .map(|a| {
            if a.body.is_empty() {
                format!("@{}", a.name)
            } else {
                format!("@{}({})", a.name, a.body)
            }
        })
        .collect()
}

pub(super) fn quote(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

pub(super) fn preamble(out: &mut String, id: u32, name: &str, all: &[String], anns: &[String]) {
    let _ = writeln!(
        out,
        "  preamble {{\n    id: {id}\n    name: {}\n    alias: {}",
        quote(name),
        quote(&alias(name, all))
    );
    for a in anns {
        let _ = writeln!(out, "    annotations: {}", quote(a));
    }
    out.push_str("  }\n");
}

pub(super) struct Extern {
    pub(super) name: String,
    pub(super) kind: &'static str,
    pub(super) json: Value,
}

/// The width P4Runtime uses for a value of new type `tn` (its translation's, if any).
pub(super) fn sdn_width(env: &Env, tn: &Option<String>, w: u32) -> u32 {
    tn.as_ref()
        .and_then(|n| env.new_types.get(n))
        .and_then(|t| t.translation.as_ref())
        .map_or(w, |t| t.1)
}

pub(super) fn type_name(out: &mut String, tn: &Option<String>, used: &mut Vec<String>) {
    if let Some(n) = tn {
        let _ = write!(out, "    type_name {{\n      name: {}\n    }}\n", quote(n));
        used.push(n.clone());
    }
}

/// A serializable enum in `type_info`: its width and each member's value in that many bytes,
/// in declaration order as p4c lists them.
pub(super) fn serializable_enum(name: &str, e: &crate::env::EnumInfo) -> String {
    let w = e.width.unwrap_or(0);
    let mut s = format!("  serializable_enums {{\n    key: {}\n    value {{\n      underlying_type {{\n        bitwidth: {w}\n      }}\n", quote(name));
    for (m, v) in &e.members {
        let value = octets(&format!("{v:x}"), w);
        let _ = write!(
            s,
            "      members {{\n        name: {}\n        value: {value}\n      }}\n",
            quote(m)
        );
    }
    s.push_str("    }\n  }\n");
    s
}

/// The control-plane parameters of an action only called directly, as bmv2 runtime_data: the
/// directionless ones (in/out/inout parameters are bound by the call).
pub(super) fn called_params(env: &Env, d: &crate::ast::ActionDecl) -> Value {
    let params: Vec<Value> = d
        .params
        .iter()
        .filter(|p| matches!(p.dir, crate::ast::Dir::None))
        .map(|p| {
            let w = env.resolve(&p.ty).ok().and_then(|t| t.width()).unwrap_or(0);
            serde_json::json!({"name": p.name, "bitwidth": w})
        })
        .collect();
    Value::Array(params)
}

/// The bit width of parameter `i` of action `a` (from its bmv2 runtime_data).
pub(super) fn param_width(l: &Lowerer, a: &str, i: usize) -> u32 {
    l.action_id(a)
        .and_then(|id| l.actions.get(id as usize))
        .and_then(|j| j["runtime_data"][i]["bitwidth"].as_u64())
        .unwrap_or(1) as u32
}

/// A hex value as P4Runtime bytes of the width's whole octets, in text format's escaped string
/// (p4c writes default-action arguments full width: `"\000\000\000\n"` for bit<32> 10).
pub(super) fn octets(hex: &str, width: u32) -> String {
    let n = width.div_ceil(8).max(1) as usize;
    let digits = hex.trim_start_matches("0x");
    // any width: the digits, padded (or cut) to two per octet
    let padded = format!("{digits:0>w$}", w = 2 * n);
    let padded = &padded[padded.len() - 2 * n..];
    let mut o = String::from("\"");
    for k in 0..n {
        let b = u8::from_str_radix(&padded[2 * k..2 * k + 2], 16).unwrap_or(0);
        match b {
            b'"' => o.push_str("\\\""),
            b'\\' => o.push_str("\\\\"),
            b'\n' => o.push_str("\\n"),
            b'\r' => o.push_str("\\r"),
            b'\t' => o.push_str("\\t"),
            b'\'' => o.push_str("\\'"),
            0x20..=0x7e => o.push(b as char),
            _ => {
                let _ = write!(o, "\\{b:03o}");
            }
        }
    }
    o.push('"');
    o
}

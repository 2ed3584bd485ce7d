//! Parser value sets (`value_set<T>(N)` in P4, `parse_vsets` in bmv2 JSON): a select case that
//! matches any value the control plane put in the set (simple_switch_CLI's `pvs_*`, P4Runtime's
//! ValueSetEntry).

use crate::error::ApiError;
use crate::json::{self, err, label, R};
use serde_json::Value;
use std::collections::HashMap;

#[derive(Debug, Clone)]
pub struct ValueSet {
    pub name: String,
    /// Width of a value: the select key's (bmv2's `compressed_bitwidth`).
    pub width: u32,
    pub max_size: u64,
    /// (value, mask) members; a value added without a mask has every bit set in its mask.
    pub members: Vec<(u128, u128)>,
}

impl ValueSet {
    /// Whether the masked select key is a member.
    #[inline]
    pub fn contains(&self, key: u128) -> bool {
        self.members.iter().any(|(v, m)| key & m == *v)
    }

    fn full(&self) -> u128 {
        if self.width >= 128 {
            u128::MAX
        } else {
            (1u128 << self.width) - 1
        }
    }

    fn value(&self, bytes: &[u8], what: &str) -> Result<u128, ApiError> {
        let v = bytes
            .iter()
            .try_fold(0u128, |a, b| a.checked_mul(256).map(|a| a | u128::from(*b)));
        match v {
            Some(v) if v & !self.full() == 0 => Ok(v),
            _ => Err(ApiError::Invalid(format!(
                "value set {}: {what} does not fit in {} bits",
                self.name, self.width
            ))),
        }
    }

    /// Adds a member (mask None: every bit); adding one already there is no change.
    pub fn add(&mut self, value: &[u8], mask: Option<&[u8]>) -> Result<(), ApiError> {
        let m = match mask {
            Some(m) => self.value(m, "mask")?,
            None => self.full(),
        };
        let v = self.value(value, "value")? & m;
        if self.members.contains(&(v, m)) {
            return Ok(());
        }
        if self.max_size > 0 && self.members.len() as u64 >= self.max_size {
            return Err(ApiError::TableFull(format!(
                "value set {} (max {} values)",
                self.name, self.max_size
            )));
        }
        self.members.push((v, m));
        Ok(())
    }

    pub fn remove(&mut self, value: &[u8], mask: Option<&[u8]>) -> Result<(), ApiError> {
        let m = match mask {
            Some(m) => self.value(m, "mask")?,
            None => self.full(),
        };
        let v = self.value(value, "value")? & m;
        let before = self.members.len();
        self.members.retain(|x| *x != (v, m));
        if self.members.len() == before {
            return Err(ApiError::NotFound(format!(
                "value set {} has no such value",
                self.name
            )));
        }
        Ok(())
    }
}

/// Value set name -> (index, width), for the parser's loader.
pub type ValueSetNames = HashMap<String, (u32, u32)>;

/// The JSON `parse_vsets` and their names.
pub fn load(root: &Value) -> R<(Vec<ValueSet>, ValueSetNames)> {
    let mut out = Vec::new();
    let mut by_name = HashMap::new();
    for (i, v) in json::arr_or_empty(root, "parse_vsets", "top level")?
        .iter()
        .enumerate()
    {
        let ctx = label("parse_vsets", i, v);
        let name = json::str_(v, "name", &ctx)?.to_string();
        let width = json::u64_(v, "compressed_bitwidth", &ctx)?;
        if width == 0 || width > 128 {
            return err(&ctx, format!("a value set of {width} bits not supported"));
        }
        if by_name
            .insert(name.clone(), (out.len() as u32, width as u32))
            .is_some()
        {
            return err(&ctx, "duplicate value set name");
        }
        out.push(ValueSet {
            name,
            width: width as u32,
            max_size: json::opt(v, "max_size")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            members: Vec::new(),
        });
    }
    Ok((out, by_name))
}

//! Runtime control API of parser value sets: add, remove, list and clear values (what
//! simple_switch_CLI's `pvs_*` and P4Runtime's ValueSetEntry call).

use crate::error::ApiError;
use crate::program::Program;
use crate::vset::ValueSet;

/// A value set member: (value, mask), big-endian.
pub type ValueSetMember = (Vec<u8>, Vec<u8>);

impl Program {
    /// Value set names, in JSON order.
    pub fn value_set_names(&self) -> Vec<&str> {
        self.vsets.iter().map(|v| v.name.as_str()).collect()
    }

    /// (width, max_size) of a value set, by full name or unique suffix.
    pub fn value_set_info(&self, name: &str) -> Result<(u32, u64), ApiError> {
        let v = &self.vsets[self.vset_index(name)?];
        Ok((v.width, v.max_size))
    }

    fn vset_index(&self, name: &str) -> Result<usize, ApiError> {
        crate::names::resolve(self.vsets.iter().map(|v| v.name.as_str()), name)
            .ok_or_else(|| ApiError::NotFound(format!("no value set named '{name}'")))
    }

    fn vset_mut(&mut self, name: &str) -> Result<&mut ValueSet, ApiError> {
        let i = self.vset_index(name)?;
        Ok(&mut self.vsets[i])
    }

    /// Adds a value (big-endian bytes; mask None: every bit matters).
    pub fn value_set_add(
        &mut self,
        name: &str,
        value: &[u8],
        mask: Option<&[u8]>,
    ) -> Result<(), ApiError> {
        self.vset_mut(name)?.add(value, mask)
    }

    pub fn value_set_remove(
        &mut self,
        name: &str,
        value: &[u8],
        mask: Option<&[u8]>,
    ) -> Result<(), ApiError> {
        self.vset_mut(name)?.remove(value, mask)
    }

    /// The members as (value, mask), big-endian in ceil(width / 8) bytes each.
    pub fn value_set_members(&self, name: &str) -> Result<Vec<ValueSetMember>, ApiError> {
        let v = &self.vsets[self.vset_index(name)?];
        let n = v.width.div_ceil(8) as usize;
        let bytes = |x: u128| x.to_be_bytes()[16 - n..].to_vec();
        Ok(v.members
            .iter()
            .map(|(a, m)| (bytes(*a), bytes(*m)))
            .collect())
    }

    pub fn value_set_clear(&mut self, name: &str) -> Result<(), ApiError> {
        self.vset_mut(name)?.members.clear();
        Ok(())
    }
}

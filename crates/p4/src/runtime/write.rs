//! One table write as every route into the tables states it: what it does, to which entry
//! (named by its match key, checked under the route's `KeyRules`), with what action or
//! profile member or group, direct counter and meter values, and the entry's idle timeout,
//! all applied under one hold of the program, so the data plane sees the entry whole.

use super::key_rules::{assemble, check_canonical, check_priority, FieldMatch, KeyRules};
use super::{EntryHandle, EntryView, TableId};
use crate::error::ApiError;
use crate::externs::{CounterValue, MeterRates};
use crate::profile::ProfileRef;
use crate::program::Program;
use crate::table::MatchKey;

use super::ActionId;

/// What a table write does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    Insert,
    /// New action (or member, group), counter or meter for the entry with the key.
    Modify,
    Delete,
    /// The action run on a miss (or, in an indirect table, the member or group).
    SetDefault,
    /// Only the direct counter of the entry with the key.
    DirectCounter,
    /// Only the direct meter of the entry with the key (`meter` None: unconfigured again).
    DirectMeter,
}

/// One table write.
#[derive(Debug, Clone, PartialEq)]
pub struct TableWrite {
    pub kind: WriteKind,
    pub table: TableId,
    /// The entry's match key as given; fields left out are wildcards under P4Runtime's rules.
    pub keys: Vec<FieldMatch>,
    pub rules: KeyRules,
    /// Higher wins (ternary, range and optional tables).
    pub priority: i32,
    /// The action and its parameters (big-endian bytes); None with no `target` in a
    /// `SetDefault` of an indirect table returns it to the program's default.
    pub action: Option<(ActionId, Vec<Vec<u8>>)>,
    /// In an indirect table: the member or group the entry runs instead of an action.
    pub target: Option<ProfileRef>,
    pub counter: Option<CounterValue>,
    pub meter: Option<MeterRates>,
    /// The entry's idle timeout after an insert or modify: None leaves it as it is, Some(0)
    /// means the entry never ages, Some(ns) that it ages after ns without a hit.
    pub idle_timeout_ns: Option<u64>,
    /// The controller's metadata after an insert or modify: None leaves it as it is (a modify
    /// over Thrift), Some(empty) clears it.
    pub metadata: Option<Vec<u8>>,
}

impl TableWrite {
    /// A write of `kind` to `table` with nothing else set (P4Runtime's key rules).
    pub fn new(kind: WriteKind, table: TableId) -> TableWrite {
        TableWrite {
            kind,
            table,
            keys: Vec::new(),
            rules: KeyRules::P4Runtime,
            priority: 0,
            action: None,
            target: None,
            counter: None,
            meter: None,
            idle_timeout_ns: None,
            metadata: None,
        }
    }
}

impl Program {
    /// Applies one table write; the entry's handle (None for a default action). `now` is the
    /// data plane's clock (ns), where an idle timeout starts. Nothing changes if the key, the
    /// priority or the idle timeout is refused.
    pub fn apply_write(
        &mut self,
        w: &TableWrite,
        now: u64,
    ) -> Result<Option<EntryHandle>, ApiError> {
        let t = w.table;
        let table = self.table(t)?;
        if w.idle_timeout_ns.is_some() && !table.support_timeout {
            return Err(ApiError::AgeingDisabled(table.name.clone()));
        }
        // P4Runtime refuses every entry write to a const table, whatever its key names; bmv2's
        // routes reach the same refusal once the key has named an entry
        let entry_write = matches!(
            w.kind,
            WriteKind::Insert | WriteKind::Modify | WriteKind::Delete
        );
        if w.rules == KeyRules::P4Runtime && entry_write && table.is_const {
            return Err(ApiError::ConstTable(table.name.clone()));
        }
        // a table without a direct counter or meter refuses them before the key is looked up
        if w.kind == WriteKind::DirectCounter || w.counter.is_some() {
            self.with_direct_counter(t)?;
        }
        if w.kind == WriteKind::DirectMeter || w.meter.is_some() {
            self.with_direct_meter(t)?;
        }
        if let Some(r) = &w.meter {
            r.check()?;
        }
        if w.kind == WriteKind::SetDefault {
            if w.rules == KeyRules::P4Runtime && (!w.keys.is_empty() || w.priority != 0) {
                return Err(ApiError::Invalid(format!(
                    "table {}: the default entry has no match and no priority",
                    table.name
                )));
            }
            return self.write_default(w).map(|()| None);
        }
        let keys = assemble(table, &w.keys, w.rules)?;
        if w.rules == KeyRules::P4Runtime {
            check_priority(table, w.priority)?;
        }
        let h = match w.kind {
            WriteKind::Insert => match w.target {
                Some(r) => self.add_indirect_entry(t, keys, r, w.priority)?,
                None => {
                    let (a, params) = action_of(w)?;
                    self.add_entry(t, keys, a, params, w.priority)?
                }
            },
            _ => {
                let h = self.find_entry(t, &keys, w.priority)?;
                match (w.kind, w.target) {
                    (WriteKind::Modify, Some(r)) => self.modify_indirect_entry(t, h, r)?,
                    (WriteKind::Modify, None) => {
                        let (a, params) = action_of(w)?;
                        self.modify_entry(t, h, a, params)?
                    }
                    (WriteKind::Delete, _) => {
                        self.delete_entry(t, h)?;
                        return Ok(Some(h));
                    }
                    (WriteKind::DirectMeter, _) => match w.meter {
                        Some(r) => self.direct_meter_set(t, h, r)?,
                        None => self.direct_meter_reset(t, h)?,
                    },
                    (WriteKind::DirectCounter, _) => {
                        let c = w.counter.unwrap_or_default();
                        self.direct_counter_write(t, h, c)?;
                    }
                    _ => {}
                }
                h
            }
        };
        if matches!(w.kind, WriteKind::Insert | WriteKind::Modify) {
            if let Some(c) = w.counter {
                self.direct_counter_write(t, h, c)?;
            }
            if let Some(r) = w.meter {
                self.direct_meter_set(t, h, r)?;
            }
        }
        if let Some(ttl) = w.idle_timeout_ns {
            self.set_entry_ttl(t, h, (ttl > 0).then_some(ttl), now)?;
        }
        if let (WriteKind::Insert | WriteKind::Modify, Some(m)) = (w.kind, &w.metadata) {
            self.set_entry_metadata(t, h, m)?;
        }
        Ok(Some(h))
    }

    /// The entry with exactly this (complete, ordered) key and, in a ternary table, this
    /// priority.
    pub fn find_entry(
        &self,
        t: TableId,
        keys: &[MatchKey],
        priority: i32,
    ) -> Result<EntryHandle, ApiError> {
        self.table(t)?
            .find(keys, priority)?
            .map(EntryHandle)
            .ok_or(ApiError::NoEntry)
    }

    /// The entry a key names as a route states it (fields by position, checked under its
    /// rules), or None.
    pub fn lookup_entry(
        &self,
        t: TableId,
        fields: &[FieldMatch],
        rules: KeyRules,
        priority: i32,
    ) -> Result<Option<EntryHandle>, ApiError> {
        let table = self.table(t)?;
        let keys = assemble(table, fields, rules)?;
        Ok(table.find(&keys, priority)?.map(EntryHandle))
    }

    /// Entries of a table, in handle order, whose key holds these values in these fields
    /// (each checked under P4Runtime's rules and compared as stored).
    pub fn entries_with(
        &self,
        t: TableId,
        fields: &[FieldMatch],
    ) -> Result<Vec<EntryView>, ApiError> {
        let table = self.table(t)?;
        let mut probes = Vec::with_capacity(fields.len());
        for f in fields {
            check_canonical(table, f)?;
            let kf = &table.keys[f.field as usize];
            probes.push((f.field as usize, table.encode_field(kf, &f.key)?.key));
        }
        let mut entries = self.entries(t)?;
        entries.retain(|e| probes.iter().all(|(i, k)| e.keys.get(*i) == Some(k)));
        Ok(entries)
    }

    fn write_default(&mut self, w: &TableWrite) -> Result<(), ApiError> {
        match (&w.action, w.target) {
            (Some((a, params)), None) => self.set_default(w.table, *a, params.clone()),
            (_, target) => self.set_default_target(w.table, target),
        }
    }
}

fn action_of(w: &TableWrite) -> Result<(ActionId, Vec<Vec<u8>>), ApiError> {
    w.action.clone().ok_or_else(|| {
        ApiError::Invalid("a table write that adds or changes an entry needs an action".into())
    })
}

//! The runtime control API of a loaded program: tables, counters, registers, meters (what
//! P4Runtime, the Thrift server and `lanes ctl` call). Not a P4 control: those are in pipeline.rs.

use crate::bits::{words_for, words_to_bytes};
use crate::error::ApiError;
use crate::externs::{CounterValue, MeterRates};
use crate::pipeline::encode_params;
use crate::profile::ProfileRef;
use crate::program::Program;
use crate::table::{Entry, MatchKey, Table};

/// A table of the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TableId(pub u32);

/// An action of the program (index in the JSON `actions` list).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ActionId(pub u32);

/// An installed table entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EntryHandle(pub u32);

/// An action with its parameters (big-endian bytes).
pub type ActionCall = (ActionId, Vec<Vec<u8>>);

/// A table entry as read back.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryView {
    pub handle: EntryHandle,
    pub keys: Vec<MatchKey>,
    pub action: ActionId,
    pub action_name: String,
    /// Action parameters, big-endian, ceil(width/8) bytes each.
    pub params: Vec<Vec<u8>>,
    pub priority: i32,
    /// Direct counter (zero if the table has none).
    pub counter: CounterValue,
    /// In an indirect table: the member or group the entry runs (`action` and `params` are
    /// then empty).
    pub target: Option<ProfileRef>,
    /// The controller's metadata (empty: none).
    pub metadata: Vec<u8>,
}

impl Program {
    /// Finds a table by its full name (`MyIngress.ipv4_lpm`) or a unique last component
    /// (`ipv4_lpm`).
    pub fn table_id(&self, name: &str) -> Option<TableId> {
        if let Some(t) = self.table_by_name.get(name) {
            return Some(TableId(*t));
        }
        crate::names::resolve(self.tables.iter().map(|t| t.name.as_str()), name)
            .map(|i| TableId(i as u32))
    }

    pub fn table_names(&self) -> Vec<&str> {
        self.tables.iter().map(|t| t.name.as_str()).collect()
    }

    /// Finds an action of a table by full or unique short name.
    pub fn action_id(&self, table: TableId, name: &str) -> Option<ActionId> {
        let t = self.tables.get(table.0 as usize)?;
        let names = t
            .actions
            .iter()
            .map(|a| self.actions[*a as usize].name.as_str());
        crate::names::resolve(names, name).map(|i| ActionId(t.actions[i]))
    }

    pub fn action_name(&self, a: ActionId) -> Option<&str> {
        self.actions.get(a.0 as usize).map(|x| x.name.as_str())
    }

    pub(crate) fn table(&self, t: TableId) -> Result<&Table, ApiError> {
        self.tables
            .get(t.0 as usize)
            .ok_or_else(|| ApiError::UnknownTable(format!("#{}", t.0)))
    }

    fn checked_action(
        &self,
        t: TableId,
        a: ActionId,
        params: &[Vec<u8>],
    ) -> Result<Vec<u64>, ApiError> {
        let table = self.table(t)?;
        if table.profile.is_some() {
            return Err(ApiError::WrongTableType(format!(
                "table {} is indirect (an action profile): its entries name a member or group",
                table.name
            )));
        }
        if !table.actions.contains(&a.0) {
            return Err(ApiError::UnknownAction(format!(
                "#{} in table {}",
                a.0, table.name
            )));
        }
        encode_params(&self.actions[a.0 as usize], params).map_err(ApiError::BadActionData)
    }

    /// Adds an entry. `priority` matters for ternary/range/optional tables: higher wins
    /// (P4Runtime semantics).
    pub fn add_entry(
        &mut self,
        t: TableId,
        keys: Vec<MatchKey>,
        action: ActionId,
        params: Vec<Vec<u8>>,
        priority: i32,
    ) -> Result<EntryHandle, ApiError> {
        let data = self.checked_action(t, action, &params)?;
        let table = &mut self.tables[t.0 as usize];
        if table.is_const {
            return Err(ApiError::ConstTable(table.name.clone()));
        }
        table
            .insert(&keys, action.0, data, priority)
            .map(EntryHandle)
    }

    /// Changes the action and parameters of an entry (its key, counters and meter stay).
    pub fn modify_entry(
        &mut self,
        t: TableId,
        h: EntryHandle,
        action: ActionId,
        params: Vec<Vec<u8>>,
    ) -> Result<(), ApiError> {
        let data = self.checked_action(t, action, &params)?;
        let table = &mut self.tables[t.0 as usize];
        if table.is_const {
            return Err(ApiError::ConstTable(table.name.clone()));
        }
        let e = table.entry_mut(h.0).ok_or(ApiError::BadHandle(h.0))?;
        e.action = action.0;
        e.data = data;
        Ok(())
    }

    /// Replaces the controller's metadata of an entry (empty: none).
    pub fn set_entry_metadata(
        &mut self,
        t: TableId,
        h: EntryHandle,
        metadata: &[u8],
    ) -> Result<(), ApiError> {
        self.table(t)?;
        let e = self.tables[t.0 as usize]
            .entry_mut(h.0)
            .ok_or(ApiError::BadHandle(h.0))?;
        e.metadata = metadata.into();
        Ok(())
    }

    pub fn delete_entry(&mut self, t: TableId, h: EntryHandle) -> Result<(), ApiError> {
        self.table(t)?;
        let table = &mut self.tables[t.0 as usize];
        if table.is_const {
            return Err(ApiError::ConstTable(table.name.clone()));
        }
        let e = table.remove(h.0)?;
        self.release_target(t, e.target);
        Ok(())
    }

    /// Removes every entry of a (non-const) table.
    pub fn clear_table(&mut self, t: TableId) -> Result<(), ApiError> {
        self.table(t)?;
        let table = &mut self.tables[t.0 as usize];
        if table.is_const {
            return Err(ApiError::ConstTable(table.name.clone()));
        }
        let targets: Vec<_> = table
            .handles()
            .filter_map(|h| table.entry(h).and_then(|e| e.target))
            .collect();
        table.clear();
        for r in targets {
            self.release_target(t, Some(r));
        }
        Ok(())
    }

    /// Sets the action run on a miss.
    pub fn set_default(
        &mut self,
        t: TableId,
        action: ActionId,
        params: Vec<Vec<u8>>,
    ) -> Result<(), ApiError> {
        let data = self.checked_action(t, action, &params)?;
        let table = &mut self.tables[t.0 as usize];
        if table.default_const && table.default_action != Some(action.0) {
            return Err(ApiError::ConstDefault(table.name.clone()));
        }
        table.default_action = Some(action.0);
        table.default_data = data;
        Ok(())
    }

    /// Default action and parameters of a table.
    pub fn default_entry(&self, t: TableId) -> Result<Option<ActionCall>, ApiError> {
        let table = self.table(t)?;
        Ok(table
            .default_action
            .map(|a| (ActionId(a), self.params_bytes(a, &table.default_data))))
    }

    pub(crate) fn params_bytes(&self, a: u32, data: &[u64]) -> Vec<Vec<u8>> {
        self.actions[a as usize]
            .params
            .iter()
            .map(|p| {
                let mut b = Vec::new();
                let w = p.word as usize;
                words_to_bytes(&data[w..w + words_for(p.width) as usize], p.width, &mut b);
                b
            })
            .collect()
    }

    /// Number of entries installed in a table.
    pub fn entry_count(&self, t: TableId) -> Result<usize, ApiError> {
        Ok(self.table(t)?.len())
    }

    /// All entries of a table, in handle order.
    pub fn entries(&self, t: TableId) -> Result<Vec<EntryView>, ApiError> {
        let table = self.table(t)?;
        Ok(table
            .handles()
            .filter_map(|h| table.entry(h).map(|e| self.view(h, e)))
            .collect())
    }

    fn view(&self, h: u32, e: &Entry) -> EntryView {
        let (action_name, params) = match e.target {
            Some(_) => (String::new(), Vec::new()),
            None => (
                self.actions[e.action as usize].name.clone(),
                self.params_bytes(e.action, &e.data),
            ),
        };
        EntryView {
            handle: EntryHandle(h),
            keys: e.keys.clone(),
            action: ActionId(e.action),
            action_name,
            params,
            priority: e.priority,
            counter: e.counter,
            target: e.target,
            metadata: e.metadata.to_vec(),
        }
    }

    /// Reads one entry.
    pub fn entry(&self, t: TableId, h: EntryHandle) -> Result<EntryView, ApiError> {
        self.entries(t)?
            .into_iter()
            .find(|e| e.handle == h)
            .ok_or(ApiError::BadHandle(h.0))
    }

    fn counter_idx(&self, name: &str) -> Result<usize, ApiError> {
        self.ext
            .counter_by_name
            .get(name)
            .map(|i| *i as usize)
            .ok_or_else(|| ApiError::UnknownExtern(name.to_string()))
    }

    pub fn counter_read(&self, name: &str, index: u64) -> Result<CounterValue, ApiError> {
        let c = &self.ext.counters[self.counter_idx(name)?];
        c.cells
            .get(index as usize)
            .copied()
            .ok_or(ApiError::IndexOutOfRange {
                name: name.to_string(),
                index,
                size: c.cells.len() as u64,
            })
    }

    pub fn counter_write(
        &mut self,
        name: &str,
        index: u64,
        v: CounterValue,
    ) -> Result<(), ApiError> {
        let i = self.counter_idx(name)?;
        let c = &mut self.ext.counters[i];
        let size = c.cells.len() as u64;
        match c.cells.get_mut(index as usize) {
            Some(x) => {
                *x = v;
                Ok(())
            }
            None => Err(ApiError::IndexOutOfRange {
                name: name.to_string(),
                index,
                size,
            }),
        }
    }

    /// Size of an indexed counter, register or meter array.
    pub fn extern_size(&self, name: &str) -> Result<u64, ApiError> {
        let x = &self.ext;
        if let Some(i) = x.counter_by_name.get(name) {
            return Ok(x.counters[*i as usize].cells.len() as u64);
        }
        if let Some(i) = x.register_by_name.get(name) {
            return Ok(x.registers[*i as usize].cells.len() as u64);
        }
        if let Some(i) = x.meter_by_name.get(name) {
            return Ok(x.meters[*i as usize].cells.len() as u64);
        }
        Err(ApiError::UnknownExtern(name.to_string()))
    }

    /// Whether the table has a direct meter.
    pub fn has_direct_meter(&self, t: TableId) -> Result<bool, ApiError> {
        Ok(self.table(t)?.direct_meter.is_some())
    }

    /// The table, if it has a direct counter (the one place that rule is checked, for every
    /// control plane).
    pub(crate) fn with_direct_counter(&self, t: TableId) -> Result<&Table, ApiError> {
        let table = self.table(t)?;
        match table.with_counters {
            true => Ok(table),
            false => Err(ApiError::NoDirectCounter(table.name.clone())),
        }
    }

    /// The table, if it has a direct meter.
    pub(crate) fn with_direct_meter(&self, t: TableId) -> Result<&Table, ApiError> {
        let table = self.table(t)?;
        match table.direct_meter {
            Some(_) => Ok(table),
            None => Err(ApiError::NoDirectMeter(table.name.clone())),
        }
    }

    /// Direct counter of an entry.
    pub fn direct_counter_read(
        &self,
        t: TableId,
        h: EntryHandle,
    ) -> Result<CounterValue, ApiError> {
        let e = self.with_direct_counter(t)?.entry(h.0);
        Ok(e.ok_or(ApiError::BadHandle(h.0))?.counter)
    }

    /// Zeroes the direct counters of every entry of a table.
    pub fn direct_counters_reset(&mut self, t: TableId) -> Result<(), ApiError> {
        self.with_direct_counter(t)?;
        let table = &mut self.tables[t.0 as usize];
        for h in table.handles().collect::<Vec<_>>() {
            if let Some(e) = table.entry_mut(h) {
                e.counter = CounterValue::default();
            }
        }
        Ok(())
    }

    /// Sets the direct counter of an entry.
    pub fn direct_counter_write(
        &mut self,
        t: TableId,
        h: EntryHandle,
        v: CounterValue,
    ) -> Result<(), ApiError> {
        self.with_direct_counter(t)?;
        let e = self.tables[t.0 as usize]
            .entry_mut(h.0)
            .ok_or(ApiError::BadHandle(h.0))?;
        e.counter = v;
        Ok(())
    }

    pub fn register_read(&self, name: &str, index: u64) -> Result<u64, ApiError> {
        let i = *self
            .ext
            .register_by_name
            .get(name)
            .ok_or_else(|| ApiError::UnknownExtern(name.to_string()))?;
        let r = &self.ext.registers[i as usize];
        r.cells
            .get(index as usize)
            .copied()
            .ok_or(ApiError::IndexOutOfRange {
                name: name.to_string(),
                index,
                size: r.cells.len() as u64,
            })
    }

    pub fn register_write(&mut self, name: &str, index: u64, v: u64) -> Result<(), ApiError> {
        let i = *self
            .ext
            .register_by_name
            .get(name)
            .ok_or_else(|| ApiError::UnknownExtern(name.to_string()))?;
        let r = &mut self.ext.registers[i as usize];
        let size = r.cells.len() as u64;
        let m = crate::bits::mask(r.width);
        match r.cells.get_mut(index as usize) {
            Some(c) => {
                *c = v & m;
                Ok(())
            }
            None => Err(ApiError::IndexOutOfRange {
                name: name.to_string(),
                index,
                size,
            }),
        }
    }

    /// Configures one cell of an indexed meter (rates per second, bursts in bytes or packets).
    pub fn meter_set(&mut self, name: &str, index: u64, r: MeterRates) -> Result<(), ApiError> {
        let i = *self
            .ext
            .meter_by_name
            .get(name)
            .ok_or_else(|| ApiError::UnknownExtern(name.to_string()))?;
        r.check()?;
        let m = &mut self.ext.meters[i as usize];
        let size = m.cells.len() as u64;
        match m.cells.get_mut(index as usize) {
            Some(c) => {
                c.configure(r);
                Ok(())
            }
            None => Err(ApiError::IndexOutOfRange {
                name: name.to_string(),
                index,
                size,
            }),
        }
    }

    pub fn meter_get(&self, name: &str, index: u64) -> Result<Option<MeterRates>, ApiError> {
        let i = *self
            .ext
            .meter_by_name
            .get(name)
            .ok_or_else(|| ApiError::UnknownExtern(name.to_string()))?;
        let m = &self.ext.meters[i as usize];
        m.cells
            .get(index as usize)
            .map(|c| c.rates())
            .ok_or(ApiError::IndexOutOfRange {
                name: name.to_string(),
                index,
                size: m.cells.len() as u64,
            })
    }

    /// Configures the direct meter of an entry.
    pub fn direct_meter_set(
        &mut self,
        t: TableId,
        h: EntryHandle,
        r: MeterRates,
    ) -> Result<(), ApiError> {
        self.with_direct_meter(t)?;
        r.check()?;
        self.tables[t.0 as usize]
            .entry_mut(h.0)
            .ok_or(ApiError::BadHandle(h.0))?
            .meter
            .configure(r);
        Ok(())
    }

    // Single entry reads, const default actions, direct meter reads and meter resets (what
    // the P4Runtime server needs).
    /// One entry (without reading the others).
    pub fn entry_view(&self, t: TableId, h: EntryHandle) -> Result<EntryView, ApiError> {
        let table = self.table(t)?;
        let e = table.entry(h.0).ok_or(ApiError::BadHandle(h.0))?;
        Ok(self.view(h.0, e))
    }

    /// Whether the table's default action may not be changed.
    pub fn default_is_const(&self, t: TableId) -> Result<bool, ApiError> {
        Ok(self.table(t)?.default_const)
    }

    /// Rates of an entry's direct meter (None if not configured).
    pub fn direct_meter_get(
        &self,
        t: TableId,
        h: EntryHandle,
    ) -> Result<Option<MeterRates>, ApiError> {
        let table = self.with_direct_meter(t)?;
        let e = table.entry(h.0).ok_or(ApiError::BadHandle(h.0))?;
        Ok(e.meter.rates())
    }

    /// Returns an entry's direct meter to its unconfigured state (every packet green).
    pub fn direct_meter_reset(&mut self, t: TableId, h: EntryHandle) -> Result<(), ApiError> {
        self.with_direct_meter(t)?;
        let e = self.tables[t.0 as usize]
            .entry_mut(h.0)
            .ok_or(ApiError::BadHandle(h.0))?;
        e.meter = crate::externs::Meter::default();
        Ok(())
    }

    /// Returns a meter cell to its unconfigured state (every packet green).
    pub fn meter_reset(&mut self, name: &str, index: u64) -> Result<(), ApiError> {
        let i = *self
            .ext
            .meter_by_name
            .get(name)
            .ok_or_else(|| ApiError::UnknownExtern(name.to_string()))?;
        let m = &mut self.ext.meters[i as usize];
        let size = m.cells.len() as u64;
        match m.cells.get_mut(index as usize) {
            Some(c) => {
                *c = crate::externs::Meter::default();
                Ok(())
            }
            None => Err(ApiError::IndexOutOfRange {
                name: name.to_string(),
                index,
                size,
            }),
        }
    }

    /// Whether a meter (indexed or direct) counts packets rather than bytes.
    pub fn meter_counts_packets(&self, name: &str) -> Result<bool, ApiError> {
        let i = *self
            .ext
            .meter_by_name
            .get(name)
            .ok_or_else(|| ApiError::UnknownExtern(name.to_string()))?;
        Ok(self.ext.meters[i as usize].packets)
    }
}

//! A table entry as the reads return it to Python (`EntryRead`, its fields by name): the P4Runtime
//! reads, the Thrift API's `bm_mt_get_entries` and the idle-timeout notifications all read these.

use lanes_p4::{ApiError, EntryHandle, EntryView, Program, TableId};
use pyo3::prelude::*;

use crate::p4rt_bindings::{from_key, out_rates, target_out, OutKey, PyRates, PyTarget};

/// One entry: its handle, keys (kind, a, b, prefix length), action index and parameters,
/// priority, direct counter, direct meter rates (or None), the member or group of an indirect
/// entry (or None), and the controller's metadata.
#[pyclass(name = "EntryRead", frozen, get_all, module = "lanes._native")]
pub(crate) struct EntryRead {
    handle: u32,
    keys: Vec<OutKey>,
    action: u32,
    params: Vec<Vec<u8>>,
    priority: i32,
    packets: u64,
    bytes: u64,
    meter: Option<PyRates>,
    target: Option<PyTarget>,
    metadata: Vec<u8>,
}

#[pymethods]
impl EntryRead {
    fn __repr__(&self) -> String {
        format!(
            "EntryRead(handle={}, action={}, priority={}, keys={})",
            self.handle,
            self.action,
            self.priority,
            self.keys.len()
        )
    }
}

/// Entry `h` of table `t`.
pub(crate) fn entry_out(p: &Program, t: TableId, h: EntryHandle) -> Result<EntryRead, ApiError> {
    view_out(p, t, p.entry_view(t, h)?)
}

/// An entry the table gave as a view, with its direct meter's rates.
pub(crate) fn view_out(p: &Program, t: TableId, e: EntryView) -> Result<EntryRead, ApiError> {
    let meter = match p.has_direct_meter(t)? {
        true => out_rates(p.direct_meter_get(t, e.handle)?),
        false => None,
    };
    Ok(EntryRead {
        handle: e.handle.0,
        keys: e.keys.iter().map(from_key).collect(),
        action: e.action.0,
        params: e.params,
        priority: e.priority,
        packets: e.counter.packets,
        bytes: e.counter.bytes,
        meter,
        target: e.target.map(target_out),
        metadata: e.metadata,
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<EntryRead>()
}

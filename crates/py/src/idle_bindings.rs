//! Bindings for idle timeouts (tables with `support_timeout`): an entry's timeout, its time
//! since the last hit, and the entries gone idle since last asked, on the data plane's clock.

use lanes_p4::{EntryHandle, TableId};
use lanes_switch::dataplane_now_ns;
use pyo3::prelude::*;

use crate::p4rt_bindings::with_program;
use crate::switch_bindings::PySwitch;

/// Sets (ns) or clears (None) an entry's idle timeout; its idle time starts now.
#[pyfunction]
#[pyo3(signature = (sw, table, handle, ttl_ns))]
fn p4rt_entry_ttl(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    table: u32,
    handle: u32,
    ttl_ns: Option<u64>,
) -> PyResult<()> {
    with_program(py, &sw, |p| {
        p.set_entry_ttl(
            TableId(table),
            EntryHandle(handle),
            ttl_ns,
            dataplane_now_ns(),
        )
    })
}

/// (ns since the last hit, timeout ns or None) of an entry; None if its table keeps no hit times.
#[pyfunction]
fn p4rt_entry_life(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    table: u32,
    handle: u32,
) -> PyResult<Option<(u64, Option<u64>)>> {
    with_program(py, &sw, |p| {
        p.entry_life(TableId(table), EntryHandle(handle), dataplane_now_ns())
    })
}

/// (table, entry handle) of every entry idle past its timeout and not reported since its last
/// hit; each is reported once per idle period. Empty without a program.
#[pyfunction]
fn p4rt_take_idle(py: Python<'_>, sw: PyRef<'_, PySwitch>) -> Vec<(u32, u32)> {
    let sw: &PySwitch = &sw;
    py.allow_threads(|| {
        sw.inner.with(|dp| match dp.program_mut() {
            Some(p) => p
                .take_idle(dataplane_now_ns())
                .into_iter()
                .map(|(t, h)| (t.0, h.0))
                .collect(),
            None => Vec::new(),
        })
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(p4rt_entry_ttl, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_entry_life, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_take_idle, m)?)?;
    Ok(())
}

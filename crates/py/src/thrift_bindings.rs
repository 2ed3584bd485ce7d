//! Bindings for bmv2's Thrift API (python/lanes/switch/thrift/): table entries addressed by
//! the handle bmv2's clients keep (modify, delete, read one entry, its direct counter and
//! meter), where the P4Runtime bindings address entries by match key. Errors are
//! `P4rtError(code, message)` with the same gRPC codes; the Thrift server turns them into
//! bmv2's error codes.

use lanes_p4::{ActionId, CounterValue, EntryHandle, TableId};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;

use crate::entry_read::{entry_out, EntryRead};
use crate::p4rt_bindings::{out_rates, rates, with_program, PyRates};
use crate::switch_bindings::PySwitch;

/// One entry by handle, as `p4rt_table_read` returns entries.
#[pyfunction]
fn bm_entry(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    table: u32,
    handle: u32,
) -> PyResult<EntryRead> {
    with_program(py, &sw, |p| {
        entry_out(p, TableId(table), EntryHandle(handle))
    })
}

/// New action and parameters for the entry with this handle (its key and counters stay).
#[pyfunction]
fn bm_entry_modify(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    table: u32,
    handle: u32,
    action: u32,
    params: Vec<PyBackedBytes>,
) -> PyResult<()> {
    let params: Vec<Vec<u8>> = params.iter().map(|x| x.to_vec()).collect();
    with_program(py, &sw, |p| {
        p.modify_entry(
            TableId(table),
            EntryHandle(handle),
            ActionId(action),
            params,
        )
    })
}

/// How many entries a table has (without reading them).
#[pyfunction]
fn bm_table_num_entries(py: Python<'_>, sw: PyRef<'_, PySwitch>, table: u32) -> PyResult<usize> {
    with_program(py, &sw, |p| p.entry_count(TableId(table)))
}

/// Removes the entry with this handle.
#[pyfunction]
fn bm_entry_delete(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    table: u32,
    handle: u32,
) -> PyResult<()> {
    with_program(py, &sw, |p| {
        p.delete_entry(TableId(table), EntryHandle(handle))
    })
}

/// The direct counter of an entry as (packets, bytes); with `value`, it is set first.
#[pyfunction]
#[pyo3(signature = (sw, table, handle, value = None))]
fn bm_direct_counter(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    table: u32,
    handle: u32,
    value: Option<(u64, u64)>,
) -> PyResult<(u64, u64)> {
    with_program(py, &sw, |p| {
        let (t, h) = (TableId(table), EntryHandle(handle));
        if let Some((packets, bytes)) = value {
            p.direct_counter_write(t, h, CounterValue { packets, bytes })?;
        }
        let c = p.direct_counter_read(t, h)?;
        Ok((c.packets, c.bytes))
    })
}

/// Zeroes the direct counters of every entry of a table.
#[pyfunction]
fn bm_direct_counters_reset(py: Python<'_>, sw: PyRef<'_, PySwitch>, table: u32) -> PyResult<()> {
    with_program(py, &sw, |p| p.direct_counters_reset(TableId(table)))
}

/// Configures the direct meter of an entry (rates per second; None: unconfigured again).
#[pyfunction]
#[pyo3(signature = (sw, table, handle, rates_))]
fn bm_direct_meter_set(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    table: u32,
    handle: u32,
    rates_: Option<PyRates>,
) -> PyResult<()> {
    with_program(py, &sw, |p| {
        let (t, h) = (TableId(table), EntryHandle(handle));
        match rates_ {
            Some(r) => p.direct_meter_set(t, h, rates(r)),
            None => p.direct_meter_reset(t, h),
        }
    })
}

/// The rates of an entry's direct meter (None: not configured).
#[pyfunction]
fn bm_direct_meter_get(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    table: u32,
    handle: u32,
) -> PyResult<Option<PyRates>> {
    with_program(py, &sw, |p| {
        Ok(out_rates(
            p.direct_meter_get(TableId(table), EntryHandle(handle))?,
        ))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(bm_entry, m)?)?;
    m.add_function(wrap_pyfunction!(bm_entry_modify, m)?)?;
    m.add_function(wrap_pyfunction!(bm_entry_delete, m)?)?;
    m.add_function(wrap_pyfunction!(bm_table_num_entries, m)?)?;
    m.add_function(wrap_pyfunction!(bm_direct_counter, m)?)?;
    m.add_function(wrap_pyfunction!(bm_direct_counters_reset, m)?)?;
    m.add_function(wrap_pyfunction!(bm_direct_meter_set, m)?)?;
    m.add_function(wrap_pyfunction!(bm_direct_meter_get, m)?)?;
    Ok(())
}

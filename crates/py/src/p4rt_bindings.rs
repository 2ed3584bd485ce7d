//! Bindings for the P4Runtime server (python/lanes/p4runtime): staged programs, single entry
//! reads, table defaults, counters, registers and meters. Objects are
//! addressed by the program's own indices (TableId, ActionId) that the server resolves once
//! per pipeline from the P4Info. Every call releases the GIL while it works on the data plane.
//!
//! Errors are `P4rtError(code, message, thrift_code)`: the gRPC status code and bmv2's
//! TableOperationErrorCode of the same error (lanes-p4's `ApiError` decides both). Table writes,
//! key lookups and filtered reads are in table_write_bindings.rs.

use std::sync::Mutex;

use lanes_p4::api_error::thrift;
use lanes_p4::{ApiError, CounterValue, MatchKey, MeterRates, ProfileRef, Program, TableId};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

use crate::codes::{KEY_ANY, KEY_EXACT, KEY_LPM, KEY_OPTIONAL, KEY_RANGE, KEY_TERNARY};
use crate::switch_bindings::PySwitch;

create_exception!(_native, P4rtError, PyException);

pub(crate) use lanes_p4::api_error::grpc::{FAILED_PRECONDITION, INVALID_ARGUMENT};

/// A refusal the bindings make themselves (not an `ApiError`): bmv2's code is its generic one.
pub(crate) fn py_err(code: u8, msg: impl Into<String>) -> PyErr {
    P4rtError::new_err((code, msg.into(), thrift::ERROR))
}

/// An `ApiError` as P4rtError(gRPC code, message, Thrift code), all three from lanes-p4.
pub(crate) fn api_err(e: ApiError) -> PyErr {
    P4rtError::new_err((e.grpc_code(), e.to_string(), e.thrift_code()))
}

/// A key as returned to Python: (kind, a, b, prefix_len), kinds as in `PyKey`.
pub(crate) type OutKey = (u8, Vec<u8>, Vec<u8>, u32);

pub(crate) fn from_key(k: &MatchKey) -> OutKey {
    match k {
        MatchKey::Exact(v) => (KEY_EXACT, v.clone(), vec![], 0),
        MatchKey::Lpm(v, p) => (KEY_LPM, v.clone(), vec![], *p),
        MatchKey::Ternary(v, m) => (KEY_TERNARY, v.clone(), m.clone(), 0),
        MatchKey::Range(lo, hi) => (KEY_RANGE, lo.clone(), hi.clone(), 0),
        MatchKey::Optional(Some(v)) => (KEY_OPTIONAL, v.clone(), vec![], 0),
        MatchKey::Optional(None) => (KEY_ANY, vec![], vec![], 0),
    }
}

pub(crate) type PyRates = (f64, u64, f64, u64);

pub(crate) fn rates(r: PyRates) -> MeterRates {
    MeterRates {
        cir: r.0,
        cbs: r.1,
        pir: r.2,
        pbs: r.3,
    }
}

pub(crate) fn out_rates(r: Option<MeterRates>) -> Option<PyRates> {
    r.map(|r| (r.cir, r.cbs, r.pir, r.pbs))
}

/// A program compiled and checked but not yet running (VERIFY_AND_SAVE keeps one).
#[pyclass(name = "P4rtProgram")]
pub(crate) struct PyP4rtProgram {
    program: Mutex<Option<Program>>,
    names: String,
}

#[pymethods]
impl PyP4rtProgram {
    /// The program's tables, actions and externs (names, widths, match kinds) as JSON.
    fn names_json(&self) -> String {
        self.names.clone()
    }
}

/// Compile a bmv2 JSON program without installing it. P4rtError(INVALID_ARGUMENT) if refused.
#[pyfunction]
fn p4rt_compile(py: Python<'_>, json_text: &str) -> PyResult<PyP4rtProgram> {
    py.allow_threads(|| {
        let p = Program::load(json_text).map_err(|e| py_err(INVALID_ARGUMENT, e.to_string()))?;
        let names = p.describe().to_string();
        Ok(PyP4rtProgram {
            program: Mutex::new(Some(p)),
            names,
        })
    })
}

fn take_program(staged: &PyP4rtProgram) -> PyResult<Program> {
    staged
        .program
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .ok_or_else(|| py_err(FAILED_PRECONDITION, "this program was committed already"))
}

/// Install a staged program; the old program and its entries are gone.
#[pyfunction]
fn p4rt_commit(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    staged: PyRef<'_, PyP4rtProgram>,
) -> PyResult<()> {
    let p = take_program(&staged)?;
    let sw: &PySwitch = &sw;
    py.allow_threads(|| sw.inner.with(|dp| dp.set_program(p)));
    Ok(())
}

/// Install a staged program keeping the running program's table entries, default actions,
/// counters and registers (matched by name). Fails, changing nothing, if an entry cannot move.
#[pyfunction]
fn p4rt_reconcile(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    staged: PyRef<'_, PyP4rtProgram>,
) -> PyResult<()> {
    let mut new = take_program(&staged)?;
    let sw: &PySwitch = &sw;
    let r = py.allow_threads(|| {
        sw.inner.with(|dp| {
            if let Some(old) = dp.program() {
                new.carry_state_from(old)?;
            }
            dp.set_program(new);
            Ok::<(), String>(())
        })
    });
    r.map_err(|e| py_err(INVALID_ARGUMENT, format!("cannot reconcile: {e}")))
}

/// A member or group of an action profile: (is a group, handle).
pub(crate) type PyTarget = (bool, u32);

pub(crate) fn target_of(t: PyTarget) -> ProfileRef {
    match t {
        (true, h) => ProfileRef::Group(h),
        (false, h) => ProfileRef::Member(h),
    }
}

pub(crate) fn target_out(r: ProfileRef) -> PyTarget {
    match r {
        ProfileRef::Group(h) => (true, h),
        ProfileRef::Member(h) => (false, h),
    }
}

pub(crate) fn with_program<R: Send>(
    py: Python<'_>,
    sw: &PySwitch,
    f: impl FnOnce(&mut Program) -> Result<R, ApiError> + Send,
) -> PyResult<R> {
    py.allow_threads(|| {
        sw.inner.with(|dp| match dp.program_mut() {
            Some(p) => f(p).map_err(api_err),
            None => Err(api_err(ApiError::NoProgram)),
        })
    })
}

/// The default action of a table: (action index, params) or None.
#[pyfunction]
fn p4rt_table_default(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    table: u32,
) -> PyResult<Option<(u32, Vec<Vec<u8>>)>> {
    with_program(py, &sw, |p| {
        Ok(p.default_entry(TableId(table))?
            .map(|(a, params)| (a.0, params)))
    })
}

/// Removes every entry of a table.
#[pyfunction]
fn p4rt_table_clear(py: Python<'_>, sw: PyRef<'_, PySwitch>, table: u32) -> PyResult<()> {
    with_program(py, &sw, |p| p.clear_table(TableId(table)))
}

fn indices(p: &Program, name: &str, index: Option<u64>) -> Result<Vec<u64>, ApiError> {
    let size = p.extern_size(name)?;
    match index {
        Some(i) if i >= size => Err(ApiError::IndexOutOfRange {
            name: name.to_string(),
            index: i,
            size,
        }),
        Some(i) => Ok(vec![i]),
        None => Ok((0..size).collect()),
    }
}

/// Cells of an indexed counter: [(index, packets, bytes)]; all cells if index is None.
#[pyfunction]
#[pyo3(signature = (sw, name, index = None))]
fn p4rt_counter_read(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    name: String,
    index: Option<u64>,
) -> PyResult<Vec<(u64, u64, u64)>> {
    with_program(py, &sw, |p| {
        indices(p, &name, index)?
            .into_iter()
            .map(|i| p.counter_read(&name, i).map(|c| (i, c.packets, c.bytes)))
            .collect()
    })
}

/// Set counter cells (all cells if index is None).
#[pyfunction]
#[pyo3(signature = (sw, name, index, packets, bytes))]
fn p4rt_counter_write(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    name: String,
    index: Option<u64>,
    packets: u64,
    bytes: u64,
) -> PyResult<()> {
    with_program(py, &sw, |p| {
        for i in indices(p, &name, index)? {
            p.counter_write(&name, i, CounterValue { packets, bytes })?;
        }
        Ok(())
    })
}

/// Cells of a register: [(index, value)]; all cells if index is None.
#[pyfunction]
#[pyo3(signature = (sw, name, index = None))]
fn p4rt_register_read(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    name: String,
    index: Option<u64>,
) -> PyResult<Vec<(u64, u64)>> {
    with_program(py, &sw, |p| {
        indices(p, &name, index)?
            .into_iter()
            .map(|i| p.register_read(&name, i).map(|v| (i, v)))
            .collect()
    })
}

/// Set register cells (all cells if index is None).
#[pyfunction]
#[pyo3(signature = (sw, name, index, value))]
fn p4rt_register_write(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    name: String,
    index: Option<u64>,
    value: u64,
) -> PyResult<()> {
    with_program(py, &sw, |p| {
        for i in indices(p, &name, index)? {
            p.register_write(&name, i, value)?;
        }
        Ok(())
    })
}

/// Meter cells: [(index, rates or None)]; all cells if index is None.
#[pyfunction]
#[pyo3(signature = (sw, name, index = None))]
fn p4rt_meter_read(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    name: String,
    index: Option<u64>,
) -> PyResult<Vec<(u64, Option<PyRates>)>> {
    with_program(py, &sw, |p| {
        indices(p, &name, index)?
            .into_iter()
            .map(|i| p.meter_get(&name, i).map(|r| (i, out_rates(r))))
            .collect()
    })
}

/// Configure meter cells (all if index is None); rates None returns them to unconfigured.
#[pyfunction]
#[pyo3(signature = (sw, name, index, rates_))]
fn p4rt_meter_write(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    name: String,
    index: Option<u64>,
    rates_: Option<PyRates>,
) -> PyResult<()> {
    with_program(py, &sw, |p| {
        for i in indices(p, &name, index)? {
            match rates_ {
                Some(r) => p.meter_set(&name, i, rates(r))?,
                None => p.meter_reset(&name, i)?,
            }
        }
        Ok(())
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("P4rtError", m.py().get_type::<P4rtError>())?;
    m.add_class::<PyP4rtProgram>()?;
    m.add_function(wrap_pyfunction!(p4rt_compile, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_commit, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_reconcile, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_table_default, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_table_clear, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_counter_read, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_counter_write, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_register_read, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_register_write, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_meter_read, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_meter_write, m)?)?;
    Ok(())
}

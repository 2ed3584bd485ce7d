//! Bindings for parser value sets, shared by the Thrift server (simple_switch_CLI's `pvs_*`) and
//! the P4Runtime server (ValueSetEntry). Errors are `P4rtError(code, message)`.

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;

use crate::codes::{VSET_ADD, VSET_CLEAR, VSET_REMOVE};
use crate::p4rt_bindings::with_program;
use crate::switch_bindings::PySwitch;

/// Value set operations (crate::codes): add, remove (value and optional mask, big-endian), clear.
#[pyfunction]
#[pyo3(signature = (sw, name, op, value = None, mask = None))]
fn vset_write(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    name: String,
    op: u8,
    value: Option<PyBackedBytes>,
    mask: Option<PyBackedBytes>,
) -> PyResult<()> {
    let value = value.map(|v| v.to_vec());
    let mask = mask.map(|m| m.to_vec());
    with_program(py, &sw, |p| match (op, &value) {
        (VSET_ADD, Some(v)) => p.value_set_add(&name, v, mask.as_deref()),
        (VSET_REMOVE, Some(v)) => p.value_set_remove(&name, v, mask.as_deref()),
        (VSET_CLEAR, _) => p.value_set_clear(&name),
        _ => Err(lanes_p4::ApiError::Invalid(format!(
            "value set operation {op}: bad arguments"
        ))),
    })
}

/// The members of a value set: (value, mask), big-endian.
#[pyfunction]
fn vset_members(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    name: String,
) -> PyResult<Vec<(Vec<u8>, Vec<u8>)>> {
    with_program(py, &sw, |p| p.value_set_members(&name))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(vset_write, m)?)?;
    m.add_function(wrap_pyfunction!(vset_members, m)?)?;
    Ok(())
}

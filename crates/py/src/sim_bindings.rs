//! Bindings for lanes-sim: a TOML scenario in, the result JSON out.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Run a scenario given as TOML text; returns the result as a JSON string. With `progress`,
/// a status line goes to stderr about once a second. Raises ValueError with one line on a bad
/// scenario.
#[pyfunction]
#[pyo3(signature = (toml_text, progress = false))]
fn simulate_toml(py: Python<'_>, toml_text: &str, progress: bool) -> PyResult<String> {
    let result = py.allow_threads(|| {
        let mut report = |p: lanes_sim::Progress| {
            eprintln!(
                "sim: {:5.1} % of virtual time, {} packet events",
                100.0 * p.fraction,
                p.events
            );
        };
        let cb: Option<&mut dyn FnMut(lanes_sim::Progress)> =
            if progress { Some(&mut report) } else { None };
        lanes_sim::run_toml(toml_text, cb)
    });
    match result {
        Ok(v) => Ok(v.to_string()),
        Err(e) => Err(PyValueError::new_err(e.to_string())),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate_toml, m)?)?;
    Ok(())
}

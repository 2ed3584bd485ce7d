//! `lanes p4c`: the P4-16 compiler (crates/p4c) for the Python CLI.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::path::PathBuf;

/// Compiles `path`; returns (bmv2 JSON, P4Info text). A compile error raises ValueError whose
/// message is the one-line diagnostic `file:line:col: error: ...`.
#[pyfunction]
#[pyo3(signature = (path, include_dirs=Vec::new(), defines=Vec::new()))]
fn p4c_compile(
    py: Python<'_>,
    path: PathBuf,
    include_dirs: Vec<PathBuf>,
    defines: Vec<(String, String)>,
) -> PyResult<(String, String)> {
    let opts = lanes_p4c::Options {
        include_dirs,
        defines,
    };
    py.allow_threads(|| lanes_p4c::compile_file(&path, &opts))
        .map(|o| (o.json, o.p4info))
        .map_err(|d| PyValueError::new_err(d.to_string()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(p4c_compile, m)?)
}

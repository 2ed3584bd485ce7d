//! Bindings for lanes-fabric: paths and JSON strings in, JSON strings out. Long work runs
//! without the GIL.

use lanes_fabric::api;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

fn py_err(e: lanes_fabric::FabricError) -> PyErr {
    PyValueError::new_err(e.0)
}

/// Generates a topology from a JSON spec; writes the netlist when `out` is given. Returns JSON.
#[pyfunction]
#[pyo3(signature = (spec, out=None))]
fn fabric_gen(py: Python<'_>, spec: &str, out: Option<&str>) -> PyResult<String> {
    py.allow_threads(|| api::gen(spec, out)).map_err(py_err)
}

/// Routes a netlist with an engine, writes opensm-lfts.dump to `out`. Returns JSON statistics.
#[pyfunction]
#[pyo3(signature = (net, engine, out, opts="{}"))]
fn fabric_route(
    py: Python<'_>,
    net: &str,
    engine: &str,
    out: &str,
    opts: &str,
) -> PyResult<String> {
    py.allow_threads(|| api::route(net, engine, out, opts))
        .map_err(py_err)
}

/// Deadlock-freedom and completeness check of a dump on a netlist. Returns JSON.
#[pyfunction]
fn fabric_check(py: Python<'_>, net: &str, dump: &str) -> PyResult<String> {
    py.allow_threads(|| api::check_files(net, dump))
        .map_err(py_err)
}

/// Destinations per port, per level and direction. Returns JSON.
#[pyfunction]
fn fabric_balance(py: Python<'_>, net: &str, dump: &str) -> PyResult<String> {
    py.allow_threads(|| api::balance_files(net, dump))
        .map_err(py_err)
}

/// Entries, blocks (SMPs) and switches that differ between two dumps. Returns JSON.
#[pyfunction]
fn fabric_diff(py: Python<'_>, old: &str, new: &str) -> PyResult<String> {
    py.allow_threads(|| api::diff_files(old, new))
        .map_err(py_err)
}

/// Routing quality like ORCS (congestion, effective bandwidth) over seeded runs. Returns JSON.
#[pyfunction]
fn fabric_eval(py: Python<'_>, net: &str, dump: &str, opts: &str) -> PyResult<String> {
    py.allow_threads(|| api::eval_files(net, dump, opts))
        .map_err(py_err)
}

/// Rewrites a netlist with the LIDs ibsim should use (ours or a dump's). Returns JSON.
#[pyfunction]
#[pyo3(signature = (net, out, lids_from=None))]
fn fabric_normalize(
    py: Python<'_>,
    net: &str,
    out: &str,
    lids_from: Option<&str>,
) -> PyResult<String> {
    py.allow_threads(|| api::normalize(net, lids_from, out))
        .map_err(py_err)
}

/// VM migration by LID swap/copy with SMP counts. Returns JSON.
#[pyfunction]
fn fabric_migrate(py: Python<'_>, net: &str, dump: &str, opts: &str) -> PyResult<String> {
    py.allow_threads(|| api::migrate_files(net, dump, opts))
        .map_err(py_err)
}

/// Paper IV node-order study: ftree vs SlimUpdate by node order. Returns JSON.
#[pyfunction]
fn fabric_order_study(py: Python<'_>, net: &str, opts: &str) -> PyResult<String> {
    py.allow_threads(|| api::order_study(net, opts))
        .map_err(py_err)
}

/// Migration simulator (Paper V): sequences of VM moves on a vSwitch fat tree. Returns JSON.
#[pyfunction]
fn fabric_migsim(py: Python<'_>, spec: &str, opts: &str) -> PyResult<String> {
    py.allow_threads(|| api::migsim(spec, opts)).map_err(py_err)
}

/// Paths modified after a first link failure (Paper IV's measure). Returns JSON.
#[pyfunction]
fn fabric_paths_modified(py: Python<'_>, net: &str, opts: &str) -> PyResult<String> {
    py.allow_threads(|| lanes_fabric::workflow::paths_modified_files(net, opts))
        .map_err(py_err)
}

#[pyfunction]
fn fabric_fail(py: Python<'_>, net: &str, opts: &str) -> PyResult<String> {
    py.allow_threads(|| lanes_fabric::workflow::fail_files(net, opts))
        .map_err(py_err)
}

#[pyfunction]
fn fabric_phases(py: Python<'_>, net: &str, old: &str, new: &str, dir: &str) -> PyResult<String> {
    py.allow_threads(|| lanes_fabric::workflow::phases_files(net, old, new, dir))
        .map_err(py_err)
}

#[pyfunction]
fn fabric_guid_files(py: Python<'_>, net: &str, dir: &str, io: Vec<String>) -> PyResult<String> {
    py.allow_threads(|| lanes_fabric::workflow::guid_files(net, dir, &io))
        .map_err(py_err)
}

#[pyfunction]
#[pyo3(signature = (net, topology=None, order=None))]
fn fabric_slurm(
    py: Python<'_>,
    net: &str,
    topology: Option<&str>,
    order: Option<&str>,
) -> PyResult<String> {
    py.allow_threads(|| lanes_fabric::workflow::slurm_files(net, topology, order))
        .map_err(py_err)
}

#[pyfunction]
fn fabric_sa_storm(opts: &str) -> PyResult<String> {
    lanes_fabric::workflow::sa_storm(opts).map_err(py_err)
}

#[pyfunction]
#[pyo3(signature = (net, dump, path_sl, sl2vl, sl2vl_dump=None))]
fn fabric_check_vl(
    py: Python<'_>,
    net: &str,
    dump: &str,
    path_sl: &str,
    sl2vl: Vec<u8>,
    sl2vl_dump: Option<&str>,
) -> PyResult<String> {
    py.allow_threads(|| {
        lanes_fabric::workflow::check_vl_files(net, dump, path_sl, &sl2vl, sl2vl_dump)
    })
    .map_err(py_err)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fabric_check_vl, m)?)?;
    m.add_function(wrap_pyfunction!(fabric_sa_storm, m)?)?;
    m.add_function(wrap_pyfunction!(fabric_fail, m)?)?;
    m.add_function(wrap_pyfunction!(fabric_paths_modified, m)?)?;
    m.add_function(wrap_pyfunction!(fabric_phases, m)?)?;
    m.add_function(wrap_pyfunction!(fabric_guid_files, m)?)?;
    m.add_function(wrap_pyfunction!(fabric_slurm, m)?)?;
    m.add_function(wrap_pyfunction!(fabric_gen, m)?)?;
    m.add_function(wrap_pyfunction!(fabric_route, m)?)?;
    m.add_function(wrap_pyfunction!(fabric_check, m)?)?;
    m.add_function(wrap_pyfunction!(fabric_balance, m)?)?;
    m.add_function(wrap_pyfunction!(fabric_diff, m)?)?;
    m.add_function(wrap_pyfunction!(fabric_eval, m)?)?;
    m.add_function(wrap_pyfunction!(fabric_normalize, m)?)?;
    m.add_function(wrap_pyfunction!(fabric_migrate, m)?)?;
    m.add_function(wrap_pyfunction!(fabric_order_study, m)?)?;
    m.add_function(wrap_pyfunction!(fabric_migsim, m)?)?;
    Ok(())
}

//! bmv2's SimplePre service on the switch's packet replication engine: groups (named by their
//! id, which is also their handle, as in bmv2), nodes (a rid and ports, by handle) and the
//! association of the two. Ids come as Thrift's signed integers; errors are
//! `BmError(McOperationErrorCode, message)` (crate::thrift_errors).

use lanes_switch::pre::PreError;
use lanes_switch::Dataplane;
use pyo3::prelude::*;

use crate::switch_bindings::PySwitch;
use crate::thrift_errors::{
    bm_err, mc_err, MC_ERROR, MC_INVALID_L1_HANDLE, MC_INVALID_MGID, MC_INVALID_MGRP_HANDLE,
};

/// A group id, node handle or rid from Thrift as the engine's; a negative one is refused with
/// the code bmv2 gives an unknown one of its kind.
fn id(v: i64, what: &str, code: i32) -> PyResult<u32> {
    u32::try_from(v).map_err(|_| bm_err(code, format!("{what} {v} is negative")))
}

fn group(v: i64) -> PyResult<u32> {
    id(v, "multicast group", MC_INVALID_MGRP_HANDLE)
}

fn node(v: i64) -> PyResult<u32> {
    id(v, "multicast node", MC_INVALID_L1_HANDLE)
}

fn on_pre<R: Send>(
    py: Python<'_>,
    sw: &PySwitch,
    f: impl FnOnce(&mut Dataplane) -> Result<R, PreError> + Send,
) -> PyResult<R> {
    py.allow_threads(|| sw.inner.with(f)).map_err(mc_err)
}

/// Create group `mgid` (1 to 65535); its handle (= `mgid`).
#[pyfunction]
fn bm_mc_mgrp_create(py: Python<'_>, sw: PyRef<'_, PySwitch>, mgid: i64) -> PyResult<u32> {
    let mgid = id(mgid, "multicast group", MC_INVALID_MGID)?;
    on_pre(py, &sw, |dp| dp.pre.mgrp_create(mgid))
}

/// Destroy group `mgid`; its nodes stay, no longer associated.
#[pyfunction]
fn bm_mc_mgrp_destroy(py: Python<'_>, sw: PyRef<'_, PySwitch>, mgid: i64) -> PyResult<()> {
    let mgid = group(mgid)?;
    on_pre(py, &sw, |dp| dp.pre.mgrp_destroy(mgid))
}

/// A node of replication id `rid` sending to `ports`; its handle.
#[pyfunction]
fn bm_mc_node_create(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    rid: i64,
    ports: Vec<u32>,
) -> PyResult<u32> {
    let rid = id(rid, "rid", MC_ERROR)?;
    on_pre(py, &sw, |dp| dp.pre.node_create(rid, &ports))
}

/// The node with this handle now sends to `ports` (its rid and group stay).
#[pyfunction]
fn bm_mc_node_update(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    handle: i64,
    ports: Vec<u32>,
) -> PyResult<()> {
    let handle = node(handle)?;
    on_pre(py, &sw, |dp| dp.pre.node_update(handle, &ports))
}

/// Add a node to group `mgid` (a node is in one group at most).
#[pyfunction]
fn bm_mc_node_associate(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    mgid: i64,
    handle: i64,
) -> PyResult<()> {
    let (mgid, handle) = (group(mgid)?, node(handle)?);
    on_pre(py, &sw, |dp| dp.pre.node_associate(mgid, handle))
}

/// Take a node out of group `mgid`.
#[pyfunction]
fn bm_mc_node_dissociate(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    mgid: i64,
    handle: i64,
) -> PyResult<()> {
    let (mgid, handle) = (group(mgid)?, node(handle)?);
    on_pre(py, &sw, |dp| dp.pre.node_dissociate(mgid, handle))
}

/// Destroy a node (out of its group first).
#[pyfunction]
fn bm_mc_node_destroy(py: Python<'_>, sw: PyRef<'_, PySwitch>, handle: i64) -> PyResult<()> {
    let handle = node(handle)?;
    on_pre(py, &sw, |dp| dp.pre.node_destroy(handle))
}

/// Groups and nodes at this moment.
type McEntries = (Vec<(u32, Vec<u32>)>, Vec<(u32, u16, Vec<u32>)>);

/// The engine's state: groups as (mgid, node handles in association order) by id, nodes as
/// (handle, rid, ports sorted) by handle.
#[pyfunction]
fn bm_mc_entries(py: Python<'_>, sw: PyRef<'_, PySwitch>) -> McEntries {
    let sw: &PySwitch = &sw;
    py.allow_threads(|| {
        sw.inner.with(|dp| {
            let groups = dp.pre.groups().map(|(m, n)| (m, n.to_vec())).collect();
            let nodes = dp.pre.nodes().map(|(h, n)| (h, n.rid, n.ports.clone()));
            (groups, nodes.collect())
        })
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(bm_mc_mgrp_create, m)?)?;
    m.add_function(wrap_pyfunction!(bm_mc_mgrp_destroy, m)?)?;
    m.add_function(wrap_pyfunction!(bm_mc_node_create, m)?)?;
    m.add_function(wrap_pyfunction!(bm_mc_node_update, m)?)?;
    m.add_function(wrap_pyfunction!(bm_mc_node_associate, m)?)?;
    m.add_function(wrap_pyfunction!(bm_mc_node_dissociate, m)?)?;
    m.add_function(wrap_pyfunction!(bm_mc_node_destroy, m)?)?;
    m.add_function(wrap_pyfunction!(bm_mc_entries, m)?)?;
    Ok(())
}

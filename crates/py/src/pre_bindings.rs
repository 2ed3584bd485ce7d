//! P4Runtime's packet replication engine entries on a running switch: clone sessions (the
//! switch's mirror sessions) and multicast groups (its replication engine). Ops: OP_INSERT,
//! OP_MODIFY, OP_DELETE (crate::codes); errors carry the gRPC status code P4Runtime asks for.

use lanes_switch::EntryOp;
use pyo3::prelude::*;

use crate::codes::{OP_DELETE, OP_INSERT, OP_MODIFY};
use crate::p4rt_bindings::{py_err, INVALID_ARGUMENT};
use crate::switch_bindings::PySwitch;

/// A clone session write (P4Runtime PacketReplicationEngineEntry.clone_session_entry):
/// op insert, modify or delete; `truncate` 0 means whole packets. The rules (exists, range,
/// port) are the switch's (`Dataplane::mirror_write`), each error with its gRPC code.
#[pyfunction]
fn p4rt_clone_session_write(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    op: u8,
    session: u32,
    port: u32,
    truncate: u32,
) -> PyResult<()> {
    let op = entry_op(op)?;
    let sw: &PySwitch = &sw;
    let m = lanes_switch::MirrorSession {
        port: Some(port),
        mgid: None,
        truncate: Some(truncate),
    };
    py.allow_threads(|| sw.inner.with(|dp| dp.mirror_write(op, session, m)))
        .map_err(|e| py_err(e.grpc_code(), e.about_session(session)))
}

/// Every clone session: (session, port, truncation length or 0).
#[pyfunction]
fn p4rt_clone_sessions(py: Python<'_>, sw: PyRef<'_, PySwitch>) -> Vec<(u32, u32, u32)> {
    let sw: &PySwitch = &sw;
    py.allow_threads(|| {
        sw.inner.with(|dp| {
            // sessions to a multicast group only have no P4Runtime form with one replica
            dp.mirrors()
                .filter_map(|(s, m)| Some((s, m.port?, m.truncate.unwrap_or(0))))
                .collect()
        })
    })
}

/// Remove every clone session (a new pipeline starts with none).
#[pyfunction]
fn p4rt_clone_sessions_clear(py: Python<'_>, sw: PyRef<'_, PySwitch>) {
    let sw: &PySwitch = &sw;
    py.allow_threads(|| sw.inner.with(|dp| dp.mirror_clear()));
}

/// A multicast group write (PacketReplicationEngineEntry.multicast_group_entry): `replicas` are
/// (egress port, instance = rid). The rules (id range, a replica given twice, exists, rid and
/// port ranges) are the engine's (`Pre::group_write`), each error with its gRPC code.
#[pyfunction]
fn p4rt_multicast_group_write(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    op: u8,
    mgid: u32,
    replicas: Vec<(u32, u32)>,
) -> PyResult<()> {
    let op = entry_op(op)?;
    let sw: &PySwitch = &sw;
    py.allow_threads(|| sw.inner.with(|dp| dp.pre.group_write(op, mgid, &replicas)))
        .map_err(|e| py_err(e.grpc_code(), e.about_group(mgid)))
}

/// crate::codes' update type as the switch's.
fn entry_op(op: u8) -> PyResult<EntryOp> {
    match op {
        OP_INSERT => Ok(EntryOp::Insert),
        OP_MODIFY => Ok(EntryOp::Modify),
        OP_DELETE => Ok(EntryOp::Delete),
        _ => Err(py_err(
            INVALID_ARGUMENT,
            format!("unknown update type {op}"),
        )),
    }
}

/// Every multicast group: (group id, its (port, rid) replicas sorted).
#[pyfunction]
fn p4rt_multicast_groups(py: Python<'_>, sw: PyRef<'_, PySwitch>) -> Vec<(u32, Vec<(u32, u32)>)> {
    let sw: &PySwitch = &sw;
    py.allow_threads(|| {
        sw.inner.with(|dp| {
            dp.pre
                .groups()
                .map(|(m, _)| {
                    let reps = dp.pre.replicas(m).iter();
                    (m, reps.map(|(p, r)| (*p, u32::from(*r))).collect())
                })
                .collect()
        })
    })
}

/// Remove every multicast group and node (a new pipeline starts with none).
#[pyfunction]
fn p4rt_multicast_clear(py: Python<'_>, sw: PyRef<'_, PySwitch>) {
    let sw: &PySwitch = &sw;
    py.allow_threads(|| sw.inner.with(|dp| dp.pre.clear()));
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(p4rt_clone_session_write, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_clone_sessions, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_clone_sessions_clear, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_multicast_group_write, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_multicast_groups, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_multicast_clear, m)?)?;
    Ok(())
}

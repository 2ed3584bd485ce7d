//! P4Runtime's packet replication engine entries on a running switch: clone sessions (the
//! switch's mirror sessions) and multicast groups (its replication engine). Ops: OP_INSERT,
//! OP_MODIFY, OP_DELETE (crate::codes); errors carry the gRPC status code P4Runtime asks for.

use pyo3::prelude::*;

use crate::codes::{OP_DELETE, OP_INSERT, OP_MODIFY};
use crate::p4rt_bindings::{py_err, ALREADY_EXISTS, INVALID_ARGUMENT, NOT_FOUND};
use crate::switch_bindings::PySwitch;

/// A clone session write (P4Runtime PacketReplicationEngineEntry.clone_session_entry):
/// op insert, modify or delete; `truncate` 0 means whole packets. ALREADY_EXISTS,
/// NOT_FOUND or INVALID_ARGUMENT (session out of range, no such port) as P4Runtime asks.
#[pyfunction]
fn p4rt_clone_session_write(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    op: u8,
    session: u32,
    port: u32,
    truncate: u32,
) -> PyResult<()> {
    let sw: &PySwitch = &sw;
    py.allow_threads(|| {
        sw.inner.with(|dp| {
            let exists = dp.mirror(session).is_some();
            match op {
                OP_INSERT if exists => {
                    Err((ALREADY_EXISTS, format!("clone session {session} exists")))
                }
                OP_MODIFY | OP_DELETE if !exists => {
                    Err((NOT_FOUND, format!("no clone session {session}")))
                }
                OP_DELETE => dp
                    .mirror_delete(session)
                    .map_err(|e| (e.grpc_code(), e.to_string())),
                OP_INSERT | OP_MODIFY => dp
                    .mirror_add(
                        session,
                        lanes_switch::MirrorSession {
                            port: Some(port),
                            mgid: None,
                            truncate: Some(truncate),
                        },
                    )
                    .map_err(|e| (e.grpc_code(), format!("clone session {session}: {e}"))),
                _ => Err((INVALID_ARGUMENT, format!("unknown update type {op}"))),
            }
        })
    })
    .map_err(|(code, msg)| py_err(code, msg))
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
/// (egress port, instance = rid). ALREADY_EXISTS / NOT_FOUND for INSERT of a group that exists
/// and MODIFY or DELETE of one that does not; INVALID_ARGUMENT for a group id of 0 or over
/// 65535, a replica given twice, a rid over 65535 or a port over 510.
#[pyfunction]
fn p4rt_multicast_group_write(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    op: u8,
    mgid: u32,
    replicas: Vec<(u32, u32)>,
) -> PyResult<()> {
    let sw: &PySwitch = &sw;
    py.allow_threads(|| {
        sw.inner.with(|dp| {
            if mgid == 0 || mgid > lanes_switch::pre::MAX_MGID {
                return Err((
                    INVALID_ARGUMENT,
                    format!("multicast group id {mgid} out of range (1-65535)"),
                ));
            }
            let mut seen = replicas.clone();
            seen.sort_unstable();
            if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
                return Err((
                    INVALID_ARGUMENT,
                    format!(
                        "multicast group {mgid}: replica (port {}, instance {}) given twice",
                        w[0].0, w[0].1
                    ),
                ));
            }
            let exists = dp.pre.has_group(mgid);
            let bad = |m: lanes_switch::pre::PreError| {
                (m.grpc_code(), format!("multicast group {mgid}: {m}"))
            };
            match op {
                OP_INSERT if exists => {
                    Err((ALREADY_EXISTS, format!("multicast group {mgid} exists")))
                }
                OP_MODIFY | OP_DELETE if !exists => {
                    Err((NOT_FOUND, format!("no multicast group {mgid}")))
                }
                OP_INSERT | OP_MODIFY => dp
                    .pre
                    .group_set(mgid, &replicas, op == OP_INSERT)
                    .map_err(bad),
                OP_DELETE => dp.pre.group_delete(mgid).map_err(bad),
                _ => Err((INVALID_ARGUMENT, format!("unknown update type {op}"))),
            }
        })
    })
    .map_err(|(code, msg)| py_err(code, msg))
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

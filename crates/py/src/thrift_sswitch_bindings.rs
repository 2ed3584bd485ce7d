//! bmv2's SimpleSwitch service on the switch: mirror sessions (a port, a multicast group, or
//! both) and egress queue depths and rates in bmv2's units. Session ids come as Thrift's signed
//! integers; mirror errors are `BmError(SESSION_NOT_FOUND, message)` (bmv2 has no other code),
//! queue errors ValueError (bmv2's calls answer them with a status of 1).

use lanes_switch::{Dataplane, MirrorSession, MAX_MIRROR_SESSION};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::switch_bindings::PySwitch;
use crate::thrift_errors::{bm_err, MIRROR_SESSION_NOT_FOUND};

/// A mirror session as the switch holds it.
#[pyclass(name = "MirrorSession", frozen)]
pub(crate) struct PyMirrorSession {
    /// The egress port of the copies, if any.
    #[pyo3(get)]
    port: Option<u32>,
    /// The multicast group the copies are replicated to, if any.
    #[pyo3(get)]
    mgid: Option<u32>,
    /// Bytes a copy is cut to (None: whole packets).
    #[pyo3(get)]
    truncate: Option<u32>,
}

fn session_id(session: i64) -> PyResult<u32> {
    u32::try_from(session)
        .ok()
        .filter(|s| *s <= MAX_MIRROR_SESSION)
        .ok_or_else(|| {
            let range = format!("0-{MAX_MIRROR_SESSION}");
            bm_err(
                MIRROR_SESSION_NOT_FOUND,
                format!("mirror session {session} out of range ({range})"),
            )
        })
}

fn non_negative(v: Option<i64>, what: &str) -> PyResult<Option<u32>> {
    v.map(|n| {
        u32::try_from(n)
            .map_err(|_| bm_err(MIRROR_SESSION_NOT_FOUND, format!("{what} {n} is negative")))
    })
    .transpose()
}

/// Session `session` now sends its copies to `port`, to every (port, rid) of group `mgid`, or
/// both, whole (what it had before is replaced). At least one of the two must be given.
#[pyfunction]
#[pyo3(signature = (sw, session, port, mgid))]
fn bm_mirror_session_set(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    session: i64,
    port: Option<i64>,
    mgid: Option<i64>,
) -> PyResult<()> {
    let session = session_id(session)?;
    let m = MirrorSession {
        port: non_negative(port, "port")?,
        mgid: non_negative(mgid, "multicast group")?,
        truncate: None,
    };
    on_dataplane(py, &sw, |dp| dp.mirror_add(session, m))
        .map_err(|e| bm_err(MIRROR_SESSION_NOT_FOUND, e))
}

/// Session `session`, or None if it is not configured.
#[pyfunction]
fn bm_mirror_session(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    session: i64,
) -> PyResult<Option<PyMirrorSession>> {
    let Ok(session) = u32::try_from(session) else {
        return Ok(None);
    };
    let m = on_dataplane(py, &sw, |dp| dp.mirror(session));
    Ok(m.map(|m| PyMirrorSession {
        port: m.port,
        mgid: m.mgid,
        truncate: m.truncate,
    }))
}

/// Remove session `session`.
#[pyfunction]
fn bm_mirror_session_delete(py: Python<'_>, sw: PyRef<'_, PySwitch>, session: i64) -> PyResult<()> {
    let session = session_id(session)?;
    on_dataplane(py, &sw, |dp| dp.mirror_delete(session))
        .map_err(|e| bm_err(MIRROR_SESSION_NOT_FOUND, e))
}

/// Run `f` on the data plane without the GIL.
fn on_dataplane<R: Send>(
    py: Python<'_>,
    sw: &PySwitch,
    f: impl FnOnce(&mut Dataplane) -> R + Send,
) -> R {
    py.allow_threads(|| sw.inner.with(f))
}

fn port_arg(port: Option<i64>) -> PyResult<Option<u32>> {
    port.map(|p| u32::try_from(p).map_err(|_| PyValueError::new_err(format!("no port {p}"))))
        .transpose()
}

/// Every queue of `port` (None: of every port) holds `depth_pkts` packets (at least 1).
#[pyfunction]
#[pyo3(signature = (sw, port, depth_pkts))]
fn bm_set_queue_depth(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    port: Option<i64>,
    depth_pkts: i64,
) -> PyResult<()> {
    let port = port_arg(port)?;
    let depth = u32::try_from(depth_pkts).map_err(|_| {
        PyValueError::new_err(format!(
            "queue depth {depth_pkts} is not a number of packets"
        ))
    })?;
    on_dataplane(py, &sw, |dp| dp.set_queue_depth(port, depth))
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Every queue of `port` (None: of every port) is limited to `rate_pps` packets per second
/// (of 1500-byte frames, as bmv2 counts them).
#[pyfunction]
#[pyo3(signature = (sw, port, rate_pps))]
fn bm_set_queue_rate(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    port: Option<i64>,
    rate_pps: i64,
) -> PyResult<()> {
    let port = port_arg(port)?;
    let pps = rate_pps as f64;
    on_dataplane(py, &sw, |dp| dp.set_queue_rate_pps(port, pps))
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyMirrorSession>()?;
    m.add_function(wrap_pyfunction!(bm_mirror_session_set, m)?)?;
    m.add_function(wrap_pyfunction!(bm_mirror_session, m)?)?;
    m.add_function(wrap_pyfunction!(bm_mirror_session_delete, m)?)?;
    m.add_function(wrap_pyfunction!(bm_set_queue_depth, m)?)?;
    m.add_function(wrap_pyfunction!(bm_set_queue_rate, m)?)?;
    Ok(())
}

//! `BmError(code, message)`: what the bindings for bmv2's Thrift services raise, `code` being the
//! service's own error code from bmv2's IDL (the numbers are the wire protocol, fixed there), so
//! the Thrift handlers raise bmv2's exception with it and never read the message. Each Rust error
//! is mapped here by an exhaustive match: a new kind of refusal cannot go without a code.

use lanes_switch::pre::PreError;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(_native, BmError, PyException);

/// bmv2's `McOperationErrorCode` (simple_pre_lag.thrift).
pub(crate) const MC_TABLE_FULL: i32 = 1;
pub(crate) const MC_INVALID_MGID: i32 = 2;
pub(crate) const MC_INVALID_MGRP_HANDLE: i32 = 3;
pub(crate) const MC_INVALID_L1_HANDLE: i32 = 4;
pub(crate) const MC_ERROR: i32 = 5;

/// bmv2's `MirroringOperationErrorCode` (simple_switch.thrift) has this one code.
pub(crate) const MIRROR_SESSION_NOT_FOUND: i32 = 1;

pub(crate) fn bm_err(code: i32, msg: impl Into<String>) -> PyErr {
    BmError::new_err((code, msg.into()))
}

/// The code bmv2's simple_pre answers for the same refusal. A node associated twice or
/// dissociated from a group it is not in is bmv2's plain ERROR; a group created twice, which
/// bmv2 lets through, is refused here as an invalid group id.
pub(crate) fn mc_code(e: &PreError) -> i32 {
    match e {
        PreError::MgidOutOfRange(_) | PreError::GroupExists(_) => MC_INVALID_MGID,
        PreError::NoGroup(_) => MC_INVALID_MGRP_HANDLE,
        PreError::NoNode(_) => MC_INVALID_L1_HANDLE,
        PreError::Full { .. } => MC_TABLE_FULL,
        PreError::NodeInGroup { .. }
        | PreError::NodeNotInGroup { .. }
        | PreError::RidOutOfRange(_)
        | PreError::PortOutOfRange(_) => MC_ERROR,
    }
}

pub(crate) fn mc_err(e: PreError) -> PyErr {
    bm_err(mc_code(&e), e.to_string())
}

const CODES: [(&str, i32); 6] = [
    ("MC_TABLE_FULL", MC_TABLE_FULL),
    ("MC_INVALID_MGID", MC_INVALID_MGID),
    ("MC_INVALID_MGRP_HANDLE", MC_INVALID_MGRP_HANDLE),
    ("MC_INVALID_L1_HANDLE", MC_INVALID_L1_HANDLE),
    ("MC_ERROR", MC_ERROR),
    ("MIRROR_SESSION_NOT_FOUND", MIRROR_SESSION_NOT_FOUND),
];

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("BmError", m.py().get_type::<BmError>())?;
    for (name, code) in CODES {
        m.add(name, code)?;
    }
    Ok(())
}

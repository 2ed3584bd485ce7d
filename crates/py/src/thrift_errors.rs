//! `BmError(code, message)`: what the bindings for bmv2's Thrift services raise, `code` being the
//! service's own error code from bmv2's IDL (the numbers are the wire protocol, fixed there), so
//! the Thrift handlers raise bmv2's exception with it and never read the message. Each Rust error
//! maps itself to its codes beside its definition (`ApiError::thrift_code`,
//! `PreError::thrift_code`), by an exhaustive match: a new kind of refusal cannot go without one.

use lanes_switch::pre::PreError;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(_native, BmError, PyException);

/// bmv2's `McOperationErrorCode`, defined beside the engine's errors (lanes_switch::pre).
pub(crate) use lanes_switch::pre::mc_code::{
    ERROR as MC_ERROR, INVALID_L1_HANDLE as MC_INVALID_L1_HANDLE, INVALID_MGID as MC_INVALID_MGID,
    INVALID_MGRP_HANDLE as MC_INVALID_MGRP_HANDLE, TABLE_FULL as MC_TABLE_FULL,
};

pub(crate) use lanes_switch::THRIFT_SESSION_NOT_FOUND as MIRROR_SESSION_NOT_FOUND;

pub(crate) fn bm_err(code: i32, msg: impl Into<String>) -> PyErr {
    BmError::new_err((code, msg.into()))
}

pub(crate) fn mc_err(e: PreError) -> PyErr {
    bm_err(e.thrift_code(), e.to_string())
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

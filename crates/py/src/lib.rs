//! `lanes._native`: the one extension module. Each part registers its functions from its own
//! file so the parts can grow without touching each other.

use pyo3::prelude::*;

mod codes;
mod consolidate_bindings;
mod entry_read;
mod fabric_bindings;
mod idle_bindings;
mod p4c_bindings;
mod p4rt_bindings;
mod pre_bindings;
mod profile_bindings;
mod sim_bindings;
mod switch_bindings;
mod switch_handle;
mod table_write_bindings;
mod thrift_bindings;
mod thrift_errors;
mod thrift_pre_bindings;
mod thrift_sswitch_bindings;
mod vset_bindings;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    codes::register(m)?;
    entry_read::register(m)?;
    sim_bindings::register(m)?;
    switch_bindings::register(m)?;
    fabric_bindings::register(m)?;
    idle_bindings::register(m)?;
    p4rt_bindings::register(m)?;
    pre_bindings::register(m)?;
    profile_bindings::register(m)?;
    consolidate_bindings::register(m)?;
    thrift_bindings::register(m)?;
    thrift_errors::register(m)?;
    thrift_pre_bindings::register(m)?;
    thrift_sswitch_bindings::register(m)?;
    table_write_bindings::register(m)?;
    vset_bindings::register(m)?;
    p4c_bindings::register(m)?;
    Ok(())
}

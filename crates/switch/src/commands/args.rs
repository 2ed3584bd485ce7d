//! What every command family needs: numbers from the command line, the loaded program and its
//! names, and hex for answers. Kept apart from the dispatcher so the families never import it.

use std::fmt::Write;
use std::sync::Arc;

use lanes_p4::p4info::{P4Names, TableInfo};
use lanes_p4::Program;

use crate::dataplane::Dataplane;

pub(crate) fn program(dp: &mut Dataplane) -> Result<&mut Program, String> {
    dp.program_mut()
        .ok_or_else(|| "no P4 program loaded".to_string())
}

/// The loaded program's names (built once per program, not per command).
pub(crate) fn names(dp: &Dataplane) -> Result<Arc<P4Names>, String> {
    dp.names().ok_or_else(|| "no P4 program loaded".to_string())
}

pub(crate) fn find_table(names: &P4Names, name: &str) -> Result<TableInfo, String> {
    lanes_p4::names::resolve(names.tables.iter().map(|t| t.name.as_str()), name)
        .map(|i| names.tables[i].clone())
        .ok_or_else(|| format!("no table named '{name}' (or the name is ambiguous)"))
}

pub(crate) fn num(s: &str) -> Result<u64, String> {
    let r = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|_| format!("'{s}' is not a number"))
}

/// A number that names a handle, port or length: it must fit 32 bits (never taken modulo 2^32,
/// which would make `table_delete T 4294967296` delete handle 0).
pub(crate) fn num_u32(s: &str) -> Result<u32, String> {
    u32::try_from(num(s)?).map_err(|_| format!("'{s}' is out of range (0-{})", u32::MAX))
}

pub(crate) fn hex(b: &[u8]) -> String {
    let mut s = String::from("0x");
    for x in b {
        let _ = write!(s, "{x:02x}");
    }
    s
}

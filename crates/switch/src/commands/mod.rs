//! simple_switch_CLI-style commands on a running data plane: tables, counters, registers,
//! mirror sessions, multicast, action profiles and the traffic manager, one module per family.
//! One command per line; the answer is text, an error is one line. Used by `--commands FILE` at
//! start-up and by `lanes ctl`.

use std::fmt::Write;
use std::sync::Arc;

use lanes_p4::p4info::{P4Names, TableInfo};
use lanes_p4::Program;

use crate::dataplane::Dataplane;

type R = Result<String, String>;

/// The command families, each answering None to a command that is not its own.
type Family = fn(&mut Dataplane, &str, &[&str]) -> Option<R>;
const FAMILIES: [(Family, &str); 6] = [
    (crate::table_commands::execute, crate::table_commands::HELP),
    (
        crate::extern_commands::execute,
        crate::extern_commands::HELP,
    ),
    (crate::tm_commands::execute, crate::tm_commands::HELP),
    (
        crate::mirror_commands::execute,
        crate::mirror_commands::HELP,
    ),
    (crate::pre_commands::execute, crate::pre_commands::HELP),
    (
        crate::profile_commands::execute,
        crate::profile_commands::HELP,
    ),
];

/// Run one command line on the data plane: its text answer, or a one-line error.
pub fn execute(dp: &mut Dataplane, line: &str) -> R {
    let line = line.split('#').next().unwrap_or("").trim();
    let words: Vec<&str> = line.split_whitespace().collect();
    let Some((&cmd, args)) = words.split_first() else {
        return Ok(String::new());
    };
    if cmd == "help" {
        let all: Vec<&str> = FAMILIES.iter().map(|(_, help)| *help).collect();
        return Ok(all.join(" | "));
    }
    FAMILIES
        .iter()
        .find_map(|(family, _)| family(dp, cmd, args))
        .unwrap_or_else(|| Err(format!("unknown command '{cmd}' (try 'help')")))
}

pub use crate::table_commands::parse_value;
pub use crate::tm_commands::parse_rate_bps;

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

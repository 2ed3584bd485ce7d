//! simple_switch_CLI-style commands on a running data plane: tables, counters, registers,
//! mirror sessions, multicast, action profiles and the traffic manager, one module per family.
//! One command per line; the answer is text, an error is one line. Used by `--commands FILE` at
//! start-up and by `lanes ctl`.

mod args;
mod externs;
mod mirror;
mod pre;
mod profile;
mod stats;
mod table;
mod tm;

use crate::dataplane::Dataplane;

type R = Result<String, String>;

/// The command families, each answering None to a command that is not its own.
type Family = fn(&mut Dataplane, &str, &[&str]) -> Option<R>;
const FAMILIES: [(Family, &str); 7] = [
    (table::execute, table::HELP),
    (externs::execute, externs::HELP),
    (tm::execute, tm::HELP),
    (mirror::execute, mirror::HELP),
    (pre::execute, pre::HELP),
    (profile::execute, profile::HELP),
    (stats::execute, stats::HELP),
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

pub use stats::{stats, DelayStats, PortStats, QueueStats, SwitchStats};
pub use table::parse_value;
pub use tm::parse_rate_bps;

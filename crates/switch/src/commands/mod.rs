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

/// What a command answers: the text simple_switch_CLI prints, and the handle of the entry,
/// member, group or node the command created, so a client that is a program (the lab) takes
/// the number as a number instead of reading it back from the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// What simple_switch_CLI would print.
    pub text: String,
    /// The entry, member, group or node created; None if the command created nothing.
    pub handle: Option<u32>,
}

impl Answer {
    pub(crate) fn created(handle: u32, text: String) -> Self {
        Answer {
            text,
            handle: Some(handle),
        }
    }
}

impl From<String> for Answer {
    fn from(text: String) -> Self {
        Answer { text, handle: None }
    }
}

type AnswerR = Result<Answer, String>;

/// The command families, each answering None to a command that is not its own. The families
/// that create nothing answer text.
type Family = fn(&mut Dataplane, &str, &[&str]) -> Option<AnswerR>;
const FAMILIES: [(Family, &str); 7] = [
    (table::execute, table::HELP),
    (
        |dp, cmd, args| text(externs::execute(dp, cmd, args)),
        externs::HELP,
    ),
    (|dp, cmd, args| text(tm::execute(dp, cmd, args)), tm::HELP),
    (
        |dp, cmd, args| text(mirror::execute(dp, cmd, args)),
        mirror::HELP,
    ),
    (pre::execute, pre::HELP),
    (profile::execute, profile::HELP),
    (
        |dp, cmd, args| text(stats::execute(dp, cmd, args)),
        stats::HELP,
    ),
];

fn text(r: Option<R>) -> Option<AnswerR> {
    r.map(|r| r.map(Answer::from))
}

/// Run one command line on the data plane: its text answer, or a one-line error.
pub fn execute(dp: &mut Dataplane, line: &str) -> R {
    answer(dp, line).map(|a| a.text)
}

/// Run one command line on the data plane: its answer with the handle of what it created, or a
/// one-line error.
pub fn answer(dp: &mut Dataplane, line: &str) -> AnswerR {
    let line = line.split('#').next().unwrap_or("").trim();
    let words: Vec<&str> = line.split_whitespace().collect();
    let Some((&cmd, args)) = words.split_first() else {
        return Ok(Answer::from(String::new()));
    };
    if cmd == "help" {
        let all: Vec<&str> = FAMILIES.iter().map(|(_, help)| *help).collect();
        return Ok(Answer::from(all.join(" | ")));
    }
    FAMILIES
        .iter()
        .find_map(|(family, _)| family(dp, cmd, args))
        .unwrap_or_else(|| Err(format!("unknown command '{cmd}' (try 'help')")))
}

pub use stats::{stats, DelayStats, PortStats, QueueStats, SwitchStats};
pub use table::parse_value;
pub use tm::parse_rate_bps;

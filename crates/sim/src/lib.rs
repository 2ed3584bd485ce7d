//! Deterministic discrete-event simulator of switch egress ports fed by traffic sources,
//! running lanes-tm in virtual time. Same seed, same scenario: same result, bit for bit.

#![forbid(unsafe_code)]

mod engine;
mod histogram;
mod report;
mod rng;
mod scenario;
mod source;

pub use engine::{simulate, Progress, SimOutput};
pub use histogram::Histogram;
pub use scenario::{Scenario, ScenarioError};

/// Parse, validate and run a TOML scenario; the result as the JSON document `lanes sim` writes.
pub fn run_toml(
    text: &str,
    progress: Option<&mut dyn FnMut(Progress)>,
) -> Result<serde_json::Value, ScenarioError> {
    let scenario = Scenario::from_toml(text)?;
    let out = simulate(&scenario, progress)?;
    Ok(report::to_json(&scenario, &out))
}

//! Engine selection by name.

use serde_json::Value;

use crate::bail;
use crate::error::Result;
use crate::ftree::{self, Stats};
use crate::lft::Lfts;
use crate::model::Fabric;
use crate::topo::Topo;

pub const ENGINES: &[&str] = &["ftree"];

pub fn run(f: &Fabric, t: &Topo, engine: &str, _opts: &Value) -> Result<(Lfts, Stats)> {
    match engine {
        "ftree" => ftree::route_slots(f, t, &ftree::port_order_slots(t), "ftree"),
        _ => bail!(
            "unknown engine {engine:?} (available: {})",
            ENGINES.join(", ")
        ),
    }
}

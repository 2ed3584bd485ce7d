//! Engine selection by name. Every engine yields up*/down* routes on fat trees; `api::route`
//! runs the deadlock check (up/down walk and channel-dependency-graph acyclicity) on the result.

use serde_json::Value;

use crate::bail;
use crate::error::{err, Result};
use crate::ftree::{self, Stats};
use crate::lft::Lfts;
use crate::metabase::Metabase;
use crate::model::Fabric;
use crate::order::{noftree_slots, positions, sorted_slots};
use crate::topo::Topo;
use crate::{api, slimupdate, subtree, vswitch};

pub const ENGINES: &[&str] = &[
    "ftree",
    "noftree",
    "mfattree",
    "slimupdate",
    "vswitch-ftree",
];

fn order(f: &Fabric, t: &Topo, opts: &Value) -> Result<Option<Vec<usize>>> {
    match opts.get("order") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => {
            let names: Vec<String> = a
                .iter()
                .map(|x| x.as_str().unwrap_or("").to_string())
                .collect();
            Ok(Some(positions(f, t, &names)?))
        }
        Some(_) => bail!("order: expected a list of node names"),
    }
}

fn names(opts: &Value, key: &str) -> Result<Option<Vec<String>>> {
    match opts.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => Ok(Some(
            a.iter()
                .map(|x| x.as_str().unwrap_or("").to_string())
                .collect(),
        )),
        Some(_) => bail!("{key}: expected a list of node names"),
    }
}

pub fn run(f: &Fabric, t: &Topo, engine: &str, opts: &Value) -> Result<(Lfts, Stats)> {
    if let Some(tenant) = names(opts, "subtree")? {
        // Paper III: re-route only the sub-tree holding the tenant, keep the old tables elsewhere.
        if engine != "ftree" && engine != "noftree" {
            bail!("subtree re-routing works with ftree or noftree, not {engine}");
        }
        let Some(old) = opts.get("old").and_then(Value::as_str) else {
            bail!("subtree re-routing needs the current tables (--old)")
        };
        let old = api::load_lfts(old)?.lfts;
        let ord = names(opts, "order")?;
        if engine == "noftree" && ord.is_none() {
            bail!("noftree needs a node order (--order FILE)");
        }
        let (l, s, _) = subtree::reroute(f, t, &old, &tenant, ord.as_deref())?;
        return Ok((l, s));
    }
    let pos = order(f, t, opts)?;
    match engine {
        "ftree" => ftree::route_slots(f, t, &ftree::port_order_slots(t), "ftree"),
        "noftree" => {
            let Some(pos) = pos else {
                bail!("noftree needs a node order (--order FILE)")
            };
            ftree::route_slots(f, t, &noftree_slots(t, &pos), "noftree")
        }
        "mfattree" => {
            let mb = Metabase::build(t);
            let slots = match &pos {
                Some(p) => sorted_slots(t, p),
                None => ftree::port_order_slots(t),
            };
            Ok(mb.assign(
                f,
                t,
                &slots,
                if pos.is_some() {
                    "mfattree (slimupdate by node order)"
                } else {
                    "mfattree"
                },
            ))
        }
        "slimupdate" => {
            let old = match opts.get("old").and_then(Value::as_str) {
                Some(p) => Some(api::load_lfts(p)?.lfts),
                None => None,
            };
            slimupdate::route(f, t, old.as_ref())
        }
        "vswitch-ftree" => {
            let vms: Option<Vec<String>> = match opts.get("vms") {
                None | Some(Value::Null) => None,
                Some(Value::Array(a)) => Some(
                    a.iter()
                        .map(|x| x.as_str().unwrap_or("").to_string())
                        .collect(),
                ),
                Some(_) => bail!("vms: expected a list of VM node names"),
            };
            vswitch::route(f, t, vms.as_deref())
        }
        _ => Err(err(format!(
            "unknown engine {engine:?} (available: {})",
            ENGINES.join(", ")
        ))),
    }
}

//! Engine selection by name. Every engine yields up*/down* routes on fat trees; `api::route`
//! runs the deadlock check (up/down walk and channel-dependency-graph acyclicity) on the result.
//! The engines take typed options: files (old tables, a saved metabase) are read by the front
//! end (`api`) before they get here.

use crate::bail;
use crate::error::{err, Result};
use crate::ftree::{self, Stats};
use crate::lft::Lfts;
use crate::metabase::Metabase;
use crate::model::Fabric;
use crate::order::{noftree_slots, positions, sorted_slots};
use crate::topo::Topo;
use crate::{slimupdate, subtree, vswitch};

pub const ENGINES: &[&str] = &[
    "ftree",
    "noftree",
    "mfattree",
    "slimupdate",
    "slimupdate-paper",
    "vswitch-ftree",
];

/// What an engine may need besides the fabric.
#[derive(Default)]
pub struct EngineOptions {
    /// Node names in order (noftree; mfattree: SlimUpdate by node order).
    pub order: Option<Vec<String>>,
    /// Tenant node names: re-route only their sub-tree (Paper III), with `old` elsewhere.
    pub subtree: Option<Vec<String>>,
    /// Tables in place (slimupdate, subtree).
    pub old: Option<Lfts>,
    /// Running VMs (vswitch-ftree); None = every VF HCA.
    pub vms: Option<Vec<String>>,
    /// mfattree: a metabase (phase I) already built for this fabric; only phase II runs.
    pub metabase: Option<Metabase>,
}

pub fn run(f: &Fabric, t: &Topo, engine: &str, o: &EngineOptions) -> Result<(Lfts, Stats)> {
    if let Some(tenant) = &o.subtree {
        // Paper III: re-route only the sub-tree holding the tenant, keep the old tables elsewhere.
        if engine != "ftree" && engine != "noftree" {
            bail!("subtree re-routing works with ftree or noftree, not {engine}");
        }
        let Some(old) = &o.old else {
            bail!("subtree re-routing needs the current tables (--old)")
        };
        if engine == "noftree" && o.order.is_none() {
            bail!("noftree needs a node order (--order FILE)");
        }
        let (l, s, _) = subtree::reroute(f, t, old, tenant, o.order.as_deref())?;
        return Ok((l, s));
    }
    let pos = match &o.order {
        Some(names) => Some(positions(f, t, names)?),
        None => None,
    };
    match engine {
        "ftree" => ftree::route_slots(f, t, &ftree::port_order_slots(t), "ftree"),
        "noftree" => {
            let Some(pos) = pos else {
                bail!("noftree needs a node order (--order FILE)")
            };
            ftree::route_slots(f, t, &noftree_slots(t, &pos), "noftree")
        }
        "mfattree" => {
            let built;
            let mb = match &o.metabase {
                Some(mb) => mb,
                None => {
                    built = Metabase::build(f, t);
                    &built
                }
            };
            let slots = match &pos {
                Some(p) => sorted_slots(t, p),
                None => ftree::port_order_slots(t),
            };
            let name = if pos.is_some() {
                "mfattree (slimupdate by node order)"
            } else {
                "mfattree"
            };
            Ok(mb.assign(f, t, &slots, name))
        }
        "slimupdate" => slimupdate::route(f, t, o.old.as_ref()),
        "slimupdate-paper" => slimupdate::route_balanced(f, t, o.old.as_ref()),
        "vswitch-ftree" => vswitch::route(f, t, o.vms.as_deref()),
        _ => Err(err(format!(
            "unknown engine {engine:?} (available: {})",
            ENGINES.join(", ")
        ))),
    }
}

/// Routes a degraded fabric with `engine`; SlimUpdate starts from the old tables.
pub fn reroute(g: &Fabric, t: &Topo, engine: &str, old: &Lfts) -> Result<(Lfts, ftree::Stats)> {
    match engine {
        "slimupdate" => slimupdate::route(g, t, Some(old)),
        "slimupdate-paper" => slimupdate::route_balanced(g, t, Some(old)),
        "ftree" | "mfattree" => run(g, t, engine, &EngineOptions::default()),
        _ => bail!(
            "re-routing after failures works with ftree, slimupdate, slimupdate-paper, mfattree or subtree, not {engine}"
        ),
    }
}

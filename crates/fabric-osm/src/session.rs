//! One routing session of the OpenSM plugin, in safe Rust: the subnet as OpenSM discovered it is
//! added node by node and link by link, routed with a lanes engine, checked, and compared with the
//! tables of the previous sweep (the SMPs OpenSM will send). The previous tables stay for the next
//! sweep (SlimUpdate and sub-tree re-routing start from them), and so do the routes a change broke
//! (`restore::Memory`): when what broke them comes back, SlimUpdate starts from them again.

use std::collections::HashMap;
use std::time::Instant;

use lanes_fabric::check;
use lanes_fabric::error::{err, Result};
use lanes_fabric::ftree::{self, Stats};
use lanes_fabric::lft::{blocks_for, Lfts, BLOCK, NO_PATH};
use lanes_fabric::model::{Fabric, Kind};
use lanes_fabric::restore::Memory;
use lanes_fabric::slimupdate::Uturns;
use lanes_fabric::topo::Topo;
use lanes_fabric::{slimupdate, subtree, vswitch};
use serde_json::{json, Value};

/// The engines the plugin registers with OpenSM, as `lanes-<name>`.
pub const ENGINES: &[&str] = &["ftree", "slimupdate", "subtree", "vswitch"];

#[derive(Default)]
pub struct Session {
    fabric: Fabric,
    by_guid: HashMap<u64, u32>,
    /// Tables of the last successful routing, kept across sweeps.
    last: Option<Lfts>,
    current: Option<Lfts>,
    /// Routes to return to once the fabric routes them again.
    memory: Memory,
    /// Hops to each LID along the new routes, per switch of `current` (OpenSM's hop tables, which
    /// its multicast spanning trees read).
    hops: Vec<Vec<u8>>,
    sweeps: u64,
    pub report: String,
    pub error: String,
}

/// Blocks that differ from the previous tables: what OpenSM sends (a switch new to the subnet is
/// sent every block).
pub fn changed_blocks(old: Option<&Lfts>, new: &Lfts) -> (usize, usize) {
    let idx = old.map(Lfts::by_guid).unwrap_or_default();
    let (mut changed, mut full) = (0, 0);
    for s in &new.switches {
        let nb = blocks_for(s.ports.len().saturating_sub(1));
        full += nb;
        let Some(o) = old.and_then(|o| idx.get(&s.guid).map(|&i| &o.switches[i])) else {
            changed += nb;
            continue;
        };
        for b in 0..nb {
            let lo = b * BLOCK;
            let hi = ((b + 1) * BLOCK).min(s.ports.len());
            if (lo..hi).any(|l| o.ports.get(l).copied().unwrap_or(NO_PATH) != s.ports[l]) {
                changed += 1;
            }
        }
    }
    (changed, full)
}

impl Session {
    /// Starts a sweep: forgets the subnet of the previous one, keeps its tables.
    pub fn begin(&mut self) {
        self.fabric = Fabric::default();
        self.by_guid.clear();
        if let Some(c) = self.current.take() {
            self.last = Some(c);
        }
    }

    /// Adds a switch or a CA port; returns its index. A CA with several connected ports is added
    /// once per port (each port has its own LID), keyed by the port GUID.
    pub fn add_node(&mut self, switch: bool, guid: u64, nports: u8, lid: u16, name: &str) -> u32 {
        let kind = if switch { Kind::Switch } else { Kind::Hca };
        let i = self.fabric.add_node(kind, name, guid, nports);
        self.fabric.nodes[i as usize].lid = lid;
        self.by_guid.insert(guid, i);
        i
    }

    pub fn connect(&mut self, a: u32, pa: u8, b: u32, pb: u8) -> Result<()> {
        // OpenSM lists each link from both ends: the second time it is already there.
        let n = self
            .fabric
            .nodes
            .get(a as usize)
            .ok_or_else(|| err(format!("link from unknown node {a}")))?;
        if n.remote(pa) == Some(lanes_fabric::model::PortRef { node: b, port: pb }) {
            return Ok(());
        }
        self.fabric.connect(a, pa, b, pb)
    }

    /// Routes the subnet added since `begin` with `engine`; `opts` is a JSON object:
    /// {"check": bool, "tenant": [CA names] (subtree)}.
    pub fn route(&mut self, engine: &str, opts: &Value) -> Result<()> {
        self.sweeps += 1;
        let start = Instant::now();
        let f = &self.fabric;
        f.check_lids()?;
        let t = Topo::new(f)?;
        let topo_s = start.elapsed().as_secs_f64();
        let check_on = opts.get("check").and_then(Value::as_bool).unwrap_or(true);
        let mut slim_start: Option<Lfts> = None;
        let (mut lfts, mut stats): (Lfts, Stats) = match engine {
            "ftree" => ftree::route_slots(f, &t, &ftree::port_order_slots(&t), "ftree")?,
            "slimupdate" => {
                let start = self.last.as_ref().map(|l| self.memory.start_from(f, &t, l));
                // With the check on, U-turns are checked once, below.
                let uturns = if check_on {
                    Uturns::Unchecked
                } else {
                    Uturns::Checked
                };
                let (l, s) = slimupdate::route_with(f, &t, start.as_ref(), uturns)?;
                slim_start = start;
                (l, s)
            }
            "vswitch" => vswitch::route(f, &t, None)?,
            "subtree" => {
                let tenant: Vec<String> = match opts.get("tenant") {
                    Some(Value::Array(a)) => a
                        .iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect(),
                    _ => Vec::new(),
                };
                // Without old tables (first sweep) or a tenant the whole tree is routed.
                match (&self.last, tenant.is_empty()) {
                    (Some(old), false) => {
                        let old = align_to(f, old);
                        let (l, s, _) = subtree::reroute(f, &t, &old, &tenant, None)?;
                        (l, s)
                    }
                    _ => ftree::route_slots(f, &t, &ftree::port_order_slots(&t), "ftree")?,
                }
            }
            _ => {
                return Err(err(format!(
                    "unknown engine {engine:?} (lanes-{})",
                    ENGINES.join(", lanes-")
                )))
            }
        };
        let route_s = start.elapsed().as_secs_f64();
        let (smps, full) = changed_blocks(self.last.as_ref(), &lfts);
        let mut rep = json!({
            "sweep": self.sweeps,
            "engine": engine,
            "switches": f.num_switches(),
            "lids": f.num_lids(),
            "compute_nodes": stats.compute_nodes,
            "topology_seconds": topo_s,
            "routing_seconds": route_s,
            "lft_blocks_changed": smps,
            "lft_blocks_full": full,
        });
        if check_on {
            let mut c = check::check(f, &t, &lfts)?;
            let uturns = stats.extra.get("repair_switch_lid_uturns");
            if !c.deadlock_free && uturns.and_then(Value::as_u64).unwrap_or(0) > 0 {
                // SlimUpdate's U-turns towards switch LIDs made a cycle: repair without them.
                let (l, mut s) = slimupdate::route_with(f, &t, slim_start.as_ref(), Uturns::Off)?;
                s.extra
                    .insert("repair_uturns_dropped".into(), uturns.cloned().into());
                c = check::check(f, &t, &l)?;
                rep["lft_blocks_changed"] = json!(changed_blocks(self.last.as_ref(), &l).0);
                (lfts, stats) = (l, s);
            }
            rep["check"] = serde_json::to_value(&c).map_err(|e| err(e.to_string()))?;
            rep["check_seconds"] = json!(start.elapsed().as_secs_f64() - route_s);
            // Never hand OpenSM tables that can deadlock: it then routes with its next engine,
            // so the fabric is at worst what OpenSM alone would make of it.
            if !c.deadlock_free {
                return Err(err(format!(
                    "lanes's {engine} tables are not deadlock free ({}); leaving this run to \
                     OpenSM's next engine",
                    c.first_problem.unwrap_or_default()
                )));
            }
        }
        if !stats.extra.is_empty() {
            rep["engine_figures"] = Value::Object(stats.extra.clone());
        }
        self.report = rep.to_string();
        self.hops = route_hops(f, &t, &lfts);
        self.memory.update(f, &t, &lfts);
        self.current = Some(lfts);
        Ok(())
    }

    /// Hop counts of the new routes of switch `guid` for LIDs 0..out.len() (NO_PATH: none).
    pub fn hops(&self, guid: u64, out: &mut [u8]) -> bool {
        let Some(l) = &self.current else { return false };
        let Some(i) = l.switches.iter().position(|s| s.guid == guid) else {
            return false;
        };
        for (lid, o) in out.iter_mut().enumerate() {
            *o = self.hops[i].get(lid).copied().unwrap_or(NO_PATH);
        }
        true
    }

    /// The new table of switch `guid`, entries 0..out.len(); false when lanes has none for it.
    pub fn table(&self, guid: u64, out: &mut [u8]) -> bool {
        let Some(l) = &self.current else { return false };
        let Some(s) = l.switches.iter().find(|s| s.guid == guid) else {
            return false;
        };
        for (lid, o) in out.iter_mut().enumerate() {
            *o = s.port(lid as u16);
        }
        true
    }

    pub fn node_index(&self, guid: u64) -> Option<u32> {
        self.by_guid.get(&guid).copied()
    }
}

/// Hops from every switch to every LID following `lfts` (0 = the switch itself), per switch of
/// `lfts`; NO_PATH where the walk does not arrive.
fn route_hops(f: &Fabric, t: &Topo, lfts: &Lfts) -> Vec<Vec<u8>> {
    use lanes_fabric::topo::{Dir, NONE};
    let ns = t.num_switches();
    let n = f.max_lid() as usize + 1;
    let node_of: HashMap<u64, u32> = t
        .sw_node
        .iter()
        .enumerate()
        .map(|(s, &nd)| (f.nodes[nd as usize].guid, s as u32))
        .collect();
    // Table index of each topo switch.
    let mut table = vec![usize::MAX; ns];
    for (i, s) in lfts.switches.iter().enumerate() {
        if let Some(&x) = node_of.get(&s.guid) {
            table[x as usize] = i;
        }
    }
    let mut out = vec![vec![NO_PATH; n]; lfts.switches.len()];
    let mut col = vec![0u8; ns];
    let mut path = Vec::new();
    const UNKNOWN: u8 = 254;
    for lid in 1..n as u16 {
        col.fill(UNKNOWN);
        for s0 in 0..ns {
            path.clear();
            let mut x = s0;
            let mut end = NO_PATH;
            while col[x] == UNKNOWN && path.len() <= ns {
                path.push(x);
                let ti = table[x];
                let p = if ti == usize::MAX {
                    NO_PATH
                } else {
                    lfts.switches[ti].port(lid)
                };
                if p == 0 {
                    end = if f.nodes[t.sw_node[x] as usize].lid == lid {
                        0
                    } else {
                        NO_PATH
                    };
                    break;
                }
                if p == NO_PATH || p as usize >= t.stride {
                    break;
                }
                match t.dir(x as u32, p) {
                    Dir::Hca => {
                        let r = f.nodes[t.sw_node[x] as usize].remote(p);
                        end = if r.map(|r| f.nodes[r.node as usize].lid) == Some(lid) {
                            1
                        } else {
                            NO_PATH
                        };
                        break;
                    }
                    Dir::Up | Dir::Down => {
                        let r = t.remote_sw[x * t.stride + p as usize];
                        if r == NONE {
                            break;
                        }
                        x = r as usize;
                    }
                    Dir::Unused => break,
                }
            }
            if col[x] != UNKNOWN && !path.contains(&x) {
                end = col[x];
                // `x` was reached from the last switch of the path, one hop away.
                end = if end == NO_PATH {
                    NO_PATH
                } else {
                    end.saturating_add(1)
                };
            } else if end == 1 || end == 0 {
                // `end` is already the hop count of the last switch of the path.
            } else {
                end = NO_PATH;
            }
            // Assign back along the path: each switch is one hop further than the next.
            let mut h = end;
            let mut first = true;
            for &y in path.iter().rev() {
                if !first {
                    h = if h == NO_PATH {
                        NO_PATH
                    } else {
                        h.saturating_add(1)
                    };
                }
                first = false;
                col[y] = h;
            }
        }
        for s in 0..ns {
            if table[s] != usize::MAX {
                out[table[s]][lid as usize] = col[s];
            }
        }
    }
    out
}

/// The previous tables restricted to the switches still present (a switch that went away is
/// dropped; one that came back starts empty), so that merging keeps every current switch.
fn align_to(f: &Fabric, old: &Lfts) -> Lfts {
    let idx = old.by_guid();
    let mut out = Lfts::empty(f);
    for s in &mut out.switches {
        if let Some(&i) = idx.get(&s.guid) {
            for (lid, p) in s.ports.iter_mut().enumerate() {
                *p = old.switches[i].port(lid as u16);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use lanes_fabric::gen::Pgft;

    fn load(s: &mut Session, f: &Fabric) {
        s.begin();
        for n in &f.nodes {
            s.add_node(n.is_switch(), n.guid, n.nports, n.lid, &n.name);
        }
        for (i, n) in f.nodes.iter().enumerate() {
            for p in 1..=n.nports {
                if let Some(r) = n.remote(p) {
                    s.connect(i as u32, p, r.node, r.port).unwrap();
                }
            }
        }
    }

    #[test]
    fn a_sweep_routes_like_lanes_ftree_and_a_second_sends_nothing() {
        let f = Pgft::kary(4, 2).unwrap().build().unwrap();
        let mut s = Session::default();
        load(&mut s, &f);
        s.route("ftree", &json!({})).unwrap();
        let (want, _) = ftree::route(&f).unwrap();
        let mut buf = vec![0u8; f.max_lid() as usize + 1];
        for w in &want.switches {
            assert!(s.table(w.guid, &mut buf));
            assert_eq!(buf, w.ports);
        }
        // Hops: a leaf reaches its own nodes in 1, the others' in 3, itself in 0.
        let leaf = &f.nodes[f.find("s1-0").unwrap() as usize];
        let lid = |n: &str| f.nodes[f.find(n).unwrap() as usize].lid as usize;
        assert!(s.hops(leaf.guid, &mut buf));
        assert_eq!(
            (buf[lid("h-0")], buf[lid("h-15")], buf[leaf.lid as usize]),
            (1, 3, 0)
        );
        let r: Value = serde_json::from_str(&s.report).unwrap();
        assert_eq!(r["check"]["deadlock_free"], true);
        assert_eq!(r["lft_blocks_changed"], r["lft_blocks_full"]);
        // The same subnet again: nothing to send.
        load(&mut s, &f);
        s.route("slimupdate", &json!({})).unwrap();
        let r: Value = serde_json::from_str(&s.report).unwrap();
        assert_eq!(r["lft_blocks_changed"], 0);
    }

    fn blocks_changed(s: &Session) -> u64 {
        let r: Value = serde_json::from_str(&s.report).unwrap();
        r["lft_blocks_changed"].as_u64().unwrap()
    }

    #[test]
    fn slimupdate_restores_the_tables_a_failed_link_changed_when_it_comes_back() {
        let f = Pgft::kary(4, 3).unwrap().build().unwrap();
        let mut g = f.clone();
        let n = g.find("s1-0").unwrap();
        let r = g.nodes[n as usize].links[5].take().unwrap();
        g.nodes[r.node as usize].links[r.port as usize] = None;
        let mut s = Session::default();
        load(&mut s, &f);
        s.route("slimupdate", &json!({})).unwrap();
        let mut buf = vec![0u8; f.max_lid() as usize + 1];
        let before: Vec<Vec<u8>> = f
            .switches()
            .map(|(_, n)| {
                assert!(s.table(n.guid, &mut buf));
                buf.clone()
            })
            .collect();
        load(&mut s, &g);
        s.route("slimupdate", &json!({})).unwrap();
        let failure = blocks_changed(&s);
        assert!(failure > 0);
        load(&mut s, &f);
        s.route("slimupdate", &json!({})).unwrap();
        assert_eq!(blocks_changed(&s), failure);
        for ((_, n), want) in f.switches().zip(&before) {
            assert!(s.table(n.guid, &mut buf));
            assert_eq!(&buf, want, "{}", n.name);
        }
    }

    #[test]
    fn unknown_engine_and_bad_links_are_errors() {
        let f = Pgft::kary(2, 2).unwrap().build().unwrap();
        let mut s = Session::default();
        load(&mut s, &f);
        assert!(s
            .route("updn", &json!({}))
            .unwrap_err()
            .0
            .contains("unknown engine"));
        assert!(s.connect(99, 1, 0, 1).is_err());
    }
}

//! Sub-tree reconfiguration (Paper III): re-route only the part of a fat tree that holds a tenant.
//! The tenant's leaves are compared; their common ancestors nearest to the leaves and everything
//! below them form the sub-tree; all compute nodes on its leaves are included. That sub-fabric is
//! routed alone (its top switches act as roots) with ftree or NoFTree (node order), and only the
//! sub-tree switches' entries for the sub-tree's compute nodes replace the old tables; everything
//! else keeps its old routes. Routes from outside enter the sub-tree from above at a top switch,
//! which routes down, so all routes stay up*/down*; `check` verifies it on the result.

use std::collections::HashSet;

use crate::bail;
use crate::error::Result;
use crate::ftree::{self, Stats};
use crate::lft::{Lfts, NO_PATH};
use crate::model::Fabric;
use crate::order::{noftree_slots, positions};
use crate::topo::Topo;

/// Switch indices (Topo numbering) of the sub-tree holding `leaves`.
pub fn select(t: &Topo, leaves: &[u32]) -> Vec<u32> {
    let ancestors = |l: u32| {
        let mut seen = HashSet::from([l]);
        let mut stack = vec![l];
        while let Some(x) = stack.pop() {
            for g in &t.up[x as usize] {
                if seen.insert(g.remote) {
                    stack.push(g.remote);
                }
            }
        }
        seen
    };
    let mut common = match leaves.first() {
        Some(&l) => ancestors(l),
        None => return Vec::new(),
    };
    for &l in &leaves[1..] {
        let a = ancestors(l);
        common.retain(|x| a.contains(x));
    }
    let depth = common
        .iter()
        .map(|&s| t.level[s as usize])
        .max()
        .unwrap_or(0);
    let mut marked: HashSet<u32> = common
        .into_iter()
        .filter(|&s| t.level[s as usize] == depth)
        .collect();
    let mut stack: Vec<u32> = marked.iter().copied().collect();
    while let Some(x) = stack.pop() {
        for g in &t.down[x as usize] {
            if marked.insert(g.remote) {
                stack.push(g.remote);
            }
        }
    }
    let mut v: Vec<u32> = marked.into_iter().collect();
    v.sort_unstable();
    v
}

/// The sub-fabric of `switches` (Topo numbering) with their compute nodes, same names, GUIDs, LIDs.
pub(crate) fn extract(f: &Fabric, t: &Topo, switches: &[u32]) -> Result<Fabric> {
    let mut g = Fabric::default();
    let mut idx = vec![u32::MAX; f.nodes.len()];
    let mut add = |g: &mut Fabric, n: u32| {
        let node = &f.nodes[n as usize];
        let i = g.add_node(node.kind, node.name.clone(), node.guid, node.nports);
        g.nodes[i as usize].lid = node.lid;
        idx[n as usize] = i;
    };
    for &s in switches {
        add(&mut g, t.sw_node[s as usize]);
    }
    for &s in switches {
        for &(_, h) in &t.hcas[s as usize] {
            add(&mut g, h);
        }
    }
    for &s in switches {
        let n = t.sw_node[s as usize];
        let node = &f.nodes[n as usize];
        for p in 1..=node.nports {
            if let Some(r) = node.remote(p) {
                let (a, b) = (idx[n as usize], idx[r.node as usize]);
                // Switch-switch links are met from both ends: connect once.
                let once = !f.nodes[r.node as usize].is_switch() || (n, p) < (r.node, r.port);
                if b != u32::MAX && once {
                    g.connect(a, p, b, r.port)?;
                }
            }
        }
    }
    Ok(g)
}

/// Re-routes the sub-tree holding the compute nodes `tenant` (names). With `order` the sub-tree is
/// routed by NoFTree with that node order, else by ftree. Returns the merged tables, the stats and
/// the number of sub-tree switches.
pub fn reroute(
    f: &Fabric,
    t: &Topo,
    old: &Lfts,
    tenant: &[String],
    order: Option<&[String]>,
) -> Result<(Lfts, Stats, usize)> {
    let pos = positions(f, t, tenant)?;
    let leaves: Vec<u32> = t
        .leaves
        .iter()
        .copied()
        .filter(|&l| {
            t.hcas[l as usize]
                .iter()
                .any(|&(_, h)| pos[h as usize] != usize::MAX)
        })
        .collect();
    if leaves.is_empty() {
        bail!("subtree: no tenant nodes given");
    }
    let marked = select(t, &leaves);
    let sub = extract(f, t, &marked)?;
    let st = Topo::new(&sub)?;
    let (lfts, mut stats) = match order {
        Some(names) => {
            // An order may cover the whole fabric (e.g. read from every host's port counters):
            // names are checked against it, and the sub-tree takes its own nodes in that order.
            positions(f, t, names)?;
            let own: Vec<String> = names
                .iter()
                .filter(|n| sub.find(n).is_some())
                .cloned()
                .collect();
            let p = positions(&sub, &st, &own)?;
            ftree::route_slots(&sub, &st, &noftree_slots(&st, &p), "noftree (sub-tree)")?
        }
        None => ftree::route_slots(&sub, &st, &ftree::port_order_slots(&st), "ftree (sub-tree)")?,
    };
    let dests: Vec<u16> = sub.hcas().map(|(_, n)| n.lid).collect();
    let mut merged = old.clone();
    let by_guid = merged.by_guid();
    for s in &lfts.switches {
        let Some(&i) = by_guid.get(&s.guid) else {
            bail!("subtree: old tables lack switch {}", s.name)
        };
        let m = &mut merged.switches[i];
        for &d in &dests {
            let p = s.port(d);
            if p != NO_PATH {
                if m.ports.len() <= d as usize {
                    m.ports.resize(d as usize + 1, NO_PATH);
                }
                m.ports[d as usize] = p;
            }
        }
    }
    stats.switches = t.num_switches();
    stats.lids = f.num_lids();
    stats
        .extra
        .insert("subtree_switches".into(), serde_json::json!(marked.len()));
    stats
        .extra
        .insert("subtree_nodes".into(), serde_json::json!(dests.len()));
    Ok((merged, stats, marked.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::check;
    use crate::gen::Pgft;
    use crate::lft::diff;

    #[test]
    fn a_tenant_in_one_pod_reroutes_only_that_pod() {
        // 4-ary-3-tree: pods of 4 leaves and 4 level-1 switches (16 nodes each).
        let f = Pgft::kary(4, 3).unwrap().build().unwrap();
        let t = Topo::new(&f).unwrap();
        let (old, _) = ftree::route(&f).unwrap();
        let tenant: Vec<String> = ["h-1", "h-5", "h-9"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let order: Vec<String> = ["h-5", "h-9", "h-1"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (new, stats, n) = reroute(&f, &t, &old, &tenant, Some(&order)).unwrap();
        assert_eq!(n, 8);
        assert_eq!(stats.extra["subtree_nodes"], 16);
        let d = diff(&old, &new).unwrap();
        assert!(d.switches <= 8 && d.switches > 0, "{d:?}");
        let r = check(&f, &t, &new).unwrap();
        assert!(r.deadlock_free && r.unreachable == 0, "{r:?}");
        // Without an order the sub-tree's ftree gives back the old routes of a full tree.
        let (same, _, _) = reroute(&f, &t, &old, &tenant, None).unwrap();
        assert!(check(&f, &t, &same).unwrap().deadlock_free);
    }

    #[test]
    fn an_order_over_the_whole_fabric_is_cut_to_the_sub_tree() {
        // 4-ary-3-tree, tenant in pod 0 (h-0..h-15). The order also names pod 1's nodes (first):
        // the sub-tree routes as with its own nodes alone, in the same relative order.
        let f = Pgft::kary(4, 3).unwrap().build().unwrap();
        let t = Topo::new(&f).unwrap();
        let (old, _) = ftree::route(&f).unwrap();
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let tenant = names(&["h-1", "h-2", "h-3"]);
        let whole = names(&["h-20", "h-4", "h-17", "h-8", "h-12"]);
        let own = names(&["h-4", "h-8", "h-12"]);
        let (a, _, _) = reroute(&f, &t, &old, &tenant, Some(&whole)).unwrap();
        let (b, _, _) = reroute(&f, &t, &old, &tenant, Some(&own)).unwrap();
        assert_eq!(a, b);
        assert!(reroute(&f, &t, &old, &tenant, Some(&names(&["nobody"]))).is_err());
    }

    #[test]
    fn tenants_across_pods_take_the_whole_tree() {
        let f = Pgft::kary(4, 3).unwrap().build().unwrap();
        let t = Topo::new(&f).unwrap();
        let (old, _) = ftree::route(&f).unwrap();
        let tenant: Vec<String> = ["h-0", "h-63"].iter().map(|s| s.to_string()).collect();
        let (_, _, n) = reroute(&f, &t, &old, &tenant, None).unwrap();
        assert_eq!(n, 48);
        assert!(reroute(&f, &t, &old, &[], None).is_err());
    }
}

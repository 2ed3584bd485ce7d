//! Sub-tree re-routing after failures: the sub-tree reconfiguration (re-route only the sub-tree
//! holding some compute nodes, keep the old tables elsewhere) applied to what a failure touches.
//!
//! The failure's sub-tree is the one `subtree::select` gives for the leaves below each failure's
//! upper end (a failed link's end nearer the roots, a failed switch itself, a failed node's leaf).
//! Its compute nodes and switches are the destinations re-routed. A fat tree often cannot repair a
//! failure inside that sub-tree alone: a root whose only link into a pod failed must no longer be
//! chosen by anyone for the pod's nodes. So the re-routed switches grow one level at a time (the
//! tops' parents and everything below them) until lanes's check finds every (leaf, node) pair
//! reachable and the channel dependency graph acyclic; the destinations stay those of the first
//! sub-tree. Up routes of the re-routed switches towards other destinations that lead into a dead
//! port move to the least-loaded live up port, top level first. All routes stay up*/down*.

use std::collections::HashSet;

use serde::Serialize;

use crate::error::Result;
use crate::fail::Failures;
use crate::ftree::{self, Stats};
use crate::lft::{Lfts, NO_PATH};
use crate::model::{Fabric, Kind};
use crate::subtree;
use crate::topo::{Dir, Topo};
use crate::{bail, check};

/// What the sub-tree engine did, beside the tables.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SubtreeReport {
    /// Switches of the failure's sub-tree (intact fabric), and their compute nodes.
    pub subtree_switches: usize,
    pub subtree_nodes: usize,
    /// Switches re-routed in the attempt kept (after widening), and how many attempts it took.
    pub rerouted_switches: usize,
    pub attempts: usize,
    /// Up entries towards other destinations moved off a dead port.
    pub entries_moved_up: usize,
    /// No sub-tree attempt passed the check: the whole fabric was routed by ftree.
    pub fell_back_to_full: bool,
}

/// Leaves (Topo indices of the intact fabric `t`) below switch `s`, `s` included if it is one.
fn leaves_below(t: &Topo, s: u32) -> Vec<u32> {
    let mut seen = HashSet::from([s]);
    let mut stack = vec![s];
    let mut out = Vec::new();
    while let Some(x) = stack.pop() {
        if !t.hcas[x as usize].is_empty() {
            out.push(x);
        }
        for g in &t.down[x as usize] {
            if seen.insert(g.remote) {
                stack.push(g.remote);
            }
        }
    }
    out
}

/// The leaves below every failure's upper end, on the intact fabric.
fn failure_leaves(
    f: &Fabric,
    t: &Topo,
    fl: &Failures,
    failed_links: &[String],
) -> Result<Vec<u32>> {
    let sw = |name: &str| -> Option<u32> {
        let n = f.find(name)?;
        let s = t.node_sw[n as usize];
        (s != crate::topo::NONE).then_some(s)
    };
    // The leaf of a compute node, by name.
    let leaf_of = |name: &str| -> Option<u32> {
        let n = f.find(name)?;
        let node = &f.nodes[n as usize];
        let r = node.remote(node.first_port()?)?;
        let s = t.node_sw[r.node as usize];
        (s != crate::topo::NONE).then_some(s)
    };
    let mut leaves = HashSet::new();
    for l in failed_links {
        // "a[pa]-b[pb]": both names; the end nearer the roots (lower level) is the upper end.
        let Some(mid) = l.find("]-") else {
            bail!("internal: failed link {l:?}")
        };
        let a = &l[..l[..mid].rfind('[').unwrap_or(mid)];
        let rest = &l[mid + 2..];
        let b = &rest[..rest.rfind('[').unwrap_or(rest.len())];
        let upper = match (sw(a), sw(b)) {
            (Some(x), Some(y)) => {
                if t.level[x as usize] <= t.level[y as usize] {
                    x
                } else {
                    y
                }
            }
            (Some(x), None) | (None, Some(x)) => x,
            (None, None) => continue,
        };
        leaves.extend(leaves_below(t, upper));
    }
    for name in &fl.switches {
        if let Some(s) = sw(name) {
            leaves.extend(leaves_below(t, s));
        }
    }
    for name in &fl.nodes {
        if let Some(s) = leaf_of(name) {
            leaves.insert(s);
        }
    }
    let mut v: Vec<u32> = leaves.into_iter().collect();
    v.sort_unstable();
    Ok(v)
}

/// One level wider: the tops' parents (all of them) and everything below. None at the roots.
fn widen(t: &Topo, marked: &[u32]) -> Option<Vec<u32>> {
    let top = marked.iter().map(|&s| t.level[s as usize]).min()?;
    let mut tops: HashSet<u32> = HashSet::new();
    for &s in marked.iter().filter(|&&s| t.level[s as usize] == top) {
        tops.extend(t.up[s as usize].iter().map(|g| g.remote));
    }
    if tops.is_empty() {
        return None;
    }
    let mut all: HashSet<u32> = tops.clone();
    let mut stack: Vec<u32> = tops.into_iter().collect();
    while let Some(x) = stack.pop() {
        for g in &t.down[x as usize] {
            if all.insert(g.remote) {
                stack.push(g.remote);
            }
        }
    }
    let mut v: Vec<u32> = all.into_iter().collect();
    v.sort_unstable();
    Some(v)
}

/// Routes the switches `guids` of the degraded fabric `g` as a sub-fabric and merges their
/// entries for `dests` into `old`; then moves their other up entries off dead ports.
fn attempt(
    g: &Fabric,
    tg: &Topo,
    old: &Lfts,
    guids: &HashSet<u64>,
    dests: &HashSet<u16>,
) -> Result<(Lfts, usize)> {
    let switches: Vec<u32> = (0..tg.num_switches() as u32)
        .filter(|&s| guids.contains(&g.nodes[tg.sw_node[s as usize] as usize].guid))
        .collect();
    let sub = subtree::extract(g, tg, &switches)?;
    let st = Topo::new(&sub)?;
    let (lfts, _) = ftree::route_slots(&sub, &st, &ftree::port_order_slots(&st), "ftree")?;
    let mut merged = old.clone();
    let by_guid = merged.by_guid();
    for s in &lfts.switches {
        let Some(&i) = by_guid.get(&s.guid) else {
            bail!("subtree: old tables lack switch {}", s.name)
        };
        let m = &mut merged.switches[i];
        for &d in dests {
            let p = s.port(d);
            if p != NO_PATH {
                if m.ports.len() <= d as usize {
                    m.ports.resize(d as usize + 1, NO_PATH);
                }
                m.ports[d as usize] = p;
            }
        }
    }
    let moved = move_off_dead_ports(g, tg, &mut merged, &switches, dests);
    // Switch LIDs outside `dests` whose only up/down route from a leaf crossed the failure.
    crate::fill::repair_switch_lids(g, tg, &mut merged);
    Ok((merged, moved))
}

/// Entries of `switches` (not for `dests`) that point into a port without a link go to the live
/// up port carrying the fewest destinations whose far switch has a route; top level first, so a
/// far switch's own entry is repaired before anyone relies on it.
fn move_off_dead_ports(
    g: &Fabric,
    tg: &Topo,
    lfts: &mut Lfts,
    switches: &[u32],
    dests: &HashSet<u16>,
) -> usize {
    let live: HashSet<u16> = g.nodes.iter().map(|n| n.lid).filter(|&l| l != 0).collect();
    let by_guid = lfts.by_guid();
    let table_of = |s: u32| by_guid[&g.nodes[tg.sw_node[s as usize] as usize].guid];
    let mut order = switches.to_vec();
    order.sort_by_key(|&s| tg.level[s as usize]);
    let mut moved = 0;
    for s in order {
        let i = table_of(s);
        let ups: Vec<(u8, u32)> = tg.up[s as usize]
            .iter()
            .flat_map(|gr| gr.ports.iter().map(move |&p| (p, gr.remote)))
            .collect();
        let mut load: Vec<u32> = vec![0; tg.stride];
        for &p in &lfts.switches[i].ports {
            if (p as usize) < tg.stride {
                load[p as usize] += 1;
            }
        }
        for lid in 1..lfts.switches[i].ports.len() {
            let p = lfts.switches[i].ports[lid];
            // Entries towards LIDs that left with a failed node stay as they are.
            if p == NO_PATH
                || p == 0
                || dests.contains(&(lid as u16))
                || !live.contains(&(lid as u16))
            {
                continue;
            }
            if tg.dir(s, p) != Dir::Unused {
                continue;
            }
            let best = ups
                .iter()
                .filter(|&&(_, r)| {
                    let q = lfts.switches[table_of(r)].port(lid as u16);
                    q != NO_PATH && (q == 0 || tg.dir(r, q) != Dir::Unused)
                })
                .min_by_key(|&&(port, _)| (load[port as usize], port));
            if let Some(&(port, _)) = best {
                lfts.switches[i].ports[lid] = port;
                load[port as usize] += 1;
                moved += 1;
            }
        }
    }
    moved
}

/// Re-routes the degraded fabric `g` after the failures `fl` (applied to the intact `f`),
/// starting from `old` (the surviving tables).
pub fn reroute(
    f: &Fabric,
    g: &Fabric,
    tg: &Topo,
    old: &Lfts,
    fl: &Failures,
    failed_links: &[String],
) -> Result<(Lfts, Stats, SubtreeReport)> {
    let start = std::time::Instant::now();
    let tf = Topo::new(f)?;
    let leaves = failure_leaves(f, &tf, fl, failed_links)?;
    let first = subtree::select(&tf, &leaves);
    // Destinations: the sub-tree's compute nodes and switches still in the degraded fabric.
    let alive: HashSet<u64> = g
        .nodes
        .iter()
        .filter(|n| n.lid != 0 && (n.is_switch() || n.first_port().is_some()))
        .map(|n| n.guid)
        .collect();
    let mut dests: HashSet<u16> = HashSet::new();
    let mut nodes = 0;
    for &s in &first {
        let sn = &f.nodes[tf.sw_node[s as usize] as usize];
        if let Some(x) = g.find(&sn.name).filter(|_| alive.contains(&sn.guid)) {
            dests.insert(g.nodes[x as usize].lid);
        }
        for &(_, h) in &tf.hcas[s as usize] {
            let hn = &f.nodes[h as usize];
            nodes += 1;
            if let Some(x) = g.find(&hn.name) {
                let x = &g.nodes[x as usize];
                if x.kind == Kind::Hca && alive.contains(&x.guid) {
                    dests.insert(x.lid);
                }
            }
        }
    }
    dests.remove(&0);
    let mut report = SubtreeReport {
        subtree_switches: first.len(),
        subtree_nodes: nodes,
        rerouted_switches: 0,
        attempts: 0,
        entries_moved_up: 0,
        fell_back_to_full: false,
    };
    let mut marked = first;
    let mut result = None;
    while !marked.is_empty() {
        report.attempts += 1;
        let guids: HashSet<u64> = marked
            .iter()
            .map(|&s| f.nodes[tf.sw_node[s as usize] as usize].guid)
            .filter(|gu| alive.contains(gu))
            .collect();
        // Nothing left to route (e.g. a failed leaf and its nodes): the old tables may do.
        let tried = if guids.is_empty() {
            Ok((old.clone(), 0))
        } else {
            attempt(g, tg, old, &guids, &dests)
        };
        if let Ok((l, moved)) = tried {
            let r = check::check(g, tg, &l)?;
            if r.unreachable == 0 && r.deadlock_free {
                report.rerouted_switches = guids.len();
                report.entries_moved_up = moved;
                result = Some(l);
                break;
            }
        }
        match widen(&tf, &marked) {
            Some(w) => marked = w,
            None => break,
        }
    }
    let lfts = match result {
        Some(l) => l,
        None => {
            report.fell_back_to_full = true;
            report.rerouted_switches = g.num_switches();
            ftree::route(g)?.0
        }
    };
    let mut stats = Stats {
        engine: "subtree".into(),
        switches: g.num_switches(),
        compute_nodes: tg.hcas.iter().map(Vec::len).sum(),
        lids: g.num_lids(),
        dummy_routes: 0,
        seconds: start.elapsed().as_secs_f64(),
        phase_seconds: Vec::new(),
        extra: Default::default(),
    };
    stats.extra.insert(
        "subtree".into(),
        serde_json::to_value(&report).unwrap_or_default(),
    );
    Ok((lfts, stats, report))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fail::{apply, changed_blocks, parse_link, surviving};
    use crate::gen::Pgft;

    fn run(f: &Fabric, fl: &Failures) -> (Lfts, Lfts, SubtreeReport, check::CheckReport) {
        let (old, _) = ftree::route(f).unwrap();
        let (g, a) = apply(f, fl).unwrap();
        let tg = Topo::new(&g).unwrap();
        let kept = surviving(&old, &g);
        let (new, _, r) = reroute(f, &g, &tg, &kept, fl, &a.failed_links).unwrap();
        let c = check::check(&g, &tg, &new).unwrap();
        (kept, new, r, c)
    }

    fn smps(f: &Fabric, fl: &Failures) -> (usize, usize, SubtreeReport, check::CheckReport) {
        let (kept, new, r, c) = run(f, fl);
        let full = ftree::route(&apply(f, fl).unwrap().0).unwrap().0;
        (
            changed_blocks(&kept, &new).0,
            changed_blocks(&kept, &full).0,
            r,
            c,
        )
    }

    #[test]
    fn a_failed_link_in_a_pod_widens_to_the_roots_and_sends_fewer_smps() {
        // 4-ary-3-tree: s1-0[5] is a leaf-to-level-2 link of pod 0 (8 switches, 16 nodes). The
        // pod alone cannot repair it (the roots above the dead link's upper end reach the pod only
        // through it), so the second attempt re-routes the pod's destinations on all 48 switches.
        let f = Pgft::kary(4, 3).unwrap().build().unwrap();
        let fl = Failures {
            links: vec![parse_link("s1-0[5]").unwrap()],
            ..Failures::default()
        };
        let (sub, full, r, c) = smps(&f, &fl);
        assert_eq!(
            (
                r.subtree_switches,
                r.subtree_nodes,
                r.rerouted_switches,
                r.attempts
            ),
            (8, 16, 48, 2)
        );
        assert!(!r.fell_back_to_full);
        assert_eq!((sub, full), (50, 66));
        assert_eq!(c.unreachable, 0);
        assert!(c.deadlock_free && c.updown, "{c:?}");
    }

    #[test]
    fn a_failed_node_or_leaf_needs_no_smp() {
        // Full ftree re-balances the whole tree around the gap; the sub-tree engine keeps every
        // table, which still reaches every node left.
        let f = Pgft::kary(4, 3).unwrap().build().unwrap();
        for (fl, full_smps) in [
            (
                Failures {
                    nodes: vec!["h-3".into()],
                    ..Failures::default()
                },
                48,
            ),
            (
                Failures {
                    switches: vec!["s1-1".into()],
                    ..Failures::default()
                },
                50,
            ),
        ] {
            let (sub, full, r, c) = smps(&f, &fl);
            assert_eq!((sub, full, r.attempts), (0, full_smps, 1), "{fl:?}");
            assert_eq!(c.unreachable, 0);
            assert!(c.deadlock_free && c.updown);
        }
        // A level-2 switch: its pod widens to the roots, 49 SMPs against ftree's 68 (both include
        // the detours of the leaves whose up/down routes to a root's LID crossed the switch).
        let fl = Failures {
            switches: vec!["s2-1".into()],
            ..Failures::default()
        };
        let (sub, full, r, c) = smps(&f, &fl);
        assert_eq!((sub, full, r.attempts, r.entries_moved_up), (49, 68, 2, 60));
        assert!(c.unreachable == 0 && c.deadlock_free);
    }
}

//! SlimUpdate (Paper IV Alg. 1-3): fat-tree routing that keeps each destination's existing port
//! choice (from the old LFTs) wherever the port still exists and its group has not reached its
//! maximum counter, so reconfigurations change few LFT entries while staying balanced.
//!
//! Maximum counters (the paper gives no formula; ours, from the leaves up): a leaf sends
//! max_nodes_per_leaf destinations down-load; a switch's down-load is the share its children's up
//! links give it; an up group may carry ceil(down-load * links in group / up links) destinations
//! downwards. Upward routes from a child c over a group may number
//! ceil((nodes - nodes below c) * links in group / up links of c).
//! Ties between least-loaded up groups go to the highest remote GUID (Alg. 2 line 8).
//!
//! `route` first tries the least change (`repair`): with tables in place it keeps every entry
//! that still reaches its destination and re-points only the broken ones, which changes fewer
//! entries than SlimUpdate's counters allow; only when that leaves a compute node unreachable
//! from some leaf does the whole of Paper IV's algorithm (`route_balanced`) run.

use std::time::Instant;

use crate::align::hca_lids;
use crate::error::Result;
use crate::ftree::{Columns, Counters, Stats};
use crate::lft::{Lfts, SwitchLft, NO_PATH};
use crate::model::Fabric;
use crate::topo::{Dir, Topo};

struct Caps {
    /// Per group id: max destinations routed down over an up group / up over a down group.
    max: Vec<u32>,
}

fn caps(f: &Fabric, t: &Topo) -> Caps {
    let ns = t.num_switches();
    let up_links = |s: usize| t.up[s].iter().map(|g| g.ports.len()).sum::<usize>().max(1) as f64;
    // Down-load and nodes below, from the leaves (highest level) up.
    let mut load = vec![0f64; ns];
    let mut below: Vec<usize> = t.hcas.iter().map(Vec::len).collect();
    for &l in &t.leaves {
        load[l as usize] = t.max_cn_per_leaf as f64;
    }
    let mut max = vec![u32::MAX; t.ngroups];
    for level in (0..t.nlevels).rev() {
        for &s in &t.by_level[level] {
            let s = s as usize;
            for g in &t.up[s] {
                let share = load[s] * g.ports.len() as f64 / up_links(s);
                max[g.id as usize] = share.ceil() as u32;
                load[g.remote as usize] += share;
            }
        }
        if level > 0 {
            for &s in &t.by_level[level - 1] {
                below[s as usize] = t.down[s as usize]
                    .iter()
                    .map(|g| below[g.remote as usize])
                    .sum::<usize>()
                    + t.hcas[s as usize].len();
            }
        }
    }
    let total = hca_lids(f, t).len();
    for s in 0..ns {
        for g in &t.down[s] {
            let c = g.remote as usize;
            let share = (total - below[c].min(total)) as f64 * g.ports.len() as f64 / up_links(c);
            max[g.id as usize] = share.ceil() as u32;
        }
    }
    Caps { max }
}

/// Old tables in Topo switch order (None for switches the old routing did not know).
fn old_tables<'a>(f: &Fabric, t: &Topo, old: &'a Lfts) -> Vec<Option<&'a SwitchLft>> {
    let idx = old.by_guid();
    t.sw_node
        .iter()
        .map(|&n| {
            idx.get(&f.nodes[n as usize].guid)
                .map(|&i| &old.switches[i])
        })
        .collect()
}

fn old_port(old: &[Option<&SwitchLft>], s: u32, lid: u16) -> u8 {
    old[s as usize].map_or(NO_PATH, |x| x.port(lid))
}

/// Marks (with `stamp`) the switches the old routes from all leaves towards `lid` traverse.
fn mark_used(t: &Topo, old: &[Option<&SwitchLft>], lid: u16, used: &mut [u32], stamp: u32) {
    for &leaf in &t.leaves {
        let mut x = leaf;
        for _ in 0..=2 * t.nlevels {
            if used[x as usize] == stamp {
                break;
            }
            used[x as usize] = stamp;
            let p = old_port(old, x, lid);
            if p == NO_PATH || p == 0 || !matches!(t.dir(x, p), Dir::Up | Dir::Down) {
                break;
            }
            x = t.remote_sw[x as usize * t.stride + p as usize];
        }
    }
}

/// One destination (or a dummy when `col` is None).
#[allow(clippy::too_many_arguments)]
fn route_one(
    f: &Fabric,
    t: &Topo,
    c: &mut Counters,
    caps: &Caps,
    old: &[Option<&SwitchLft>],
    leaf: u32,
    port: u8,
    lid: u16,
    used: &[u32],
    stamp: u32,
    mut col: Option<&mut [u8]>,
) {
    let st = t.stride;
    if let Some(col) = col.as_deref_mut() {
        col[leaf as usize] = port;
    }
    let mut stack = Vec::new();
    let mut cur = leaf;
    loop {
        if let Some(col) = col.as_deref_mut() {
            stack.push(cur);
            while let Some(x) = stack.pop() {
                for g in &t.down[x as usize] {
                    let ch = g.remote as usize;
                    if col[ch] != NO_PATH {
                        continue;
                    }
                    let prev = old_port(old, g.remote, lid);
                    let keep = g.rports.iter().position(|&q| q == prev);
                    let k = match keep {
                        Some(k) if c.group[g.id as usize] < caps.max[g.id as usize] => k,
                        _ => (0..g.ports.len())
                            .min_by_key(|&i| (c.port_up[x as usize * st + g.ports[i] as usize], i))
                            .unwrap_or(0),
                    };
                    col[ch] = g.rports[k];
                    c.port_up[x as usize * st + g.ports[k] as usize] += 1;
                    c.group[g.id as usize] += 1;
                    stack.push(g.remote);
                }
            }
        }
        let ups = &t.up[cur as usize];
        if ups.is_empty() {
            break;
        }
        // The existing choice is recorded at the parent that routes this destination down to
        // `cur` and that old routes actually traverse (completion entries of other parents may
        // point down too).
        let kept = if col.is_some() {
            ups.iter().enumerate().find_map(|(gi, g)| {
                if used[g.remote as usize] != stamp {
                    return None;
                }
                let pp = old_port(old, g.remote, lid);
                g.rports.iter().position(|&q| q == pp).map(|k| (gi, k))
            })
        } else {
            None
        };
        let (gi, k) = match kept {
            Some((gi, k)) if c.group[ups[gi].id as usize] < caps.max[ups[gi].id as usize] => {
                (gi, k)
            }
            _ => {
                // Least-loaded group, ties to the highest remote GUID; least-loaded port in it.
                let guid =
                    |g: &crate::topo::Group| f.nodes[t.sw_node[g.remote as usize] as usize].guid;
                let gi = (0..ups.len())
                    .min_by_key(|&i| {
                        (
                            c.group[ups[i].id as usize],
                            std::cmp::Reverse(guid(&ups[i])),
                        )
                    })
                    .unwrap_or(0);
                let g = &ups[gi];
                let k = (0..g.ports.len())
                    .min_by_key(|&i| (c.port_down[cur as usize * st + g.ports[i] as usize], i))
                    .unwrap_or(0);
                (gi, k)
            }
        };
        let g = &ups[gi];
        c.port_down[cur as usize * st + g.ports[k] as usize] += 1;
        c.group[g.id as usize] += 1;
        if let Some(col) = col.as_deref_mut() {
            if col[g.remote as usize] != NO_PATH {
                break;
            }
            col[g.remote as usize] = g.rports[k];
        }
        cur = g.remote;
    }
}

/// U-turns towards switch LIDs in the repair (see `repair`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uturns {
    /// Taken, and dropped if lanes's check finds the tables cyclic.
    Checked,
    /// Taken; the caller checks the tables and asks again with `Off` if they are cyclic.
    Unchecked,
    Off,
}

/// SlimUpdate as lanes runs it: the least change to the tables in place when it routes every
/// compute node, else Paper IV's algorithm.
pub fn route(f: &Fabric, t: &Topo, old: Option<&Lfts>) -> Result<(Lfts, Stats)> {
    route_with(f, t, old, Uturns::Checked)
}

pub fn route_with(
    f: &Fabric,
    t: &Topo,
    old: Option<&Lfts>,
    uturns: Uturns,
) -> Result<(Lfts, Stats)> {
    let start = Instant::now();
    let Some(old) = old else {
        return route_balanced(f, t, None);
    };
    f.check_lids()?;
    let (lfts, rep) = match uturns {
        Uturns::Checked => crate::repair::repair(f, t, old),
        Uturns::Unchecked => crate::repair::repair_with(f, t, old, true),
        Uturns::Off => crate::repair::repair_with(f, t, old, false),
    };
    if rep.unreachable > 0 {
        return route_balanced(f, t, Some(old));
    }
    let mut extra = serde_json::Map::new();
    extra.insert("repair_entries_changed".into(), rep.entries_changed.into());
    extra.insert(
        "repair_switch_lid_uturns".into(),
        rep.switch_lid_uturns.into(),
    );
    extra.insert("repair_uturns_dropped".into(), rep.uturns_dropped.into());
    let stats = Stats {
        engine: "slimupdate".into(),
        switches: t.num_switches(),
        compute_nodes: hca_lids(f, t).len(),
        lids: f.num_lids(),
        dummy_routes: 0,
        seconds: start.elapsed().as_secs_f64(),
        phase_seconds: Vec::new(),
        extra,
    };
    Ok((lfts, stats))
}

/// Paper IV's SlimUpdate (Alg. 1-3): keeps old choices within the maximum counters.
pub fn route_balanced(f: &Fabric, t: &Topo, old: Option<&Lfts>) -> Result<(Lfts, Stats)> {
    route_capped(f, t, old, caps(f, t))
}

/// Paper IV's SlimUpdate with the maximum counters of the tree before a failure (`intact`, the
/// same nodes with more links) instead of the degraded tree's: the paper does not say which.
/// A port group the failure removed has no counter; one it created (none, for link failures)
/// none either.
pub fn route_balanced_intact_caps(
    f: &Fabric,
    t: &Topo,
    old: Option<&Lfts>,
    intact: (&Fabric, &Topo),
) -> Result<(Lfts, Stats)> {
    let (f0, t0) = intact;
    let before = caps(f0, t0);
    let mut by_ends = std::collections::HashMap::new();
    for (s, groups) in t0.up.iter().chain(&t0.down).enumerate() {
        let s = s % t0.num_switches();
        for g in groups {
            let ends = (t0.sw_node[s], t0.sw_node[g.remote as usize]);
            by_ends.insert(ends, before.max[g.id as usize]);
        }
    }
    let mut max = vec![u32::MAX; t.ngroups];
    for (s, groups) in t.up.iter().chain(&t.down).enumerate() {
        let s = s % t.num_switches();
        for g in groups {
            let ends = (t.sw_node[s], t.sw_node[g.remote as usize]);
            if let Some(&m) = by_ends.get(&ends) {
                max[g.id as usize] = m;
            }
        }
    }
    route_capped(f, t, old, Caps { max })
}

fn route_capped(f: &Fabric, t: &Topo, old: Option<&Lfts>, caps: Caps) -> Result<(Lfts, Stats)> {
    let start = Instant::now();
    f.check_lids()?;
    let empty = Lfts::default();
    let old_t = old_tables(f, t, old.unwrap_or(&empty));
    let nlids = f.max_lid() as usize + 1;
    let mut cols = Columns::new(nlids, t.num_switches());
    let mut c = Counters::new(t);
    let mut dummies = 0;
    let mut used = vec![0u32; t.num_switches()];
    let mut stamp = 0u32;
    for &leaf in &t.leaves {
        // Nodes the old tables already route come first (Alg. 1 line 4), then by port.
        let mut nodes: Vec<(bool, u8, u32)> = t.hcas[leaf as usize]
            .iter()
            .map(|&(p, h)| {
                (
                    old_port(&old_t, leaf, f.nodes[h as usize].lid) == NO_PATH,
                    p,
                    h,
                )
            })
            .collect();
        nodes.sort_unstable();
        for &(_, port, h) in &nodes {
            let lid = f.nodes[h as usize].lid;
            stamp += 1;
            mark_used(t, &old_t, lid, &mut used, stamp);
            route_one(
                f,
                t,
                &mut c,
                &caps,
                &old_t,
                leaf,
                port,
                lid,
                &used,
                stamp,
                Some(cols.col(lid)),
            );
        }
        for _ in nodes.len()..t.max_cn_per_leaf {
            route_one(f, t, &mut c, &caps, &old_t, leaf, 0, 0, &used, 0, None);
            dummies += 1;
        }
    }
    let lfts = cols.finish(f, t);
    let stats = Stats {
        engine: "slimupdate".into(),
        switches: t.num_switches(),
        compute_nodes: hca_lids(f, t).len(),
        lids: f.num_lids(),
        dummy_routes: dummies,
        seconds: start.elapsed().as_secs_f64(),
        phase_seconds: Vec::new(),
        extra: Default::default(),
    };
    Ok((lfts, stats))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::balance::balance;
    use crate::gen::Pgft;
    use crate::lft::diff;
    use crate::{check, ftree};

    #[test]
    fn initial_run_is_balanced_and_a_rerun_changes_nothing() {
        let f = Pgft::kary(4, 3).unwrap().build().unwrap();
        let t = Topo::new(&f).unwrap();
        let (first, _) = route_balanced(&f, &t, None).unwrap();
        let b = balance(&f, &t, &first).unwrap();
        assert!(b.levels.iter().all(|l| l.min == l.max), "{b:?}");
        let (again, _) = route_balanced(&f, &t, Some(&first)).unwrap();
        assert_eq!(diff(&first, &again).unwrap().entries, 0);
        // From OpenSM-like ftree tables too: nothing to change on an unchanged, balanced fabric.
        let (ft, _) = ftree::route(&f).unwrap();
        let (from_ft, _) = route_balanced(&f, &t, Some(&ft)).unwrap();
        assert_eq!(diff(&ft, &from_ft).unwrap().entries, 0);
    }

    fn without_link(f: &Fabric, a: &str, port: u8) -> Fabric {
        let mut g = f.clone();
        let n = g.find(a).unwrap();
        let r = g.nodes[n as usize].links[port as usize].take().unwrap();
        g.nodes[r.node as usize].links[r.port as usize] = None;
        g
    }

    #[test]
    fn after_a_link_failure_slimupdate_changes_fewer_paths_than_ftree() {
        let f = Pgft::kary(4, 2).unwrap().build().unwrap();
        let (old, _) = ftree::route(&f).unwrap();
        let g = without_link(&f, "s1-0", 6); // leaf 0 loses its link to root 1
        let t = Topo::new(&g).unwrap();
        let (ft, _) = ftree::route(&g).unwrap();
        let (su, _) = route_balanced(&g, &t, Some(&old)).unwrap();
        let (d_ft, d_su) = (diff(&old, &ft).unwrap(), diff(&old, &su).unwrap());
        assert!(
            d_su.entries < d_ft.entries,
            "slimupdate {d_su:?} ftree {d_ft:?}"
        );
        let r = check::check(&g, &t, &su).unwrap();
        assert!(r.deadlock_free && r.unreachable == 0, "{r:?}");
    }

    #[test]
    fn after_node_shutdowns_slimupdate_keeps_the_other_nodes_paths() {
        let f = Pgft::kary(4, 2).unwrap().build().unwrap();
        let (old, _) = ftree::route(&f).unwrap();
        let mut g = without_link(&f, "h-0", 1);
        g = without_link(&g, "h-5", 1);
        let t = Topo::new(&g).unwrap();
        let (ft, _) = ftree::route(&g).unwrap();
        let (su, _) = route_balanced(&g, &t, Some(&old)).unwrap();
        // Entries of the remaining nodes that changed.
        let changed = |new: &Lfts| {
            let mut n = 0;
            for (a, b) in old.switches.iter().zip(&new.switches) {
                for (_, h) in g.hcas().filter(|(_, h)| h.first_port().is_some()) {
                    n += usize::from(a.port(h.lid) != b.port(h.lid));
                }
            }
            n
        };
        assert_eq!(changed(&su), 0);
        assert!(changed(&ft) > 0);
    }
}

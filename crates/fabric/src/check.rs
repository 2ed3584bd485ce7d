//! Checks of a set of LFTs on a fat tree, kept apart because they mean different things:
//! (1) up/down: every route goes up*, then down*, without U-turns (a property of fat-tree engines,
//! not a requirement); (2) deadlock freedom: the channel dependency graph (switch-to-switch links,
//! one dependency per pair of consecutive hops towards any destination) is acyclic (Dally &
//! Seitz). A routing loop is a cycle too. Also counts missing routes. `transition` checks a
//! re-route: old and new tables live side by side while the SMPs go out.

use serde::Serialize;

use crate::align::{align, hca_lids, par_fold};
use crate::error::Result;
use crate::lft::{Lfts, SwitchLft, NO_PATH};
use crate::model::Fabric;
use crate::topo::{Dir, Topo, NONE};

#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct CheckReport {
    /// (switch, destination) pairs checked.
    pub routes: usize,
    /// Routes that go down and then up again (U-turns), loop, or end at a wrong node.
    pub updown_violations: usize,
    /// (leaf switch, destination LID) pairs with no route, or one into a port with no link. The
    /// destinations are compute nodes and switches (a switch's own LID carries SMA traffic and
    /// ibroute/ibtracert's queries, so a leaf that cannot reach a spine's LID is a broken fabric).
    pub unreachable: usize,
    /// Of `unreachable`, the pairs whose destination is a switch's own LID.
    pub unreachable_switch_lids: usize,
    /// Routes to a switch's own LID that go down and up again (not counted as violations).
    pub switch_lid_uturns: usize,
    pub cdg_channels: usize,
    pub cdg_dependencies: usize,
    pub cdg_acyclic: bool,
    /// Every route is up*/down* (no violations).
    pub updown: bool,
    /// The verdict: the channel dependency graph is acyclic.
    pub deadlock_free: bool,
    pub first_problem: Option<String>,
}

/// A re-route's transition: while switches hold a mix of old and new tables, the dependencies
/// in use are those of every mix (an old entry here, a new one at the next switch). Acyclic: any order of updates is safe. With drop-first
/// (every changed entry is first set to port 255, drop, then to its new port) each moment uses
/// only old or only new dependencies, at the price of the packets sent to a dropped entry.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct TransitionReport {
    pub old_acyclic: bool,
    pub new_acyclic: bool,
    pub union_dependencies: usize,
    /// Old and new tables together are deadlock free in any update order.
    pub union_acyclic: bool,
    /// Entries that change (dropped for a while under drop-first).
    pub changed_entries: usize,
    /// Drop-first makes the transition deadlock free (old and new acyclic).
    pub drop_first_safe: bool,
    /// What to do: "any-order", "drop-first" or "unsafe".
    pub advice: String,
}

const UNKNOWN: u8 = 0;
const VISITING: u8 = 1;
const DOWN: u8 = 2; // from here the route only goes down
const ANY: u8 = 3; // up then down
const BAD: u8 = 4;
const NOROUTE: u8 = 5;
const UTURN: u8 = 6; // reaches the destination, going down and then up again on the way

/// Classifies the route from every switch towards `lid`.
fn classify(
    f: &Fabric,
    t: &Topo,
    tables: &[&SwitchLft],
    lid: u16,
    state: &mut [u8],
    path: &mut Vec<u32>,
) {
    state.fill(UNKNOWN);
    for start in 0..t.num_switches() as u32 {
        path.clear();
        let mut x = start;
        // Walk until a known state, then assign back along the path.
        let mut result;
        loop {
            match state[x as usize] {
                UNKNOWN => {}
                VISITING => {
                    result = BAD;
                    break;
                }
                s => {
                    result = s;
                    break;
                }
            }
            state[x as usize] = VISITING;
            path.push(x);
            let p = tables[x as usize].port(lid);
            if p == NO_PATH {
                result = NOROUTE;
                break;
            }
            if p == 0 {
                result = if f.nodes[t.sw_node[x as usize] as usize].lid == lid {
                    DOWN
                } else {
                    BAD
                };
                break;
            }
            match t.dir(x, p) {
                Dir::Hca => {
                    let h = f.nodes[t.sw_node[x as usize] as usize]
                        .remote(p)
                        .map(|r| f.nodes[r.node as usize].lid);
                    result = if h == Some(lid) { DOWN } else { BAD };
                    break;
                }
                Dir::Up | Dir::Down => x = t.remote_sw[x as usize * t.stride + p as usize],
                Dir::Unused => {
                    // A port with nothing behind it (a failed link): the packet is dropped.
                    result = NOROUTE;
                    break;
                }
            }
        }
        // path[last] is the switch whose hop produced `result` (or led to a known state).
        for &y in path.iter().rev() {
            let p = tables[y as usize].port(lid);
            let next = if p == 0 || p == NO_PATH {
                NONE
            } else {
                t.remote_sw[y as usize * t.stride + p as usize]
            };
            if next != NONE && result != BAD && result != NOROUTE {
                result = match (t.dir(y, p), result) {
                    (Dir::Down, DOWN) => DOWN,
                    (Dir::Down, _) => UTURN, // down, then up again
                    (Dir::Up, UTURN) => UTURN,
                    (Dir::Up, _) => ANY,
                    _ => BAD,
                };
            }
            state[y as usize] = result;
        }
    }
}

pub fn check(f: &Fabric, t: &Topo, lfts: &Lfts) -> Result<CheckReport> {
    let tables = align(f, t, lfts)?;
    let hca_count = hca_lids(f, t).len();
    let dests = all_dests(f, t);
    let ns = t.num_switches();
    let leaf_mask: Vec<bool> = (0..ns).map(|s| !t.hcas[s].is_empty()).collect();
    let parts = par_fold(
        dests.len(),
        || (CheckReport::default(), vec![UNKNOWN; ns], Vec::new()),
        |(r, state, path), i| {
            let lid = dests[i];
            classify(f, t, &tables, lid, state, path);
            for s in 0..ns {
                r.routes += 1;
                match state[s] {
                    // A U-turn towards a switch's own LID is how a leaf whose link to that switch
                    // failed still reaches it; towards a compute node it breaks up/down.
                    UTURN if i >= hca_count => r.switch_lid_uturns += 1,
                    BAD | UTURN => {
                        r.updown_violations += 1;
                        if r.first_problem.is_none() {
                            let n = &f.nodes[t.sw_node[s] as usize].name;
                            r.first_problem =
                                Some(format!("route from {n} to LID {lid} is not up/down"));
                        }
                    }
                    NOROUTE if leaf_mask[s] => {
                        r.unreachable += 1;
                        if i >= hca_count {
                            r.unreachable_switch_lids += 1;
                        }
                        if r.first_problem.is_none() {
                            let n = &f.nodes[t.sw_node[s] as usize].name;
                            r.first_problem = Some(format!("no route from {n} to LID {lid}"));
                        }
                    }
                    _ => {}
                }
            }
        },
    );
    let mut rep = CheckReport::default();
    for (r, _, _) in parts {
        rep.routes += r.routes;
        rep.updown_violations += r.updown_violations;
        rep.unreachable += r.unreachable;
        rep.unreachable_switch_lids += r.unreachable_switch_lids;
        rep.switch_lid_uturns += r.switch_lid_uturns;
        if rep.first_problem.is_none() {
            rep.first_problem = r.first_problem;
        }
    }
    let succ = cdg_edges(t, &tables, &dests);
    let (channels, deps, acyclic) = acyclic(t, &succ);
    rep.cdg_channels = channels;
    rep.cdg_dependencies = deps;
    rep.cdg_acyclic = acyclic;
    if !acyclic && rep.first_problem.is_none() {
        rep.first_problem = Some("the channel dependency graph has a cycle".into());
    }
    rep.updown = rep.updown_violations == 0;
    rep.deadlock_free = acyclic;
    Ok(rep)
}

pub(crate) fn all_dests(f: &Fabric, t: &Topo) -> Vec<u16> {
    let mut dests = hca_lids(f, t);
    // A switch sharing its LID with an HCA on one of its ports (a hypervisor with the PF's LID)
    // is that HCA's destination already.
    let sw: Vec<u16> = t
        .sw_node
        .iter()
        .map(|&n| f.nodes[n as usize].lid)
        .filter(|l| dests.binary_search(l).is_err())
        .collect();
    dests.extend(sw);
    dests
}

/// Checks the switch from `old` to `new` tables on fabric `f` (both aligned to its switches).
pub fn transition(f: &Fabric, t: &Topo, old: &Lfts, new: &Lfts) -> Result<TransitionReport> {
    let a = align(f, t, old)?;
    let b = align(f, t, new)?;
    let dests = all_dests(f, t);
    let ea = cdg_edges(t, &a, &dests);
    let eb = cdg_edges(t, &b, &dests);
    // Not only old and new dependencies: an old entry followed by a new one forms pairs of its own.
    let union = mixed_edges(t, &[&a, &b], &dests);
    let (_, _, old_acyclic) = acyclic(t, &ea);
    let (_, _, new_acyclic) = acyclic(t, &eb);
    let (_, union_deps, union_acyclic) = acyclic(t, &union);
    let mut changed = 0;
    for (x, y) in a.iter().zip(&b) {
        let n = x.ports.len().max(y.ports.len());
        changed += (0..n)
            .filter(|&l| x.port(l as u16) != y.port(l as u16))
            .count();
    }
    let drop_first_safe = old_acyclic && new_acyclic;
    let advice = if union_acyclic {
        "any-order"
    } else if drop_first_safe {
        "drop-first"
    } else {
        "unsafe"
    };
    Ok(TransitionReport {
        old_acyclic,
        new_acyclic,
        union_dependencies: union_deps,
        union_acyclic,
        changed_entries: changed,
        drop_first_safe,
        advice: advice.into(),
    })
}

/// The channel dependency graph over switch-to-switch channels: per channel, a bitset of the out
/// ports taken at its far switch.
pub(crate) fn cdg_edges(t: &Topo, tables: &[&SwitchLft], dests: &[u16]) -> Vec<u64> {
    mixed_edges(t, &[tables], dests)
}

/// The dependencies of every mix of the table sets `sets` (each switch may hold any one set's
/// entry while updates are on their way): for each destination, a hop by one set's entry at a
/// switch followed by a hop by any set's entry at the next switch. With one set, its CDG.
pub(crate) fn mixed_edges(t: &Topo, sets: &[&[&SwitchLft]], dests: &[u16]) -> Vec<u64> {
    let st = t.stride;
    let words = st.div_ceil(64);
    let nch = t.num_switches() * st;
    let live =
        |s: usize, p: usize| p != 0 && p < st && matches!(t.dir[s * st + p], Dir::Up | Dir::Down);
    // succ[ch] = bitset of out ports at the channel's far switch.
    let parts = par_fold(
        dests.len(),
        || vec![0u64; nch * words],
        |succ, i| {
            let lid = dests[i];
            for s in 0..t.num_switches() {
                for a in sets {
                    let p = a[s].port(lid) as usize;
                    if !live(s, p) {
                        continue;
                    }
                    let r = t.remote_sw[s * st + p] as usize;
                    for b in sets {
                        let p2 = b[r].port(lid) as usize;
                        if live(r, p2) {
                            succ[(s * st + p) * words + p2 / 64] |= 1 << (p2 % 64);
                        }
                    }
                }
            }
        },
    );
    let mut succ = vec![0u64; nch * words];
    for part in parts {
        for (a, b) in succ.iter_mut().zip(part) {
            *a |= b;
        }
    }
    succ
}

/// (channels, dependencies, acyclic) of a dependency graph from `cdg_edges`.
pub(crate) fn acyclic(t: &Topo, succ: &[u64]) -> (usize, usize, bool) {
    let st = t.stride;
    let words = st.div_ceil(64);
    let nch = t.num_switches() * st;
    let channels = (0..nch)
        .filter(|&c| matches!(t.dir[c], Dir::Up | Dir::Down))
        .count();
    let deps: usize = succ.iter().map(|w| w.count_ones() as usize).sum();
    // Iterative DFS with colours: 0 white, 1 grey, 2 black.
    let mut colour = vec![0u8; nch];
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for c0 in 0..nch {
        if colour[c0] != 0 || !matches!(t.dir[c0], Dir::Up | Dir::Down) {
            continue;
        }
        colour[c0] = 1;
        stack.push((c0, 0));
        while let Some(&mut (c, ref mut next_port)) = stack.last_mut() {
            let r = t.remote_sw[c] as usize;
            let mut pushed = false;
            while *next_port < st {
                let p2 = *next_port;
                *next_port += 1;
                if succ[c * words + p2 / 64] & (1 << (p2 % 64)) == 0 {
                    continue;
                }
                let c2 = r * st + p2;
                match colour[c2] {
                    0 => {
                        colour[c2] = 1;
                        stack.push((c2, 0));
                        pushed = true;
                        break;
                    }
                    1 => return (channels, deps, false),
                    _ => {}
                }
            }
            if !pushed {
                colour[c] = 2;
                stack.pop();
            }
        }
    }
    (channels, deps, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ftree;
    use crate::gen::Pgft;

    #[test]
    fn ftree_is_deadlock_free_and_complete() {
        let f = Pgft::new(vec![4, 2, 3], vec![1, 2, 2], vec![1, 2, 1])
            .unwrap()
            .build()
            .unwrap();
        let t = Topo::new(&f).unwrap();
        let (l, _) = ftree::route(&f).unwrap();
        let r = check(&f, &t, &l).unwrap();
        assert_eq!((r.updown_violations, r.unreachable), (0, 0), "{r:?}");
        assert!(r.cdg_acyclic && r.deadlock_free);
        assert!(r.cdg_dependencies > 0);
    }

    #[test]
    fn a_leaf_that_lost_its_link_to_a_root_still_reaches_the_roots_lid() {
        // 4-ary-2-tree, link s1-0[8]-s2-3 down: the old tables send s1-0's traffic for s2-3's
        // own LID into the dead port; the check says so. Re-routed, s1-0 reaches it through
        // another root and leaf (a U-turn, allowed for switch LIDs only), deadlock free.
        let f = Pgft::kary(4, 2).unwrap().build().unwrap();
        let fl = crate::fail::Failures {
            links: vec![crate::fail::parse_link("s1-0[8]").unwrap()],
            ..Default::default()
        };
        let (g, _) = crate::fail::apply(&f, &fl).unwrap();
        let tg = Topo::new(&g).unwrap();
        let kept = crate::fail::surviving(&ftree::route(&f).unwrap().0, &g);
        let r = check(&g, &tg, &kept).unwrap();
        let spine = g.nodes[g.find("s2-3").unwrap() as usize].lid;
        assert_eq!(r.unreachable_switch_lids, 2, "{r:?}");
        let first = r.first_problem.clone().unwrap_or_default();
        assert!(first.starts_with("no route from s1-"), "{r:?}");
        let (new, _) = ftree::route(&g).unwrap();
        let r = check(&g, &tg, &new).unwrap();
        assert_eq!((r.unreachable, r.updown_violations), (0, 0), "{r:?}");
        assert!(r.deadlock_free && r.switch_lid_uturns > 0);
        let s10 = g.nodes[g.find("s1-0").unwrap() as usize].guid;
        let row = new.switches.iter().find(|s| s.guid == s10).unwrap();
        assert_ne!(row.port(spine), 8);
        assert_ne!(row.port(spine), NO_PATH);
    }

    #[test]
    fn a_u_turn_is_found() {
        // 2-ary-2-tree: make leaf s1-1 send h-0's traffic up to root s2-1 while s2-1 sends it back
        // down to s1-1 -> loop; and make root s2-0 send h-2 down to s1-0 (which goes up): U-turn.
        let f = Pgft::kary(2, 2).unwrap().build().unwrap();
        let t = Topo::new(&f).unwrap();
        let (mut l, _) = ftree::route(&f).unwrap();
        let lid_h2 = f.nodes[f.find("h-2").unwrap() as usize].lid;
        let g = f.nodes[f.find("s2-0").unwrap() as usize].guid;
        let s = l.switches.iter_mut().find(|s| s.guid == g).unwrap();
        s.ports[lid_h2 as usize] = 1; // towards s1-0, which routes h-2 up
        let r = check(&f, &t, &l).unwrap();
        assert!(r.updown_violations > 0 && !r.updown);
        assert!(!r.deadlock_free);
        assert!(r.first_problem.unwrap().contains("not up/down"));
    }

    #[test]
    fn a_u_turn_alone_is_not_a_deadlock() {
        // 4-ary-2-tree: root s2-0 sends h-15 down to s1-0, which sends it up to s2-3. The route
        // is not up/down, but no cycle of channel dependencies follows from one U-turn.
        let f = Pgft::kary(4, 2).unwrap().build().unwrap();
        let t = Topo::new(&f).unwrap();
        let (mut l, _) = ftree::route(&f).unwrap();
        let lid = f.nodes[f.find("h-15").unwrap() as usize].lid as usize;
        let guid = |n: &str| f.nodes[f.find(n).unwrap() as usize].guid;
        let (g0, g1) = (guid("s2-0"), guid("s1-0"));
        l.switches.iter_mut().find(|s| s.guid == g0).unwrap().ports[lid] = 1;
        l.switches.iter_mut().find(|s| s.guid == g1).unwrap().ports[lid] = 8;
        let r = check(&f, &t, &l).unwrap();
        assert!(!r.updown && r.cdg_acyclic && r.deadlock_free, "{r:?}");
    }

    #[test]
    fn transitions_between_two_routings() {
        let f = Pgft::kary(4, 2).unwrap().build().unwrap();
        let t = Topo::new(&f).unwrap();
        let (a, _) = ftree::route(&f).unwrap();
        let same = transition(&f, &t, &a, &a).unwrap();
        assert_eq!(
            (same.changed_entries, same.advice.as_str()),
            (0, "any-order")
        );
        // Two up/down routings of a 2-level tree never form a cycle together.
        let (b, _) = crate::slimupdate::route(&f, &t, None).unwrap();
        let tr = transition(&f, &t, &a, &b).unwrap();
        assert!(tr.union_acyclic && tr.drop_first_safe);
    }

    #[test]
    fn non_fat_trees_are_rejected() {
        // A ring of three switches has no levels.
        let mut f = Fabric::default();
        use crate::model::Kind;
        let s: Vec<u32> = (0..3)
            .map(|i| f.add_node(Kind::Switch, format!("s{i}"), 10 + i as u64, 4))
            .collect();
        let h: Vec<u32> = (0..3)
            .map(|i| f.add_node(Kind::Hca, format!("h{i}"), 100 + 2 * i as u64, 1))
            .collect();
        for i in 0..3 {
            f.connect(s[i], 1, h[i], 1).unwrap();
            f.connect(s[i], 2, s[(i + 1) % 3], 3).unwrap();
        }
        f.assign_lids();
        let e = Topo::new(&f).unwrap_err().0;
        assert!(e.contains("not a fat tree"), "{e}");
    }
}

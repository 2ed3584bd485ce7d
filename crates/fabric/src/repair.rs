//! The least change that makes tables in place route a changed fabric again: every entry that
//! still leads to its destination stays, and only the broken ones get a new port.
//!
//! Per destination (a compute node's LID at its leaf, or a switch's own LID at the switch):
//! - its ancestors (the switches from which it can be reached going down only) must route down
//!   to a child that is itself an ancestor; an ancestor whose entry does not (its down link
//!   failed, or it routed up) takes its least-loaded down port to such a child, nearest the
//!   destination first;
//! - every other switch keeps its entry while following the entries from it reaches the
//!   destination over live links; one that does not, taken from the roots down, goes up to the
//!   least-loaded port whose parent reaches it; if none does, the entry stays as it was (a frame
//!   for that destination is dropped there either way) and the switches below route around it.
//! - before that, for a switch's own LID only, a switch whose entry leads into a link that is
//!   gone takes a U-turn: down to a child that goes up to another parent that reaches the switch
//!   (two entries changed, where moving everyone who routed through it would change one on every
//!   leaf).
//!
//! Routes to compute nodes that were up*/down* therefore stay so: a repaired ancestor goes down
//! towards the destination, a repaired other switch goes up, and nothing that goes down leads to
//! a switch that goes up. U-turns towards switch LIDs are what decision 25 allows for management
//! traffic; lanes's channel dependency check judges the result, and the repair is redone without
//! them if it finds a cycle. Entries of LIDs no longer in the fabric are left as they were
//! (nothing reaches them; the same node coming back with its LID finds its routes in place).
//! Switch LIDs a leaf still cannot reach get the shortest detour of `fill::repair_switch_lids`.

use crate::lft::{Lfts, NO_PATH};
use crate::model::Fabric;
use crate::topo::{Dir, Topo, NONE};

/// What the repair changed and what it could not reach.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Repair {
    /// Entries given a new port (or no route).
    pub entries_changed: usize,
    /// (leaf, compute-node LID) pairs with no up*/down* route left.
    pub unreachable: usize,
    /// Switches routed to a switch LID by a U-turn through a child.
    pub switch_lid_uturns: usize,
    /// U-turns the repair found but dropped, the check having found them cyclic.
    pub uturns_dropped: usize,
}

/// A destination LID, the switch it hangs off and the port there (0: the switch itself).
#[derive(Clone, Copy)]
struct Dest {
    lid: u16,
    origin: u32,
    local: u8,
    compute_node: bool,
}

fn dests(f: &Fabric, t: &Topo) -> Vec<Dest> {
    let mut v = Vec::new();
    for (s, &n) in t.sw_node.iter().enumerate() {
        let lid = f.nodes[n as usize].lid;
        if lid != 0 {
            v.push(Dest {
                lid,
                origin: s as u32,
                local: 0,
                compute_node: false,
            });
        }
        for &(p, h) in &t.hcas[s] {
            v.push(Dest {
                lid: f.nodes[h as usize].lid,
                origin: s as u32,
                local: p,
                compute_node: true,
            });
        }
    }
    v
}

/// `old`'s tables for the switches of `f`, in `Topo` order, each as wide as the widest of `f`'s
/// LIDs and `old`'s tables (a switch `old` lacks starts without routes).
pub fn aligned(f: &Fabric, old: &Lfts) -> Lfts {
    let idx = old.by_guid();
    let mut out = Lfts::empty(f);
    let width = out.width().max(old.width());
    for s in &mut out.switches {
        s.ports.resize(width, NO_PATH);
        if let Some(&i) = idx.get(&s.guid) {
            let o = &old.switches[i].ports;
            s.ports[..o.len()].copy_from_slice(o);
        }
    }
    out
}

/// Direction of port `p` of switch `s`; Unused for no route and ports the switch does not have.
fn port_dir(t: &Topo, s: u32, p: u8) -> Dir {
    if (p as usize) < t.stride {
        t.dir(s, p)
    } else {
        Dir::Unused
    }
}

const UNKNOWN: u8 = 0;
const REACHES: u8 = 1;
const BROKEN: u8 = 2;

/// Per-column work space.
struct Column<'a> {
    t: &'a Topo,
    col: Vec<u8>,
    state: Vec<u8>,
    ancestor: Vec<bool>,
    order: Vec<u32>,
    path: Vec<u32>,
    /// Destinations routed over each switch port (switch * stride + port), kept up to date.
    load: &'a mut [u32],
    changed: Vec<u32>,
    /// Switch LIDs may be repaired with a U-turn (see `uturn`).
    allow_uturns: bool,
    uturns: usize,
    /// Entries of this column left as they were although they no longer reach.
    stale: usize,
}

impl Column<'_> {
    fn set(&mut self, s: u32, p: u8) {
        let st = self.t.stride;
        let old = self.col[s as usize];
        if old == p {
            return;
        }
        if (old as usize) < st {
            let l = &mut self.load[s as usize * st + old as usize];
            *l = l.saturating_sub(1);
        }
        if (p as usize) < st {
            self.load[s as usize * st + p as usize] += 1;
        }
        self.col[s as usize] = p;
        self.changed.push(s);
    }

    /// The least-loaded port of `s` among `ports` (ties: the lowest).
    fn least_loaded(&self, s: u32, ports: impl Iterator<Item = u8>) -> Option<u8> {
        let st = self.t.stride;
        ports.min_by_key(|&p| (self.load[s as usize * st + p as usize], p))
    }

    /// Ancestors of the destination, nearest first (breadth first over up links).
    fn mark_ancestors(&mut self, d: &Dest) {
        self.ancestor.fill(false);
        self.order.clear();
        self.order.push(d.origin);
        self.ancestor[d.origin as usize] = true;
        let mut head = 0;
        while head < self.order.len() {
            let x = self.order[head];
            head += 1;
            for g in &self.t.up[x as usize] {
                if !self.ancestor[g.remote as usize] {
                    self.ancestor[g.remote as usize] = true;
                    self.order.push(g.remote);
                }
            }
        }
    }

    /// Whether following the entries from `s` reaches the destination (memoised in `state`).
    fn reaches(&mut self, s: u32) -> bool {
        let t = self.t;
        self.path.clear();
        let mut x = s;
        let verdict = loop {
            match self.state[x as usize] {
                REACHES => break REACHES,
                BROKEN => break BROKEN,
                _ => {}
            }
            if self.path.len() > t.num_switches() {
                break BROKEN; // a loop
            }
            self.path.push(x);
            let p = self.col[x as usize];
            if p == NO_PATH || p == 0 {
                break BROKEN; // the destination's own switch is an ancestor, marked already
            }
            match port_dir(t, x, p) {
                Dir::Up | Dir::Down => {
                    let r = t.remote_sw[x as usize * t.stride + p as usize];
                    if r == NONE {
                        break BROKEN;
                    }
                    x = r;
                }
                _ => break BROKEN,
            }
        };
        for &y in &self.path {
            self.state[y as usize] = verdict;
        }
        verdict == REACHES
    }

    /// For a switch LID only: `s`, whose entry leads into a link that is gone, goes down to a child
    /// that goes up to another parent reaching the destination; returns whether it found one. Child and parent are the first in group order, the order in which
    /// `fill::repair_switch_lids` searches its detours: the detour the other way (from the
    /// destination to `s`) then crosses the same two links, and the two U-turns form no cycle.
    fn uturn(&mut self, s: u32) -> bool {
        let t = self.t;
        for g in &t.down[s as usize] {
            let c = g.remote;
            let Some(p) = self.least_loaded(s, g.ports.iter().copied()) else {
                continue;
            };
            // The child keeps an up route of its own that reaches without `s`.
            let pc = self.col[c as usize];
            let keeps = port_dir(t, c, pc) == Dir::Up && {
                let r = t.remote_sw[c as usize * t.stride + pc as usize];
                r != NONE && r != s && self.reaches(r)
            };
            if !keeps {
                let Some(pg) = t.up[c as usize]
                    .iter()
                    .find(|pg| pg.remote != s && self.reaches(pg.remote))
                else {
                    continue;
                };
                let Some(q) = self.least_loaded(c, pg.ports.iter().copied()) else {
                    continue;
                };
                self.set(c, q);
            }
            self.state[c as usize] = REACHES;
            self.set(s, p);
            self.state[s as usize] = REACHES;
            self.uturns += 1;
            return true;
        }
        false
    }

    /// Repairs one destination's column; returns the leaves left without a route.
    fn repair(&mut self, d: &Dest) -> usize {
        let t = self.t;
        self.mark_ancestors(d);
        self.state.fill(UNKNOWN);
        self.set(d.origin, d.local);
        self.state[d.origin as usize] = REACHES;
        // Ancestors, nearest the destination first: down to an ancestor child.
        for i in 1..self.order.len() {
            let a = self.order[i];
            let p = self.col[a as usize];
            let ok = port_dir(t, a, p) == Dir::Down && {
                let r = t.remote_sw[a as usize * t.stride + p as usize];
                r != NONE && self.ancestor[r as usize]
            };
            if !ok {
                let ports: Vec<u8> = t.down[a as usize]
                    .iter()
                    .filter(|g| self.ancestor[g.remote as usize])
                    .flat_map(|g| g.ports.iter().copied())
                    .collect();
                if let Some(q) = self.least_loaded(a, ports.into_iter()) {
                    self.set(a, q);
                }
            }
            self.state[a as usize] = REACHES;
        }
        // A switch LID behind a link that is gone: U-turns first, nearest the leaves first, so
        // that whoever routed through the switch that lost the link still reaches it.
        if !d.compute_node && self.allow_uturns {
            for level in (0..t.nlevels).rev() {
                for &s in &t.by_level[level] {
                    let p = self.col[s as usize];
                    if !self.ancestor[s as usize]
                        && p != NO_PATH
                        && p != 0
                        && port_dir(t, s, p) == Dir::Unused
                    {
                        self.uturn(s);
                    }
                }
            }
            // Walks memoised before the U-turns may have ended at a switch that now reaches.
            for s in 0..t.num_switches() {
                if self.state[s] == BROKEN {
                    self.state[s] = UNKNOWN;
                }
            }
        }
        // The others, from the roots down: keep what reaches, else up to a parent that reaches.
        let mut stuck_leaves = 0;
        for level in 0..t.nlevels {
            for &s in &t.by_level[level] {
                if self.ancestor[s as usize] || self.reaches(s) {
                    continue;
                }
                let ports: Vec<u8> = t.up[s as usize]
                    .iter()
                    .filter(|g| self.state[g.remote as usize] == REACHES)
                    .flat_map(|g| g.ports.iter().copied())
                    .collect();
                if let Some(q) = self.least_loaded(s, ports.into_iter()) {
                    self.set(s, q);
                    self.state[s as usize] = REACHES;
                } else {
                    // No route from here: the entry stays as it was (a frame for the destination
                    // is dropped either way) and nobody is routed through this switch.
                    self.state[s as usize] = BROKEN;
                    if self.col[s as usize] != NO_PATH {
                        self.stale += 1;
                    }
                    if !t.hcas[s as usize].is_empty() {
                        stuck_leaves += 1;
                    }
                }
            }
        }
        stuck_leaves
    }
}

/// For the destination LIDs of `f` that `wanted` accepts: whether `tables` (aligned to `f`, see
/// `aligned`) route it with nothing to repair and no entry that no longer reaches it.
pub fn intact_lids(
    f: &Fabric,
    t: &Topo,
    tables: &Lfts,
    wanted: impl Fn(u16) -> bool,
) -> Vec<(u16, bool)> {
    let ns = t.num_switches();
    let mut load = vec![0u32; ns * t.stride];
    let mut c = Column {
        t,
        col: vec![NO_PATH; ns],
        state: vec![UNKNOWN; ns],
        ancestor: vec![false; ns],
        order: Vec::new(),
        path: Vec::new(),
        load: &mut load,
        changed: Vec::new(),
        allow_uturns: false,
        uturns: 0,
        stale: 0,
    };
    dests(f, t)
        .iter()
        .filter(|d| wanted(d.lid))
        .map(|d| {
            for (s, sw) in tables.switches.iter().enumerate() {
                c.col[s] = sw.port(d.lid);
            }
            c.changed.clear();
            c.stale = 0;
            let stuck = c.repair(d);
            (d.lid, stuck == 0 && c.stale == 0 && c.changed.is_empty())
        })
        .collect()
}

/// Repairs `old` (tables of any earlier state of the fabric) for the fabric `f` as it is now.
/// Tables come back in `f`'s switch order. Switch LIDs are first repaired with U-turns where a
/// switch has nothing else; if lanes's check then finds the channel dependency graph cyclic, the
/// repair is redone without them.
pub fn repair(f: &Fabric, t: &Topo, old: &Lfts) -> (Lfts, Repair) {
    let (lfts, rep) = repair_with(f, t, old, true);
    if rep.switch_lid_uturns == 0 || crate::check::check(f, t, &lfts).is_ok_and(|c| c.deadlock_free)
    {
        return (lfts, rep);
    }
    let (lfts, mut without) = repair_with(f, t, old, false);
    without.uturns_dropped = rep.switch_lid_uturns;
    (lfts, without)
}

/// The repair with or without U-turns towards switch LIDs, unchecked (a caller that checks the
/// tables anyway redoes it without U-turns when they make a cycle).
pub fn repair_with(f: &Fabric, t: &Topo, old: &Lfts, allow_uturns: bool) -> (Lfts, Repair) {
    let mut lfts = aligned(f, old);
    let ns = t.num_switches();
    let st = t.stride;
    let mut load = vec![0u32; ns * st];
    for (s, sw) in lfts.switches.iter().enumerate() {
        for &p in &sw.ports {
            if (p as usize) < st && p != 0 {
                load[s * st + p as usize] += 1;
            }
        }
    }
    let mut c = Column {
        t,
        col: vec![NO_PATH; ns],
        state: vec![UNKNOWN; ns],
        ancestor: vec![false; ns],
        order: Vec::new(),
        path: Vec::new(),
        load: &mut load,
        changed: Vec::new(),
        allow_uturns,
        uturns: 0,
        stale: 0,
    };
    let mut rep = Repair::default();
    for d in dests(f, t) {
        for (s, sw) in lfts.switches.iter().enumerate() {
            c.col[s] = sw.ports[d.lid as usize];
        }
        c.changed.clear();
        let stuck = c.repair(&d);
        if d.compute_node {
            rep.unreachable += stuck;
        }
        c.changed.sort_unstable();
        c.changed.dedup();
        for &s in &c.changed {
            let e = &mut lfts.switches[s as usize].ports[d.lid as usize];
            if *e != c.col[s as usize] {
                *e = c.col[s as usize];
                rep.entries_changed += 1;
            }
        }
    }
    rep.switch_lid_uturns = c.uturns;
    rep.entries_changed += crate::fill::repair_switch_lids(f, t, &mut lfts);
    (lfts, rep)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check;
    use crate::fail::{self, changed_blocks, Failures};
    use crate::ftree;
    use crate::gen::Pgft;
    use crate::lft::diff;

    fn failed(f: &Fabric, fl: Failures) -> Fabric {
        fail::apply(f, &fl).unwrap().0
    }

    /// Whether following `lfts` from switch `name` reaches `lid` on `g`.
    fn reaches(g: &Fabric, lfts: &Lfts, name: &str, lid: u16) -> bool {
        let idx = lfts.by_guid();
        let mut n = g.find(name).unwrap();
        for _ in 0..16 {
            let node = &g.nodes[n as usize];
            if node.lid == lid {
                return true;
            }
            if !node.is_switch() {
                return false;
            }
            let p = lfts.switches[idx[&node.guid]].port(lid);
            if p == 0 || p == NO_PATH {
                return false;
            }
            match node.remote(p) {
                Some(r) => n = r.node,
                None => return false,
            }
        }
        false
    }

    #[test]
    fn tables_that_route_the_fabric_are_left_alone() {
        for f in [
            Pgft::kary(4, 3).unwrap().build().unwrap(),
            Pgft::new(vec![4, 4], vec![1, 2], vec![1, 2])
                .unwrap()
                .build()
                .unwrap(),
        ] {
            let t = Topo::new(&f).unwrap();
            let (ft, _) = ftree::route(&f).unwrap();
            let (r, rep) = repair(&f, &t, &ft);
            assert_eq!(rep, Repair::default());
            assert_eq!(r, ft);
        }
    }

    #[test]
    fn a_failed_up_link_changes_only_entries_that_no_longer_reach() {
        for (f, leaf, port) in [
            (Pgft::kary(4, 2).unwrap().build().unwrap(), "s1-0", 6),
            (Pgft::kary(4, 3).unwrap().build().unwrap(), "s2-0", 6),
        ] {
            let (old, _) = ftree::route(&f).unwrap();
            let g = failed(
                &f,
                Failures {
                    links: vec![(leaf.into(), port)],
                    ..Default::default()
                },
            );
            let t = Topo::new(&g).unwrap();
            let (new, rep) = repair(&g, &t, &old);
            assert_eq!(rep.unreachable, 0);
            let c = check::check(&g, &t, &new).unwrap();
            assert!(c.deadlock_free && c.unreachable == 0, "{c:?}");
            let idx = old.by_guid();
            for s in &new.switches {
                let o = &old.switches[idx[&s.guid]];
                for lid in 1..s.ports.len() as u16 {
                    if o.port(lid) != s.port(lid) {
                        assert!(
                            !reaches(&g, &old, &s.name, lid),
                            "{} LID {lid}: {} -> {} although it still reached",
                            s.name,
                            o.port(lid),
                            s.port(lid)
                        );
                    }
                }
            }
            // Fewer entries and blocks than ftree's or SlimUpdate's re-route.
            let (ft, _) = ftree::route(&g).unwrap();
            let (su, _) = crate::slimupdate::route_balanced(&g, &t, Some(&old)).unwrap();
            let d_r = diff(&old, &new).unwrap();
            assert!(d_r.entries < diff(&old, &ft).unwrap().entries, "{d_r:?}");
            assert!(d_r.entries < diff(&old, &su).unwrap().entries, "{d_r:?}");
            assert!(changed_blocks(&old, &new).0 <= changed_blocks(&old, &su).0);
        }
    }

    #[test]
    fn a_failed_node_keeps_its_entries_and_a_failed_switch_is_routed_around() {
        let f = Pgft::kary(4, 3).unwrap().build().unwrap();
        let (old, _) = ftree::route(&f).unwrap();
        let g = failed(
            &f,
            Failures {
                nodes: vec!["h-5".into()],
                ..Default::default()
            },
        );
        let t = Topo::new(&g).unwrap();
        let (new, rep) = repair(&g, &t, &old);
        assert_eq!(rep.entries_changed, 0);
        assert_eq!(changed_blocks(&old, &new).0, 0);
        let g = failed(
            &f,
            Failures {
                switches: vec!["s1-1".into()],
                ..Default::default()
            },
        );
        let t = Topo::new(&g).unwrap();
        let (new, rep) = repair(&g, &t, &old);
        assert_eq!(rep.unreachable, 0);
        let c = check::check(&g, &t, &new).unwrap();
        assert!(c.deadlock_free && c.unreachable == 0, "{c:?}");
        let (su, _) = crate::slimupdate::route_balanced(&g, &t, Some(&old)).unwrap();
        assert!(diff(&old, &new).unwrap().entries <= diff(&old, &su).unwrap().entries);
    }
}

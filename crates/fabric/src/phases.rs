//! Drop-first in two phases: when old and new tables mixed (switches updated one by one) could form
//! a cycle of channel dependencies, send a first set of tables in which only the entries whose new
//! value could close such a cycle are set to drop (port 255), the other changes already made; then
//! the new tables. Each phase is a complete set of LFTs (OpenSM's dump format, so `opensm -R file
//! -U` loads it), and each transition (old to phase 1, phase 1 to new) is checked over every mix of
//! its two sides.
//!
//! Which entries: take the dependency graph of every old/new mix and its strongly connected
//! components. A new entry whose out channel lies in no cyclic component adds only dependencies
//! outside cycles, so it can go in phase 1. Then old-to-phase-1 mixes use old dependencies plus
//! such harmless ones (acyclic when the old tables are), and phase-1-to-new mixes use only new
//! dependencies (each phase-1 entry is unchanged, dropped, or new).

use serde::Serialize;

use crate::align::align;
use crate::check::{acyclic, all_dests, cdg_edges, mixed_edges};
use crate::error::Result;
use crate::fail::changed_blocks;
use crate::lft::{Lfts, NO_PATH};
use crate::model::Fabric;
use crate::topo::{Dir, Topo};

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct PhaseReport {
    pub old_acyclic: bool,
    pub new_acyclic: bool,
    /// Every mix of old and new is acyclic: one phase, any update order.
    pub any_order: bool,
    pub changed_entries: usize,
    /// Entries dropped in phase 1 (changed in phase 2), and changes made directly in phase 1.
    pub dropped_entries: usize,
    pub direct_entries: usize,
    /// LFT blocks (SMPs) each phase sends, and to how many switches.
    pub phase1_smps: usize,
    pub phase1_switches: usize,
    pub phase2_smps: usize,
    pub phase2_switches: usize,
    /// The two transitions, each over every mix of its two sides.
    pub old_to_phase1_acyclic: bool,
    pub phase1_to_new_acyclic: bool,
}

/// Tarjan's strongly connected components of a bitset graph from `mixed_edges`, iteratively:
/// per channel, whether it lies on a cycle (a component of more than one channel or a self-loop).
fn on_cycle(t: &Topo, succ: &[u64]) -> Vec<bool> {
    let st = t.stride;
    let words = st.div_ceil(64);
    let nch = t.num_switches() * st;
    let next_of = |c: usize, from: usize| -> Option<(usize, usize)> {
        let r = t.remote_sw[c] as usize;
        (from..st)
            .find(|&p| succ[c * words + p / 64] & (1 << (p % 64)) != 0)
            .map(|p| (r * st + p, p + 1))
    };
    const UNSEEN: u32 = u32::MAX;
    let mut index = vec![UNSEEN; nch];
    let mut low = vec![0u32; nch];
    let mut on_stack = vec![false; nch];
    let mut stack: Vec<usize> = Vec::new();
    let mut cyclic = vec![false; nch];
    let mut counter = 0u32;
    for root in 0..nch {
        if index[root] != UNSEEN || !matches!(t.dir[root], Dir::Up | Dir::Down) {
            continue;
        }
        // Call stack of (channel, next port to look at).
        let mut calls: Vec<(usize, usize)> = vec![(root, 0)];
        index[root] = counter;
        low[root] = counter;
        counter += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (c, ref mut from)) = calls.last_mut() {
            match next_of(c, *from) {
                Some((w, after)) => {
                    *from = after;
                    if w == c {
                        cyclic[c] = true;
                    }
                    if index[w] == UNSEEN {
                        index[w] = counter;
                        low[w] = counter;
                        counter += 1;
                        stack.push(w);
                        on_stack[w] = true;
                        calls.push((w, 0));
                    } else if on_stack[w] {
                        low[c] = low[c].min(index[w]);
                    }
                }
                None => {
                    calls.pop();
                    if let Some(&(parent, _)) = calls.last() {
                        low[parent] = low[parent].min(low[c]);
                    }
                    if low[c] == index[c] {
                        let mut members = Vec::new();
                        while let Some(x) = stack.pop() {
                            on_stack[x] = false;
                            members.push(x);
                            if x == c {
                                break;
                            }
                        }
                        if members.len() > 1 {
                            for x in members {
                                cyclic[x] = true;
                            }
                        }
                    }
                }
            }
        }
    }
    cyclic
}

/// Phase 1 tables for going from `old` to `new` on fabric `f`, and what each phase costs.
pub fn plan(f: &Fabric, t: &Topo, old: &Lfts, new: &Lfts) -> Result<(Lfts, PhaseReport)> {
    let a = align(f, t, old)?;
    let b = align(f, t, new)?;
    let dests = all_dests(f, t);
    let (_, _, old_acyclic) = acyclic(t, &cdg_edges(t, &a, &dests));
    let (_, _, new_acyclic) = acyclic(t, &cdg_edges(t, &b, &dests));
    let mixed = mixed_edges(t, &[&a, &b], &dests);
    let (_, _, any_order) = acyclic(t, &mixed);
    let cyclic = on_cycle(t, &mixed);
    let st = t.stride;
    // Phase 1 starts as the new tables (switch order and sizes of `new`); risky changes drop.
    let mut phase1 = new.clone();
    let by_guid = phase1.by_guid();
    let (mut changed, mut dropped) = (0, 0);
    for (s, (x, y)) in a.iter().zip(&b).enumerate() {
        let i = by_guid[&y.guid];
        let n = x.ports.len().max(y.ports.len());
        for lid in 1..n {
            let (po, pn) = (x.port(lid as u16), y.port(lid as u16));
            if po == pn {
                continue;
            }
            changed += 1;
            let p = pn as usize;
            let risky = p != 0
                && p < st
                && matches!(t.dir[s * st + p], Dir::Up | Dir::Down)
                && cyclic[s * st + p];
            if risky {
                let row = &mut phase1.switches[i].ports;
                if row.len() <= lid {
                    row.resize(lid + 1, NO_PATH);
                }
                row[lid] = NO_PATH;
                dropped += 1;
            }
        }
    }
    let p1 = align(f, t, &phase1)?;
    let (_, _, old_to_phase1_acyclic) = acyclic(t, &mixed_edges(t, &[&a, &p1], &dests));
    let (_, _, phase1_to_new_acyclic) = acyclic(t, &mixed_edges(t, &[&p1, &b], &dests));
    let (phase1_smps, _, phase1_switches) = changed_blocks(old, &phase1);
    let (phase2_smps, _, phase2_switches) = changed_blocks(&phase1, new);
    Ok((
        phase1,
        PhaseReport {
            old_acyclic,
            new_acyclic,
            any_order,
            changed_entries: changed,
            dropped_entries: dropped,
            direct_entries: changed - dropped,
            phase1_smps,
            phase1_switches,
            phase2_smps,
            phase2_switches,
            old_to_phase1_acyclic,
            phase1_to_new_acyclic,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check;
    use crate::ftree;
    use crate::gen::Pgft;

    /// ftree on a 4-ary-2-tree with some entries changed: (switch, destination, port).
    fn tables(f: &Fabric, changes: &[(&str, &str, u8)]) -> Lfts {
        let (mut l, _) = ftree::route(f).unwrap();
        for &(sw, dst, port) in changes {
            let lid = f.nodes[f.find(dst).unwrap() as usize].lid as usize;
            let g = f.nodes[f.find(sw).unwrap() as usize].guid;
            l.switches.iter_mut().find(|s| s.guid == g).unwrap().ports[lid] = port;
        }
        l
    }

    #[test]
    fn a_cycle_only_mixes_close_is_broken_by_dropping_its_entries_first() {
        // Channels A = s1-0>s2-0, B = s2-0>s1-1, C = s1-1>s2-1, D = s2-1>s1-0. The old tables
        // turn h-8's routes at s1-1 (A>B>C), the new ones h-12's at s1-0 (C>D>A): each alone is
        // acyclic, a switch holding old h-8 entries beside one with new h-12 entries is not.
        let f = Pgft::kary(4, 2).unwrap().build().unwrap();
        let t = Topo::new(&f).unwrap();
        let old = tables(
            &f,
            &[
                ("s1-0", "h-8", 5),
                ("s2-0", "h-8", 2),
                ("s1-1", "h-8", 6),
                ("s2-1", "h-8", 3),
            ],
        );
        let new = tables(
            &f,
            &[
                ("s1-1", "h-12", 6),
                ("s2-1", "h-12", 1),
                ("s1-0", "h-12", 5),
                ("s2-0", "h-12", 4),
            ],
        );
        let tr = check::transition(&f, &t, &old, &new).unwrap();
        assert!(tr.old_acyclic && tr.new_acyclic && !tr.union_acyclic);
        assert_eq!(tr.advice, "drop-first");
        let (p1, r) = plan(&f, &t, &old, &new).unwrap();
        assert!(
            !r.any_order && r.old_to_phase1_acyclic && r.phase1_to_new_acyclic,
            "{r:?}"
        );
        assert_eq!(
            (r.changed_entries, r.dropped_entries, r.direct_entries),
            (4, 3, 1)
        );
        assert_eq!(
            (
                r.phase1_smps,
                r.phase1_switches,
                r.phase2_smps,
                r.phase2_switches
            ),
            (3, 3, 2, 2)
        );
        // The dropped entries are changed entries whose new port is on the mixed cycle.
        let lid = |n: &str| f.nodes[f.find(n).unwrap() as usize].lid;
        let drops: Vec<(String, u16)> = p1
            .switches
            .iter()
            .flat_map(|s| {
                (1..s.ports.len())
                    .filter(|&l| {
                        s.ports[l] == NO_PATH
                            && new
                                .switches
                                .iter()
                                .any(|n| n.guid == s.guid && n.ports[l] != NO_PATH)
                    })
                    .map(move |l| (s.name.clone(), l as u16))
            })
            .collect();
        assert!(
            drops
                .iter()
                .all(|(_, l)| *l == lid("h-8") || *l == lid("h-12")),
            "{drops:?}"
        );
        // No change: one phase, nothing to send.
        let same = plan(&f, &t, &old, &old).unwrap().1;
        assert!(same.any_order && same.dropped_entries == 0 && same.phase1_smps == 0);
    }
}

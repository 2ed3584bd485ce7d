//! OpenSM-style fat-tree routing ("ftree"), as the thesis describes it (notes: baseline 1-7):
//! leaves in OpenSM's tuple order (see `topo`), compute nodes of a leaf in slot order (port order
//! unless a node order is given, see NoFTree), one destination at a time. Going up, the
//! least-loaded up port group (ties: the remote switch with the lowest tuple, as OpenSM's
//! comparator) and its least-loaded port are taken (one root per destination); every switch reached routes down through
//! the link it was reached by. From each switch on the way up the other down groups get upward
//! routes towards it (least-loaded port per group), recursively. Leaves with fewer nodes than the
//! fullest leaf route "dummy" destinations for the missing slots, which only move counters, so that
//! partially populated trees stay balanced (OpenSM does the same). Switches outside the chosen
//! sub-tree and switch LIDs are completed by `fill` without counters.

use std::time::Instant;

use serde::Serialize;

use crate::bail;
use crate::error::Result;
use crate::fill::{fill_column, Scratch};
use crate::lft::{Lfts, NO_PATH};
use crate::model::Fabric;
use crate::topo::Topo;

/// Per-leaf routing order: Some((port, hca node)) or None for a dummy slot.
pub type Slots = Vec<Vec<Option<(u8, u32)>>>;

#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    pub engine: String,
    pub switches: usize,
    pub compute_nodes: usize,
    pub lids: usize,
    pub dummy_routes: usize,
    pub seconds: f64,
    /// Named phases of the engine, if it has several.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub phase_seconds: Vec<(String, f64)>,
    /// Engine-specific figures (e.g. vswitch-ftree's hypervisor and VM counts).
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// Port-usage counters, one per directed link end, plus per port group.
pub struct Counters {
    /// On a switch's up port: destinations routed down through that link.
    pub port_down: Vec<u32>,
    /// On a switch's down port: destinations routed up through that link.
    pub port_up: Vec<u32>,
    pub group: Vec<u32>,
}

impl Counters {
    pub fn new(t: &Topo) -> Counters {
        let n = t.num_switches() * t.stride;
        Counters {
            port_down: vec![0; n],
            port_up: vec![0; n],
            group: vec![0; t.ngroups],
        }
    }
}

/// Least-loaded index among `len` candidates (first wins ties).
#[inline]
fn argmin(len: usize, load: impl Fn(usize) -> u32) -> usize {
    let mut best = 0;
    let mut best_load = u32::MAX;
    for i in 0..len {
        let l = load(i);
        if l < best_load {
            best = i;
            best_load = l;
        }
    }
    best
}

/// Routes one destination (or a dummy when `col` is None) from `leaf`, where it sits behind `port`.
/// Every port the route takes has its counter raised by `w` (1 for ftree; vswitch-ftree weights).
pub fn route_one(
    t: &Topo,
    c: &mut Counters,
    leaf: u32,
    port: u8,
    mut col: Option<&mut [u8]>,
    w: u32,
) {
    let st = t.stride;
    if let Some(col) = col.as_deref_mut() {
        col[leaf as usize] = port;
    }
    let mut stack: Vec<u32> = Vec::new();
    let mut cur = leaf;
    loop {
        if let Some(col) = col.as_deref_mut() {
            // Upward routes from the other children of `cur`, recursively downwards.
            stack.push(cur);
            while let Some(x) = stack.pop() {
                for g in &t.down[x as usize] {
                    let ch = g.remote as usize;
                    if col[ch] != NO_PATH {
                        continue;
                    }
                    let k = argmin(g.ports.len(), |i| {
                        c.port_up[x as usize * st + g.ports[i] as usize]
                    });
                    col[ch] = g.rports[k];
                    c.port_up[x as usize * st + g.ports[k] as usize] += w;
                    c.group[g.id as usize] += w;
                    stack.push(g.remote);
                }
            }
        }
        let ups = &t.up[cur as usize];
        if ups.is_empty() {
            break;
        }
        // OpenSM orders up groups by load, ties by the remote switch's tuple (our group order).
        let g = &ups[argmin(ups.len(), |i| c.group[ups[i].id as usize])];
        let k = argmin(g.ports.len(), |i| {
            c.port_down[cur as usize * st + g.ports[i] as usize]
        });
        c.port_down[cur as usize * st + g.ports[k] as usize] += w;
        c.group[g.id as usize] += w;
        if let Some(col) = col.as_deref_mut() {
            if col[g.remote as usize] != NO_PATH {
                break; // not a fat tree above this point; fill completes it
            }
            col[g.remote as usize] = g.rports[k];
        }
        cur = g.remote;
    }
}

/// Plain ftree order: nodes of each leaf by port, then dummies up to the fullest leaf.
pub fn port_order_slots(t: &Topo) -> Slots {
    t.leaves
        .iter()
        .map(|&l| {
            let mut v: Vec<Option<(u8, u32)>> =
                t.hcas[l as usize].iter().map(|&x| Some(x)).collect();
            v.resize(t.max_cn_per_leaf, None);
            v
        })
        .collect()
}

/// Dest-major table: entry [lid * switches + s].
pub struct Columns {
    pub data: Vec<u8>,
    pub nsw: usize,
}

impl Columns {
    pub fn new(nlids: usize, nsw: usize) -> Columns {
        Columns {
            data: vec![NO_PATH; nlids * nsw],
            nsw,
        }
    }

    pub fn col(&mut self, lid: u16) -> &mut [u8] {
        let n = self.nsw;
        &mut self.data[lid as usize * n..(lid as usize + 1) * n]
    }

    /// Fills every column (switch LIDs included) in parallel and converts to per-switch tables.
    pub fn finish(mut self, f: &Fabric, t: &Topo) -> Lfts {
        let nsw = self.nsw;
        let nlids = self.data.len() / nsw.max(1);
        // Where each destination enters the fabric: its leaf switch, or the switch itself.
        let mut origin = vec![(u32::MAX, false); nlids];
        for (s, &ni) in t.sw_node.iter().enumerate() {
            origin[f.nodes[ni as usize].lid as usize] = (s as u32, true);
        }
        for (s, list) in t.hcas.iter().enumerate() {
            for &(_, h) in list {
                origin[f.nodes[h as usize].lid as usize] = (s as u32, false);
            }
        }
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(16);
        let chunk_cols = nlids.div_ceil(threads).max(1);
        std::thread::scope(|scope| {
            for (ci, chunk) in self.data.chunks_mut(chunk_cols * nsw).enumerate() {
                let origin = &origin;
                scope.spawn(move || {
                    let mut sc = Scratch::new(t);
                    for (j, col) in chunk.chunks_mut(nsw).enumerate() {
                        let lid = ci * chunk_cols + j;
                        let (sw, is_switch) = origin[lid];
                        if lid == 0 || sw == u32::MAX {
                            continue;
                        }
                        if is_switch {
                            col[sw as usize] = 0;
                        }
                        fill_column(t, col, sw, lid, &mut sc);
                    }
                });
            }
        });
        let mut lfts = self.into_lfts(f);
        crate::fill::repair_switch_lids(f, t, &mut lfts);
        lfts
    }

    /// Per-switch tables from complete columns (no filling).
    pub fn into_lfts(self, f: &Fabric) -> Lfts {
        let nsw = self.nsw;
        let nlids = self.data.len() / nsw.max(1);
        let mut lfts = Lfts::empty(f);
        // Transpose in tiles of LIDs to stay in cache.
        const TILE: usize = 256;
        for l0 in (0..nlids).step_by(TILE) {
            let l1 = (l0 + TILE).min(nlids);
            for (s, sw) in lfts.switches.iter_mut().enumerate() {
                for lid in l0..l1 {
                    sw.ports[lid] = self.data[lid * nsw + s];
                }
            }
        }
        lfts
    }
}

/// ftree with a given per-leaf slot order (ftree: `port_order_slots`; NoFTree: `noftree::slots`).
pub fn route_slots(f: &Fabric, t: &Topo, slots: &Slots, engine: &str) -> Result<(Lfts, Stats)> {
    let start = Instant::now();
    f.check_lids()?;
    if slots.len() != t.leaves.len() {
        bail!("internal: slot list does not match the leaves");
    }
    let nlids = f.max_lid() as usize + 1;
    let mut cols = Columns::new(nlids, t.num_switches());
    let mut c = Counters::new(t);
    let mut dummies = 0;
    let mut scratch = vec![NO_PATH; t.num_switches()];
    for (li, &leaf) in t.leaves.iter().enumerate() {
        for slot in &slots[li] {
            match *slot {
                Some((port, hca)) => {
                    let lid = f.nodes[hca as usize].lid;
                    route_one(t, &mut c, leaf, port, Some(cols.col(lid)), 1);
                }
                None => {
                    // A dummy moves the counters of its whole route, the links that other
                    // switches would take up towards it included (OpenSM does the same), but
                    // writes no table: its column is scratch space, cleared afterwards.
                    route_one(t, &mut c, leaf, 0, Some(&mut scratch), 1);
                    scratch.fill(NO_PATH);
                    dummies += 1;
                }
            }
        }
    }
    let lfts = cols.finish(f, t);
    let stats = Stats {
        engine: engine.to_string(),
        switches: t.num_switches(),
        compute_nodes: t.leaves.iter().map(|&l| t.hcas[l as usize].len()).sum(),
        lids: f.num_lids(),
        dummy_routes: dummies,
        seconds: start.elapsed().as_secs_f64(),
        phase_seconds: Vec::new(),
        extra: Default::default(),
    };
    Ok((lfts, stats))
}

pub fn route(f: &Fabric) -> Result<(Lfts, Stats)> {
    let t = Topo::new(f)?;
    route_slots(f, &t, &port_order_slots(&t), "ftree")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::Pgft;

    fn port(l: &Lfts, f: &Fabric, sw: &str, dst: &str) -> u8 {
        let g = f.nodes[f.find(sw).unwrap() as usize].guid;
        let lid = f.nodes[f.find(dst).unwrap() as usize].lid;
        l.switches.iter().find(|s| s.guid == g).unwrap().port(lid)
    }

    #[test]
    fn two_ary_two_tree_exact_entries() {
        // Leaves s1-0 (h-0, h-1) and s1-1 (h-2, h-3); roots s2-0, s2-1 on leaf ports 3 and 4.
        let f = Pgft::kary(2, 2).unwrap().build().unwrap();
        let (l, _) = route(&f).unwrap();
        // h-0 goes through root 0, h-1 through root 1 (least-loaded up port).
        assert_eq!(port(&l, &f, "s1-1", "h-0"), 3);
        assert_eq!(port(&l, &f, "s1-1", "h-1"), 4);
        assert_eq!(port(&l, &f, "s1-0", "h-2"), 3);
        assert_eq!(port(&l, &f, "s1-0", "h-3"), 4);
        assert_eq!(port(&l, &f, "s1-0", "h-0"), 1);
        assert_eq!(port(&l, &f, "s1-0", "h-1"), 2);
        // Roots route down to the leaf of the destination.
        assert_eq!(port(&l, &f, "s2-0", "h-0"), 1);
        assert_eq!(port(&l, &f, "s2-1", "h-2"), 2);
        // Switch LIDs: own LID on port 0, others reachable.
        assert_eq!(port(&l, &f, "s2-0", "s2-0"), 0);
        assert_ne!(port(&l, &f, "s1-0", "s2-1"), NO_PATH);
        // A root reaches another root only by going down and up again: not allowed under up/down.
        assert_eq!(port(&l, &f, "s2-0", "s2-1"), NO_PATH);
    }

    #[test]
    fn every_switch_has_a_route_to_every_node() {
        let f = Pgft::new(vec![4, 2, 3], vec![1, 2, 2], vec![1, 2, 1])
            .unwrap()
            .build()
            .unwrap();
        let (l, s) = route(&f).unwrap();
        assert_eq!(s.dummy_routes, 0);
        for sw in &l.switches {
            for (_, h) in f.hcas() {
                assert_ne!(sw.port(h.lid), NO_PATH, "{} -> {}", sw.name, h.name);
            }
        }
    }
}

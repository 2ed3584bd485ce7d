//! Balance of a routing: for every switch port, how many compute-node destinations are routed
//! through it by traffic from any leaf; summarised per (level, direction) as a histogram. Two
//! routings are "as balanced" when these histograms are equal (the criterion for ftree
//! against OpenSM's own ftree).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::align::{align, hca_lids, par_fold};
use crate::error::Result;
use crate::lft::{Lfts, NO_PATH};
use crate::model::Fabric;
use crate::topo::{Dir, Topo, NONE};

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct LevelBalance {
    pub level: u8,
    pub dir: &'static str,
    pub ports: usize,
    pub min: u32,
    pub max: u32,
    /// (destinations through a port, number of such ports), ascending.
    pub histogram: Vec<(u32, u32)>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Balance {
    pub destinations: usize,
    /// (leaf, destination) walks that did not arrive.
    pub broken_routes: usize,
    pub levels: Vec<LevelBalance>,
}

/// Destinations per switch port (index s * stride + port).
pub fn port_loads(f: &Fabric, t: &Topo, lfts: &Lfts) -> Result<(Vec<u32>, usize)> {
    let tables = align(f, t, lfts)?;
    let dests = hca_lids(f, t);
    let ns = t.num_switches();
    let st = t.stride;
    let parts = par_fold(
        dests.len(),
        || (vec![0u32; ns * st], vec![usize::MAX; ns], 0usize),
        |(load, seen, broken), i| {
            let lid = dests[i];
            for &leaf in &t.leaves {
                let mut x = leaf;
                let mut steps = 0;
                while seen[x as usize] != i {
                    seen[x as usize] = i;
                    let p = tables[x as usize].port(lid);
                    if p == NO_PATH || p == 0 || steps > 2 * t.nlevels {
                        *broken += 1;
                        break;
                    }
                    if t.dir(x, p) == Dir::Hca {
                        break;
                    }
                    load[x as usize * st + p as usize] += 1;
                    let r = t.remote_sw[x as usize * st + p as usize];
                    if r == NONE {
                        *broken += 1;
                        break;
                    }
                    x = r;
                    steps += 1;
                }
            }
        },
    );
    let mut load = vec![0u32; ns * st];
    let mut broken = 0;
    for (l, _, b) in parts {
        for (a, v) in load.iter_mut().zip(l) {
            *a += v;
        }
        broken += b;
    }
    Ok((load, broken))
}

pub fn balance(f: &Fabric, t: &Topo, lfts: &Lfts) -> Result<Balance> {
    let (load, broken) = port_loads(f, t, lfts)?;
    let mut hist: BTreeMap<(u8, u8), BTreeMap<u32, u32>> = BTreeMap::new();
    for s in 0..t.num_switches() {
        for p in 0..t.stride {
            let d = match t.dir[s * t.stride + p] {
                Dir::Up => 0,
                Dir::Down => 1,
                _ => continue,
            };
            *hist
                .entry((t.level[s], d))
                .or_default()
                .entry(load[s * t.stride + p])
                .or_default() += 1;
        }
    }
    let levels = hist
        .into_iter()
        .map(|((level, d), h)| LevelBalance {
            level,
            dir: if d == 0 { "up" } else { "down" },
            ports: h.values().map(|&c| c as usize).sum(),
            min: h.keys().next().copied().unwrap_or(0),
            max: h.keys().last().copied().unwrap_or(0),
            histogram: h.into_iter().collect(),
        })
        .collect();
    Ok(Balance {
        destinations: hca_lids(f, t).len(),
        broken_routes: broken,
        levels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ftree;
    use crate::gen::Pgft;

    #[test]
    fn ftree_on_k_ary_n_trees_is_perfectly_balanced() {
        for (k, n) in [(2, 2), (4, 2), (4, 3), (3, 3)] {
            let f = Pgft::kary(k, n).unwrap().build().unwrap();
            let t = Topo::new(&f).unwrap();
            let (l, _) = ftree::route(&f).unwrap();
            let b = balance(&f, &t, &l).unwrap();
            assert_eq!(b.broken_routes, 0);
            for lv in &b.levels {
                assert_eq!(lv.min, lv.max, "k={k} n={n} {lv:?}");
            }
            // Leaf up ports carry destinations outside the leaf: (k^n - k) / k each.
            let leaf_up = b
                .levels
                .iter()
                .find(|x| x.level as u32 == n - 1 && x.dir == "up")
                .unwrap();
            assert_eq!(leaf_up.max, (k.pow(n) - k) / k);
        }
    }

    #[test]
    fn a_biased_routing_is_visibly_unbalanced() {
        let f = Pgft::kary(4, 2).unwrap().build().unwrap();
        let t = Topo::new(&f).unwrap();
        let (mut l, _) = ftree::route(&f).unwrap();
        // Send everything from leaf s1-0 through its first up port (5).
        let g = f.nodes[f.find("s1-0").unwrap() as usize].guid;
        let s = l.switches.iter_mut().find(|s| s.guid == g).unwrap();
        for p in s.ports.iter_mut().filter(|p| **p >= 5) {
            *p = 5;
        }
        let b = balance(&f, &t, &l).unwrap();
        let leaf_up = b
            .levels
            .iter()
            .find(|x| x.level == 1 && x.dir == "up")
            .unwrap();
        assert_eq!((leaf_up.min, leaf_up.max), (0, 12));
    }
}

//! Paper IV's node-order study (Table 4 shapes): for many random rank placements, the routing
//! quality of plain ftree (routes fixed, nodes in port order) against SlimUpdate by node order
//! (Alg. 5: the metabase's paths handed to each leaf's nodes sorted by rank), both evaluated on
//! the same placement with the same pattern.
//!
//! Placements: "leaf-blocks" gives each leaf a block of consecutive ranks (leaves in order, as a
//! batch scheduler allocates) with the ranks inside the block in random order [INF: the thesis
//! does not say how its 10,000 orderings were drawn]; "random" permutes all ranks.

use std::time::Instant;

use serde::Serialize;

use crate::align::{align, par_fold};
use crate::bail;
use crate::error::Result;
use crate::eval::{Channels, PortLookup, TableLookup};
use crate::ftree;
use crate::metabase::Metabase;
use crate::model::Fabric;
use crate::patterns::{phases, Rng};
use crate::topo::Topo;

/// Routes of SlimUpdate by node order: node `d` uses path `slot[d]` of its leaf.
struct MetaLookup<'a> {
    mb: &'a Metabase,
    leaf_index: &'a [usize],
    leaf_sw: &'a [u32],
    port: &'a [u8],
    slot: Vec<usize>,
}

impl PortLookup for MetaLookup<'_> {
    fn port(&self, s: u32, d: usize) -> u8 {
        if s == self.leaf_sw[d] {
            self.port[d]
        } else {
            self.mb.path(self.leaf_index[d], self.slot[d])[s as usize]
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Side {
    pub bandwidth_mean: f64,
    pub bandwidth_min: f64,
    pub bandwidth_max: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Study {
    pub pattern: String,
    pub placement: String,
    pub runs: usize,
    pub nodes: usize,
    pub ftree: Side,
    pub slimupdate_by_order: Side,
    pub broken_routes: usize,
    pub seconds: f64,
}

fn side(v: &[f64]) -> Side {
    Side {
        bandwidth_mean: v.iter().sum::<f64>() / v.len().max(1) as f64,
        bandwidth_min: v.iter().cloned().fold(f64::INFINITY, f64::min),
        bandwidth_max: v.iter().cloned().fold(0.0, f64::max),
    }
}

pub fn study(
    f: &Fabric,
    t: &Topo,
    pattern: &str,
    placement: &str,
    runs: usize,
    seed: u64,
) -> Result<Study> {
    let start = Instant::now();
    if runs == 0 {
        bail!("runs must be >= 1");
    }
    if placement != "leaf-blocks" && placement != "random" {
        bail!("unknown placement {placement:?} (leaf-blocks, random)");
    }
    let (lfts, _) = ftree::route_slots(f, t, &ftree::port_order_slots(t), "ftree")?;
    let mb = Metabase::build(f, t);
    let (mut leaf_index, mut leaf_sw, mut port, mut lids) = (vec![], vec![], vec![], vec![]);
    let mut first = Vec::new(); // first node index of each leaf
    for (li, &l) in t.leaves.iter().enumerate() {
        first.push(leaf_index.len());
        for &(p, h) in &t.hcas[l as usize] {
            leaf_index.push(li);
            leaf_sw.push(l);
            port.push(p);
            lids.push(f.nodes[h as usize].lid);
        }
    }
    first.push(leaf_index.len());
    let n = leaf_index.len();
    phases(pattern, n, &mut Rng::new(0))?;
    let table = TableLookup {
        tables: align(f, t, &lfts)?,
        lids,
    };
    let ch = Channels {
        t,
        leaf: leaf_sw.clone(),
    };
    type Acc = (Vec<(usize, f64, f64)>, usize, Vec<u32>, Vec<Vec<u32>>);
    let parts = par_fold(
        runs,
        || -> Acc { (Vec::new(), 0, Vec::new(), Vec::new()) },
        |(out, broken, load, paths), run| {
            let mut rng = Rng::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ run as u64);
            // place[rank] = node index.
            let mut place: Vec<usize> = (0..n).collect();
            if placement == "random" {
                rng.shuffle(&mut place);
            } else {
                for w in first.windows(2) {
                    rng.shuffle(&mut place[w[0]..w[1]]);
                }
            }
            let Ok(ph) = phases(pattern, n, &mut rng) else {
                return;
            };
            let (a, _, b1) = ch.score(&table, &ph, &place, load, paths);
            // Slots: per leaf, its nodes by ascending rank.
            let mut rank = vec![0usize; n];
            for (r, &node) in place.iter().enumerate() {
                rank[node] = r;
            }
            let mut slot = vec![0usize; n];
            for w in first.windows(2) {
                let mut v: Vec<usize> = (w[0]..w[1]).collect();
                v.sort_unstable_by_key(|&d| rank[d]);
                for (k, d) in v.into_iter().enumerate() {
                    slot[d] = k;
                }
            }
            let meta = MetaLookup {
                mb: &mb,
                leaf_index: &leaf_index,
                leaf_sw: &leaf_sw,
                port: &port,
                slot,
            };
            let (b, _, b2) = ch.score(&meta, &ph, &place, load, paths);
            *broken += b1 + b2;
            out.push((run, a, b));
        },
    );
    let mut all: Vec<(usize, f64, f64)> = Vec::with_capacity(runs);
    let mut broken = 0;
    for (v, b, _, _) in parts {
        all.extend(v);
        broken += b;
    }
    all.sort_by_key(|x| x.0);
    let a: Vec<f64> = all.iter().map(|x| x.1).collect();
    let b: Vec<f64> = all.iter().map(|x| x.2).collect();
    Ok(Study {
        pattern: pattern.to_string(),
        placement: placement.to_string(),
        runs: all.len(),
        nodes: n,
        ftree: side(&a),
        slimupdate_by_order: side(&b),
        broken_routes: broken,
        seconds: start.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::Pgft;

    #[test]
    fn bruck_gets_full_bandwidth_with_slimupdate_by_order_on_full_trees() {
        // 6-ary-3-tree (216 nodes), ranks in leaf blocks, random inside each leaf: ftree 0.857,
        // SlimUpdate by node order exactly 1 in every run.
        let f = Pgft::kary(6, 3).unwrap().build().unwrap();
        let t = Topo::new(&f).unwrap();
        let s = study(&f, &t, "bruck", "leaf-blocks", 40, 7).unwrap();
        assert_eq!(s.broken_routes, 0);
        assert!(
            (s.slimupdate_by_order.bandwidth_min - 1.0).abs() < 1e-12,
            "{s:?}"
        );
        assert!(s.ftree.bandwidth_mean < 0.9, "{s:?}");
    }

    #[test]
    fn ftree_with_random_orderings_matches_paper_iv_on_8_ary_3() {
        // Paper IV: ftree reaches 0.56 for Bruck on the 8-ary-3-tree (512 nodes).
        let f = Pgft::kary(8, 3).unwrap().build().unwrap();
        let t = Topo::new(&f).unwrap();
        let s = study(&f, &t, "bruck", "random", 20, 7).unwrap();
        assert!((s.ftree.bandwidth_mean - 0.56).abs() < 0.02, "{s:?}");
    }

    #[test]
    fn oversubscription_caps_both_and_slimupdate_stays_ahead() {
        // 2:1 oversubscribed two-level tree: 8 nodes and 4 up links per leaf.
        let f = Pgft::xgft(vec![8, 4], vec![1, 4]).unwrap().build().unwrap();
        let t = Topo::new(&f).unwrap();
        let s = study(&f, &t, "bruck", "leaf-blocks", 50, 7).unwrap();
        assert!(s.slimupdate_by_order.bandwidth_max < 1.0, "{s:?}");
        assert!(
            s.slimupdate_by_order.bandwidth_mean > s.ftree.bandwidth_mean,
            "{s:?}"
        );
        assert!(study(&f, &t, "bruck", "nope", 5, 1).is_err());
    }
}

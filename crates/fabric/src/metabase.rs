//! Metabase-aided two-phase fat-tree routing (Paper IV Alg. 4 and 5, "mFatTree").
//! Phase I (topology changes only): for every leaf and every routing slot, route a path id (a dummy
//! destination) with the ftree procedure and store its column of the LFTs: the leaf-to-leaf
//! spanning trees, or "shadow LFTs". Phase II: give the nodes of each leaf the leaf's paths in
//! order (port order, or sorted by a node order = SlimUpdate by node order); each node's LFT
//! column is a copy of its path's column. Re-running phase II for a new order costs a copy.
//!
//! The shadow columns are stored complete: phase I also fills the entries of the switches off
//! the balanced route (as ftree does after routing, salted by the LID of the node that takes the
//! path in port order, so that port order gives exactly ftree's tables) and the columns of the
//! switches' own LIDs. Phase II is then copies and the transposition into per-switch tables.

use std::time::Instant;

use crate::bail;
use crate::error::Result;
use crate::fill::{fill_column, Scratch};
use crate::ftree::{route_one, Columns, Counters, Slots, Stats};
use crate::lft::{Lfts, NO_PATH};
use crate::model::Fabric;
use crate::topo::Topo;

const MAGIC: &[u8; 8] = b"LANESMB1";

#[derive(Debug, Clone)]
pub struct Metabase {
    pub nsw: usize,
    /// Paths (slots) per leaf.
    pub per_leaf: usize,
    /// Column of path (leaf index, slot): data[(li * per_leaf + slot) * nsw ..].
    pub data: Vec<u8>,
    /// Column of each switch's own LID, in `Topo` switch order.
    pub switch_cols: Vec<u8>,
    pub seconds: f64,
}

impl Metabase {
    /// One path per node slot of a leaf: phase II then gives exactly ftree's tables.
    pub fn build(f: &Fabric, t: &Topo) -> Metabase {
        Self::build_paths(f, t, t.max_cn_per_leaf)
    }

    /// Paths a leaf needs when nodes share them (Paper IV's mFatTree): as many as the tree has
    /// disjoint spanning trees per leaf, i.e. the fewest up links any switch has, and never more
    /// than the nodes of a leaf. On an oversubscribed tree several nodes of a leaf take one path.
    pub fn disjoint_paths(t: &Topo) -> usize {
        let up_links = (0..t.num_switches())
            .filter(|&s| !t.up[s].is_empty())
            .map(|s| t.up[s].iter().map(|g| g.ports.len()).sum::<usize>())
            .min()
            .unwrap_or(1);
        up_links.clamp(1, t.max_cn_per_leaf.max(1))
    }

    /// Phase I with `per_leaf` paths per leaf; nodes beyond that wrap around in phase II.
    pub fn build_paths(f: &Fabric, t: &Topo, per_leaf: usize) -> Metabase {
        let start = Instant::now();
        let nsw = t.num_switches();
        let m = per_leaf.max(1);
        let mut data = vec![NO_PATH; t.leaves.len() * m * nsw];
        let mut c = Counters::new(t);
        let mut sc = Scratch::new(t);
        for (li, &leaf) in t.leaves.iter().enumerate() {
            let hcas = &t.hcas[leaf as usize];
            for j in 0..m {
                let k = (li * m + j) * nsw;
                let col = &mut data[k..k + nsw];
                // Port 0 stands for "the node's port", filled in phase II.
                route_one(t, &mut c, leaf, 0, Some(&mut *col), 1);
                let salt = hcas
                    .get(j)
                    .map_or(j, |&(_, h)| f.nodes[h as usize].lid as usize);
                fill_column(t, col, leaf, salt, &mut sc);
            }
        }
        let mut switch_cols = vec![NO_PATH; nsw * nsw];
        for (s, col) in switch_cols.chunks_mut(nsw.max(1)).enumerate() {
            col[s] = 0;
            let lid = f.nodes[t.sw_node[s] as usize].lid as usize;
            fill_column(t, col, s as u32, lid, &mut sc);
        }
        Metabase {
            nsw,
            per_leaf: m,
            data,
            switch_cols,
            seconds: start.elapsed().as_secs_f64(),
        }
    }

    pub fn path(&self, leaf_index: usize, slot: usize) -> &[u8] {
        let k = (leaf_index * self.per_leaf + slot) * self.nsw;
        &self.data[k..k + self.nsw]
    }

    /// Fingerprint of the fat-tree view a metabase belongs to: switch GUIDs in routing order, the
    /// leaves, each switch's up port groups and ports, the LIDs (FNV-1a). Any change that
    /// matters to phase I changes it.
    pub fn fingerprint(f: &Fabric, t: &Topo) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |x: u64| {
            for b in x.to_le_bytes() {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        };
        for (s, &n) in t.sw_node.iter().enumerate() {
            eat(f.nodes[n as usize].guid);
            eat(u64::from(f.nodes[n as usize].lid));
            for &(p, h) in &t.hcas[s] {
                eat(u64::from(p));
                eat(u64::from(f.nodes[h as usize].lid));
            }
            eat(u64::from(t.level[s]));
            for g in &t.up[s] {
                eat(u64::from(g.remote));
                for &p in &g.ports {
                    eat(u64::from(p));
                }
            }
        }
        for &l in &t.leaves {
            eat(u64::from(l));
        }
        eat(t.max_cn_per_leaf as u64);
        h
    }

    /// The metabase as a file: magic, fingerprint, sizes, then the shadow columns.
    pub fn to_bytes(&self, f: &Fabric, t: &Topo) -> Vec<u8> {
        let mut out = Vec::with_capacity(32 + self.data.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&Self::fingerprint(f, t).to_le_bytes());
        out.extend_from_slice(&(self.nsw as u64).to_le_bytes());
        out.extend_from_slice(&(self.per_leaf as u64).to_le_bytes());
        out.extend_from_slice(&self.data);
        out.extend_from_slice(&self.switch_cols);
        out
    }

    /// Reads a saved metabase; refuses one made for another topology.
    pub fn from_bytes(b: &[u8], f: &Fabric, t: &Topo) -> Result<Metabase> {
        if b.len() < 32 || &b[..8] != MAGIC {
            bail!("not a lanes metabase file");
        }
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[i..i + 8]);
            u64::from_le_bytes(w)
        };
        if word(8) != Self::fingerprint(f, t) {
            bail!("the metabase was built for another topology: run phase I again (without --metabase-in)");
        }
        let (nsw, per_leaf) = (word(16) as usize, word(24) as usize);
        if nsw != t.num_switches()
            || per_leaf == 0
            || per_leaf > t.max_cn_per_leaf
            || b.len() - 32 != (t.leaves.len() * per_leaf + nsw) * nsw
        {
            bail!("metabase file has the wrong size for this topology");
        }
        let split = 32 + t.leaves.len() * per_leaf * nsw;
        Ok(Metabase {
            nsw,
            per_leaf,
            data: b[32..split].to_vec(),
            switch_cols: b[split..].to_vec(),
            seconds: 0.0,
        })
    }

    /// Phase II: nodes take their leaf's paths in slot order.
    pub fn assign(&self, f: &Fabric, t: &Topo, slots: &Slots, engine: &str) -> (Lfts, Stats) {
        let start = Instant::now();
        let nlids = f.max_lid() as usize + 1;
        let mut cols = Columns::new(nlids, self.nsw);
        let mut nodes = 0;
        for (li, &leaf) in t.leaves.iter().enumerate() {
            for (next, &(port, h)) in slots[li].iter().flatten().enumerate() {
                let col = cols.col(f.nodes[h as usize].lid);
                col.copy_from_slice(self.path(li, next % self.per_leaf));
                col[leaf as usize] = port;
                nodes += 1;
            }
        }
        for (s, &ni) in t.sw_node.iter().enumerate() {
            let k = s * self.nsw;
            cols.col(f.nodes[ni as usize].lid)
                .copy_from_slice(&self.switch_cols[k..k + self.nsw]);
        }
        // Nodes on switches that are not leaves (none on generated trees): routed from scratch.
        let mut sc = Scratch::new(t);
        for (s, list) in t.hcas.iter().enumerate() {
            for &(port, h) in list {
                let lid = f.nodes[h as usize].lid;
                let col = cols.col(lid);
                if col[s] == NO_PATH {
                    col[s] = port;
                    fill_column(t, col, s as u32, lid as usize, &mut sc);
                }
            }
        }
        let phase2 = start.elapsed().as_secs_f64();
        let mut lfts = cols.into_lfts(f);
        crate::fill::repair_switch_lids(f, t, &mut lfts);
        let stats = Stats {
            engine: engine.to_string(),
            switches: t.num_switches(),
            compute_nodes: nodes,
            lids: f.num_lids(),
            dummy_routes: 0,
            seconds: self.seconds + start.elapsed().as_secs_f64(),
            phase_seconds: vec![("metabase".into(), self.seconds), ("assign".into(), phase2)],
            extra: Default::default(),
        };
        (lfts, stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ftree;
    use crate::gen::Pgft;
    use crate::order::{positions, sorted_slots};

    #[test]
    fn port_order_metabase_routing_equals_ftree_on_full_trees() {
        for t in [
            Pgft::kary(4, 3).unwrap(),
            Pgft::new(vec![4, 2, 3], vec![1, 2, 2], vec![1, 2, 1]).unwrap(),
        ] {
            let f = t.build().unwrap();
            let topo = Topo::new(&f).unwrap();
            let mb = Metabase::build(&f, &topo);
            assert_eq!(mb.per_leaf, t.m[0] as usize);
            let (a, _) = mb.assign(&f, &topo, &ftree::port_order_slots(&topo), "mfattree");
            let (b, _) = ftree::route(&f).unwrap();
            assert_eq!(a, b);
        }
    }

    #[test]
    fn reordering_only_permutes_columns_within_a_leaf() {
        let f = Pgft::kary(4, 2).unwrap().build().unwrap();
        let t = Topo::new(&f).unwrap();
        let mb = Metabase::build(&f, &t);
        let order: Vec<String> = ["h-3", "h-2", "h-1", "h-0"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (l, _) = mb.assign(
            &f,
            &t,
            &sorted_slots(&t, &positions(&f, &t, &order).unwrap()),
            "mfattree",
        );
        let (base, _) = ftree::route(&f).unwrap();
        let lid = |n: &str| f.nodes[f.find(n).unwrap() as usize].lid as usize;
        // h-3 now takes h-0's path everywhere except on its own leaf (its own port).
        for (sa, sb) in l.switches.iter().zip(&base.switches) {
            if sa.name != "s1-0" {
                assert_eq!(sa.ports[lid("h-3")], sb.ports[lid("h-0")], "{}", sa.name);
                assert_eq!(sa.ports[lid("h-4")], sb.ports[lid("h-4")]);
            }
        }
    }
}

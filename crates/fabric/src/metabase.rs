//! Metabase-aided two-phase fat-tree routing (Paper IV Alg. 4 and 5, "mFatTree").
//! Phase I (topology changes only): for every leaf and every routing slot, route a path id (a dummy
//! destination) with the ftree procedure and store its column of the LFTs: the leaf-to-leaf
//! spanning trees, or "shadow LFTs". Phase II: give the nodes of each leaf the leaf's paths in
//! order (port order, or sorted by a node order = SlimUpdate by node order); each node's LFT
//! column is a copy of its path's column. Re-running phase II for a new order costs a copy.

use std::time::Instant;

use crate::bail;
use crate::error::Result;
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
    pub seconds: f64,
}

impl Metabase {
    pub fn build(t: &Topo) -> Metabase {
        let start = Instant::now();
        let nsw = t.num_switches();
        let m = t.max_cn_per_leaf;
        let mut data = vec![NO_PATH; t.leaves.len() * m * nsw];
        let mut c = Counters::new(t);
        for (li, &leaf) in t.leaves.iter().enumerate() {
            for j in 0..m {
                let k = (li * m + j) * nsw;
                // Port 0 stands for "the node's port", filled in phase II.
                route_one(t, &mut c, leaf, 0, Some(&mut data[k..k + nsw]), 1);
            }
        }
        Metabase {
            nsw,
            per_leaf: m,
            data,
            seconds: start.elapsed().as_secs_f64(),
        }
    }

    pub fn path(&self, leaf_index: usize, slot: usize) -> &[u8] {
        let k = (leaf_index * self.per_leaf + slot) * self.nsw;
        &self.data[k..k + self.nsw]
    }

    /// Fingerprint of the fat-tree view a metabase belongs to: switch GUIDs in routing order, the
    /// leaves, each switch's up port groups and ports (FNV-1a). Any change of the topology that
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
            || per_leaf != t.max_cn_per_leaf
            || b.len() - 32 != t.leaves.len() * per_leaf * nsw
        {
            bail!("metabase file has the wrong size for this topology");
        }
        Ok(Metabase {
            nsw,
            per_leaf,
            data: b[32..].to_vec(),
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
                col.copy_from_slice(self.path(li, next));
                col[leaf as usize] = port;
                nodes += 1;
            }
        }
        let phase2 = start.elapsed().as_secs_f64();
        let lfts = cols.finish(f, t);
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
            let mb = Metabase::build(&topo);
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
        let mb = Metabase::build(&t);
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

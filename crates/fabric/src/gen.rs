//! Fat-tree generators: PGFT(h; m; w; p) and its special cases XGFT (all p = 1) and k-ary-n-trees,
//! plus the thesis's trees of 36-port switches named "k-levels-oversubscription-half|full".
//!
//! Construction (Ohring et al.'s XGFT, extended with parallel links): a node at level i (0 = compute
//! nodes, h = roots) has the label (a_h..a_{i+1}; b_i..b_1) with a_j < m_j and b_j < w_j. Its parents
//! are (a_h..a_{i+2}; b, b_i..b_1) for b < w_{i+1}, each reached through p_{i+1} parallel links.
//! Switch ports: first the links to children (child order, parallel links adjacent), then the links
//! to parents.

use crate::bail;
use crate::error::Result;
use crate::model::{Fabric, Kind};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pgft {
    pub m: Vec<u32>,
    pub w: Vec<u32>,
    pub p: Vec<u32>,
    /// Ports per switch in the netlist (at least what the tree needs).
    pub radix: Option<u32>,
}

const SWITCH_GUID_BASE: u64 = 0x0002_c901_0000_0000;
const HCA_GUID_BASE: u64 = 0x0002_c902_0000_0000;

impl Pgft {
    pub fn new(m: Vec<u32>, w: Vec<u32>, p: Vec<u32>) -> Result<Pgft> {
        let h = m.len();
        if h == 0 || w.len() != h || p.len() != h {
            bail!("PGFT needs h >= 1 and m, w, p of the same length h");
        }
        if m.iter().chain(&w).chain(&p).any(|&x| x == 0) {
            bail!("PGFT parameters must be >= 1");
        }
        if w[0] != 1 || p[0] != 1 {
            bail!("multi-port compute nodes (w_1*p_1 > 1) are not supported");
        }
        let t = Pgft {
            m,
            w,
            p,
            radix: None,
        };
        if t.num_nodes() + t.num_switches() > 1 << 20 {
            bail!(
                "PGFT too large: {} nodes, {} switches",
                t.num_nodes(),
                t.num_switches()
            );
        }
        for i in 1..=h {
            if t.ports_at(i) > 255 {
                bail!("level {i} switches need {} ports (max 255)", t.ports_at(i));
            }
        }
        Ok(t)
    }

    pub fn xgft(m: Vec<u32>, w: Vec<u32>) -> Result<Pgft> {
        let p = vec![1; m.len()];
        Pgft::new(m, w, p)
    }

    /// k-ary-n-tree: n switch levels, k children and k parents per switch (leaves: k nodes).
    pub fn kary(k: u32, n: u32) -> Result<Pgft> {
        if n == 0 || n > 8 {
            bail!("k-ary-n-tree needs 1 <= n <= 8");
        }
        let mut w = vec![k; n as usize];
        w[0] = 1;
        Pgft::xgft(vec![k; n as usize], w)
    }

    /// The thesis's naming (Paper III Table I): "k-n-o-half|full". half = k-ary-n-tree with o*k nodes
    /// per leaf; full = the same with twice the pods (the roots use all 2k ports).
    pub fn named(name: &str) -> Result<Pgft> {
        let parts: Vec<&str> = name.split('-').collect();
        let bad = || {
            crate::error::err(format!(
                "bad tree name {name:?}: expected k-n-o-half|full, e.g. 18-3-1-full"
            ))
        };
        if parts.len() != 4 {
            return Err(bad());
        }
        let k: u32 = parts[0].parse().map_err(|_| bad())?;
        let n: u32 = parts[1].parse().map_err(|_| bad())?;
        let o: u32 = parts[2].parse().map_err(|_| bad())?;
        if k == 0 || !(2..=6).contains(&n) || o == 0 {
            return Err(bad());
        }
        let mut m = vec![k; n as usize];
        m[0] = k * o;
        match parts[3] {
            "half" => {}
            "full" => m[n as usize - 1] = 2 * k,
            _ => return Err(bad()),
        }
        let mut w = vec![k; n as usize];
        w[0] = 1;
        let mut t = Pgft::xgft(m, w)?;
        t.radix = Some((2 * k).max(t.max_ports()));
        Ok(t)
    }

    pub fn h(&self) -> usize {
        self.m.len()
    }

    /// Nodes at level i (0 = compute nodes).
    pub fn count_at(&self, i: usize) -> u64 {
        let a: u64 = self.m[i..].iter().map(|&x| u64::from(x)).product();
        let b: u64 = self.w[..i].iter().map(|&x| u64::from(x)).product();
        a * b
    }

    pub fn num_nodes(&self) -> u64 {
        self.count_at(0)
    }

    pub fn num_switches(&self) -> u64 {
        (1..=self.h()).map(|i| self.count_at(i)).sum()
    }

    /// Ports a switch at level i uses.
    pub fn ports_at(&self, i: usize) -> u32 {
        let down = self.m[i - 1] * self.p[i - 1];
        let up = if i < self.h() {
            self.w[i] * self.p[i]
        } else {
            0
        };
        down + up
    }

    fn max_ports(&self) -> u32 {
        (1..=self.h()).map(|i| self.ports_at(i)).max().unwrap_or(0)
    }

    /// Leaf-to-leaf spanning trees towards one leaf (Paper IV Eq. 2-5): different = product of
    /// w_l*p_l, disjoint = min of w_l*p_l over the switch-to-switch levels (l >= 2). The link from a
    /// node to its leaf is no part of a leaf-to-leaf tree, which is why the paper's example
    /// XGFT(3;4,4,3;1,2,3) has 2 disjoint trees although w_1 = 1.
    pub fn spanning_trees(&self) -> (u64, u64) {
        let prod: u64 = (0..self.h())
            .map(|l| u64::from(self.w[l] * self.p[l]))
            .product();
        let min = (1..self.h())
            .map(|l| u64::from(self.w[l] * self.p[l]))
            .min()
            .unwrap_or(1);
        (prod, min)
    }

    pub fn describe(&self) -> String {
        let j = |v: &[u32]| {
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        if self.p.iter().all(|&x| x == 1) {
            format!("XGFT({};{};{})", self.h(), j(&self.m), j(&self.w))
        } else {
            format!(
                "PGFT({};{};{};{})",
                self.h(),
                j(&self.m),
                j(&self.w),
                j(&self.p)
            )
        }
    }

    /// Builds the fabric; LIDs assigned with `Fabric::assign_lids`.
    pub fn build(&self) -> Result<Fabric> {
        let h = self.h();
        let mut f = Fabric::default();
        // ids[i][x] = node index of the x-th node at level i, x = mixed-radix label
        // (b_1 least significant .. b_i, then a_{i+1} .. a_h).
        let mut ids: Vec<Vec<u32>> = Vec::with_capacity(h + 1);
        let radix = self.radix.unwrap_or(0);
        ids.push(Vec::new()); // filled after switches so switches come first in the file
        for i in 1..=h {
            let nports = self.ports_at(i).max(radix);
            let level_ids = (0..self.count_at(i))
                .map(|x| {
                    let guid = SWITCH_GUID_BASE + f.nodes.len() as u64 + 1;
                    f.add_node(Kind::Switch, format!("s{i}-{x}"), guid, nports as u8)
                })
                .collect();
            ids.push(level_ids);
        }
        ids[0] = (0..self.count_at(0))
            .map(|x| f.add_node(Kind::Hca, format!("h-{x}"), HCA_GUID_BASE + 2 * x, 1))
            .collect();
        for i in 0..h {
            // Link level i (child) to level i+1 (parent).
            let lo_w: u64 = self.w[..i].iter().map(|&x| u64::from(x)).product();
            let m_i1 = u64::from(self.m[i]);
            let w_i1 = u64::from(self.w[i]);
            let p_i1 = self.p[i];
            let child_up_base = self
                .m
                .get(i.wrapping_sub(1))
                .map_or(0, |&m| m * self.p[i - 1]);
            for (x, &child) in ids[i].iter().enumerate() {
                let x = x as u64;
                let low = x % lo_w; // b_i..b_1
                let a = x / lo_w; // a_{i+1} (least significant) .. a_h
                let a_i1 = a % m_i1;
                let rest = a / m_i1;
                for b in 0..w_i1 {
                    let parent_label = low + lo_w * (b + w_i1 * rest);
                    let parent = ids[i + 1][parent_label as usize];
                    for q in 0..p_i1 {
                        let cport = if i == 0 {
                            1
                        } else {
                            child_up_base + (b as u32) * p_i1 + q + 1
                        };
                        let pport = (a_i1 as u32) * p_i1 + q + 1;
                        f.connect(child, cport as u8, parent, pport as u8)?;
                    }
                }
            }
        }
        f.assign_lids();
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(t: &Pgft) -> (u64, u64) {
        (t.num_nodes(), t.num_switches())
    }

    #[test]
    fn table1_sizes_of_paper_iii() {
        // (name, nodes, switches) from Paper III Table I.
        let table = [
            ("8-3-1-half", 512, 192),
            ("8-3-1-full", 1024, 320),
            ("8-3-2-half", 1024, 192),
            ("8-3-2-full", 2048, 320),
            ("8-3-4-half", 2048, 192),
            ("8-3-4-full", 4096, 320),
            ("12-3-1-half", 1728, 432),
            ("12-3-1-full", 3456, 720),
            ("12-3-2-half", 3456, 432),
            ("12-3-2-full", 6912, 720),
            ("16-3-1-half", 4096, 768),
            ("16-3-1-full", 8192, 1280),
            ("16-3-2-half", 8192, 768),
            ("16-3-2-full", 16384, 1280),
            ("18-3-1-half", 5832, 972),
            ("18-3-1-full", 11664, 1620),
        ];
        for (name, n, s) in table {
            assert_eq!(counts(&Pgft::named(name).unwrap()), (n, s), "{name}");
        }
    }

    #[test]
    fn built_fabric_matches_counts_and_degrees() {
        let t = Pgft::new(vec![4, 2, 4], vec![1, 2, 2], vec![1, 2, 1]).unwrap();
        let f = t.build().unwrap();
        assert_eq!(f.num_hcas() as u64, t.num_nodes());
        assert_eq!(f.num_switches() as u64, t.num_switches());
        // Every port the construction promises is connected.
        for (_, n) in f.switches() {
            let used = n.links.iter().filter(|l| l.is_some()).count() as u32;
            let level: usize = n.name[1..2].parse().unwrap();
            assert_eq!(used, t.ports_at(level), "{}", n.name);
        }
        // Parallel links between levels 1 and 2: each leaf reaches each of its 2 parents twice.
        let leaf = &f.nodes[f.find("s1-0").unwrap() as usize];
        let remotes: Vec<u32> = (5..=8).map(|p| leaf.remote(p).unwrap().node).collect();
        assert_eq!(remotes[0], remotes[1]);
        assert_eq!(remotes[2], remotes[3]);
        assert_ne!(remotes[0], remotes[2]);
        f.check_lids().unwrap();
    }

    #[test]
    fn xgft_definition_1_adjacency() {
        // k-ary-2-tree: every leaf connects to every root exactly once.
        let f = Pgft::kary(4, 2).unwrap().build().unwrap();
        for (_, n) in f.switches().filter(|(_, n)| n.name.starts_with("s1")) {
            let mut roots: Vec<u32> = (5..=8).map(|p| n.remote(p).unwrap().node).collect();
            roots.sort();
            roots.dedup();
            assert_eq!(roots.len(), 4);
        }
    }

    #[test]
    fn spanning_tree_counts_of_paper_iv() {
        let t = Pgft::xgft(vec![4, 4, 3], vec![1, 2, 3]).unwrap();
        assert_eq!(t.spanning_trees(), (6, 2));
        // k-ary-n-tree: k^(n-1) different, k disjoint.
        assert_eq!(Pgft::kary(4, 3).unwrap().spanning_trees(), (16, 4));
        // PGFT: products and minima of w*p.
        let p = Pgft::new(vec![4, 2, 4], vec![1, 2, 2], vec![1, 2, 1]).unwrap();
        assert_eq!(p.spanning_trees(), (8, 2));
    }

    #[test]
    fn bad_parameters_are_errors() {
        assert!(Pgft::xgft(vec![4, 4], vec![1]).is_err());
        assert!(Pgft::xgft(vec![4, 0], vec![1, 2]).is_err());
        assert!(Pgft::xgft(vec![4, 4], vec![2, 2]).is_err());
        assert!(Pgft::named("18-3-1-huge").is_err());
        assert!(Pgft::xgft(vec![200, 200], vec![1, 200]).is_err());
    }
}

//! The fat-tree view of a fabric that routing engines and checks use: switch levels (0 = roots,
//! as OpenSM's ftree numbers them), port groups (all parallel links to one neighbour), compute
//! nodes per leaf, and flat per-port lookup tables.

use std::collections::VecDeque;

use crate::bail;
use crate::error::Result;
use crate::model::Fabric;

pub const NONE: u32 = u32::MAX;

/// Direction of a switch port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Unused,
    Up,
    Down,
    Hca,
}

#[derive(Debug, Clone)]
pub struct Group {
    /// Switch index of the neighbour.
    pub remote: u32,
    /// Local ports of the parallel links, ascending.
    pub ports: Vec<u8>,
    /// The neighbour's port of each link.
    pub rports: Vec<u8>,
    /// Global group id (for counters).
    pub id: u32,
}

#[derive(Debug, Clone)]
pub struct Topo {
    pub sw_node: Vec<u32>,
    pub node_sw: Vec<u32>,
    pub level: Vec<u8>,
    pub nlevels: usize,
    pub up: Vec<Vec<Group>>,
    pub down: Vec<Vec<Group>>,
    /// Compute nodes per switch: (port, HCA node index), ascending port; only HCAs with a LID.
    pub hcas: Vec<Vec<(u8, u32)>>,
    /// Leaf switches in routing order (ascending index = tuple order for generated trees).
    pub leaves: Vec<u32>,
    pub by_level: Vec<Vec<u32>>,
    /// Ports per switch in the flat tables (max port number + 1).
    pub stride: usize,
    pub dir: Vec<Dir>,
    /// Remote switch per switch port (NONE for HCAs and unused ports).
    pub remote_sw: Vec<u32>,
    pub ngroups: usize,
    pub max_cn_per_leaf: usize,
}

/// Tuples as OpenSM's ftree indexes switches, so that leaves and port groups are visited in the
/// same order: a breadth-first walk from the leaf with the lowest GUID in OpenSM's map order (the
/// GUID's network byte order read as a number); the start gets (rank, 0, .., 0); a switch found
/// below one of rank r copies its tuple with rank r+1 and digit r+1 set to the lowest value still
/// free, one found above copies it with rank r-1 and digit r set likewise. Each switch's groups
/// are then ordered by the remote tuple (OpenSM sorts them after indexing); tuples compare
/// byte-wise, unreached switches (0xFF..) last.
fn index_like_opensm(
    f: &Fabric,
    sw_node: &[u32],
    level: &[u8],
    hcas: &[Vec<(u8, u32)>],
    up: &[Vec<Group>],
    down: &[Vec<Group>],
    nlevels: usize,
) -> Vec<[u8; 9]> {
    let ns = sw_node.len();
    let mut tuple = vec![[0xFFu8; 9]; ns];
    let leaf_rank = nlevels - 1;
    if leaf_rank >= 8 {
        return tuple;
    }
    let Some(first) = (0..ns)
        .filter(|&s| !hcas[s].is_empty() && level[s] as usize == leaf_rank)
        .min_by_key(|&s| f.nodes[sw_node[s] as usize].guid.swap_bytes())
    else {
        return tuple;
    };
    let mut taken = std::collections::HashSet::new();
    let mut t0 = [0xFFu8; 9];
    t0[0] = leaf_rank as u8;
    for d in t0.iter_mut().take(leaf_rank + 1).skip(1) {
        *d = 0;
    }
    tuple[first] = t0;
    taken.insert(t0);
    let mut queue = VecDeque::from([first]);
    let mut assign = |tuple: &mut Vec<[u8; 9]>, from: usize, to: usize, rank: usize, var: usize| {
        let mut t = tuple[from];
        t[0] = rank as u8;
        for i in 0..255u8 {
            t[var] = i;
            if taken.insert(t) {
                tuple[to] = t;
                return true;
            }
        }
        false
    };
    while let Some(s) = queue.pop_front() {
        let r = level[s] as usize;
        if r < leaf_rank {
            for g in &down[s] {
                let c = g.remote as usize;
                if tuple[c][0] == 0xFF && assign(&mut tuple, s, c, r + 1, r + 1) {
                    queue.push_back(c);
                }
            }
        }
        if r != 0 {
            for g in &up[s] {
                let p = g.remote as usize;
                if tuple[p][0] == 0xFF && assign(&mut tuple, s, p, r - 1, r) {
                    queue.push_back(p);
                }
            }
        }
    }
    tuple
}

impl Topo {
    pub fn new(f: &Fabric) -> Result<Topo> {
        let mut node_sw = vec![NONE; f.nodes.len()];
        let mut sw_node = Vec::new();
        for (i, _) in f.switches() {
            node_sw[i as usize] = sw_node.len() as u32;
            sw_node.push(i);
        }
        let ns = sw_node.len();
        if ns == 0 {
            bail!("the fabric has no switches");
        }
        let stride = f
            .switches()
            .map(|(_, n)| n.nports as usize + 1)
            .max()
            .unwrap_or(1);
        let mut hcas = vec![Vec::new(); ns];
        let mut dir = vec![Dir::Unused; ns * stride];
        let mut remote_sw = vec![NONE; ns * stride];
        for (s, &ni) in sw_node.iter().enumerate() {
            let n = &f.nodes[ni as usize];
            for p in 1..=n.nports {
                if let Some(r) = n.remote(p) {
                    let rn = &f.nodes[r.node as usize];
                    if rn.is_switch() {
                        remote_sw[s * stride + p as usize] = node_sw[r.node as usize];
                    } else if rn.lid != 0 && rn.first_port() == Some(r.port) {
                        hcas[s].push((p, r.node));
                        dir[s * stride + p as usize] = Dir::Hca;
                    }
                }
            }
        }
        // Height = distance from the nearest leaf; level = max height - height.
        let mut height = vec![u32::MAX; ns];
        let mut q = VecDeque::new();
        for s in 0..ns {
            if !hcas[s].is_empty() {
                height[s] = 0;
                q.push_back(s);
            }
        }
        if q.is_empty() {
            bail!("no switch has compute nodes attached");
        }
        while let Some(s) = q.pop_front() {
            for p in 0..stride {
                let r = remote_sw[s * stride + p];
                if r != NONE && height[r as usize] == u32::MAX {
                    height[r as usize] = height[s] + 1;
                    q.push_back(r as usize);
                }
            }
        }
        if let Some(s) = (0..ns).find(|&s| height[s] == u32::MAX) {
            bail!(
                "switch {} is not connected to any compute node",
                f.nodes[sw_node[s] as usize].name
            );
        }
        let maxh = *height.iter().max().unwrap_or(&0);
        if maxh > 250 {
            bail!("fabric too deep for a fat tree");
        }
        let level: Vec<u8> = height.iter().map(|&h| (maxh - h) as u8).collect();
        let mut up = vec![Vec::new(); ns];
        let mut down = vec![Vec::new(); ns];
        let mut ngroups = 0u32;
        for s in 0..ns {
            let n = &f.nodes[sw_node[s] as usize];
            for p in 1..=n.nports {
                let r = remote_sw[s * stride + p as usize];
                if r == NONE {
                    continue;
                }
                let (ls, lr) = (level[s], level[r as usize]);
                let list: &mut Vec<Group> = if lr + 1 == ls {
                    dir[s * stride + p as usize] = Dir::Up;
                    &mut up[s]
                } else if ls + 1 == lr {
                    dir[s * stride + p as usize] = Dir::Down;
                    &mut down[s]
                } else {
                    bail!(
                        "not a fat tree: link {}[{p}] - {} joins levels {ls} and {lr}",
                        n.name,
                        f.nodes[sw_node[r as usize] as usize].name
                    );
                };
                let rport = n.remote(p).map_or(0, |x| x.port);
                match list.iter_mut().find(|g| g.remote == r) {
                    Some(g) => {
                        g.ports.push(p);
                        g.rports.push(rport);
                    }
                    None => {
                        list.push(Group {
                            remote: r,
                            ports: vec![p],
                            rports: vec![rport],
                            id: ngroups,
                        });
                        ngroups += 1;
                    }
                }
            }
        }
        let nlevels = maxh as usize + 1;
        let tuples = index_like_opensm(f, &sw_node, &level, &hcas, &up, &down, nlevels);
        for s in 0..ns {
            up[s].sort_by_key(|g| tuples[g.remote as usize]);
            down[s].sort_by_key(|g| tuples[g.remote as usize]);
        }
        let mut by_level = vec![Vec::new(); nlevels];
        for s in 0..ns {
            by_level[level[s] as usize].push(s as u32);
        }
        let mut leaves: Vec<u32> = (0..ns as u32)
            .filter(|&s| !hcas[s as usize].is_empty())
            .collect();
        leaves.sort_by_key(|&s| tuples[s as usize]);
        let max_cn_per_leaf = leaves
            .iter()
            .map(|&l| hcas[l as usize].len())
            .max()
            .unwrap_or(0);
        Ok(Topo {
            sw_node,
            node_sw,
            level,
            nlevels,
            up,
            down,
            hcas,
            leaves,
            by_level,
            stride,
            dir,
            remote_sw,
            ngroups: ngroups as usize,
            max_cn_per_leaf,
        })
    }

    pub fn num_switches(&self) -> usize {
        self.sw_node.len()
    }

    pub fn dir(&self, s: u32, p: u8) -> Dir {
        self.dir
            .get(s as usize * self.stride + p as usize)
            .copied()
            .unwrap_or(Dir::Unused)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::Pgft;

    #[test]
    fn levels_and_groups_of_a_pgft() {
        let f = Pgft::new(vec![4, 2, 4], vec![1, 2, 2], vec![1, 2, 1])
            .unwrap()
            .build()
            .unwrap();
        let t = Topo::new(&f).unwrap();
        assert_eq!(t.nlevels, 3);
        assert_eq!(
            t.by_level.iter().map(|v| v.len()).collect::<Vec<_>>(),
            vec![4, 8, 8]
        );
        for &l in &t.leaves {
            assert_eq!(t.level[l as usize], 2);
            assert_eq!(t.up[l as usize].len(), 2);
            assert!(t.up[l as usize].iter().all(|g| g.ports.len() == 2));
            assert_eq!(t.hcas[l as usize].len(), 4);
        }
        assert_eq!(t.max_cn_per_leaf, 4);
    }
}

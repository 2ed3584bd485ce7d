//! Per-leaf routing orders ("slots") for the order-aware engines.
//! - NoFTree (Paper III): the node at 0-based position n of the global order takes routing slot
//!   n % max_nodes_per_leaf of its leaf (the next free one if taken); unlisted nodes fill the free
//!   slots in port order.
//! - Sorted (Paper IV Alg. 5): per leaf, nodes sorted by their position in the order take slots
//!   0, 1, ...; unlisted nodes follow in port order.

use crate::bail;
use crate::error::Result;
use crate::ftree::Slots;
use crate::model::Fabric;
use crate::topo::Topo;

/// Positions of compute nodes (by node index) in an order given as node names.
pub fn positions(f: &Fabric, t: &Topo, order: &[String]) -> Result<Vec<usize>> {
    let mut pos = vec![usize::MAX; f.nodes.len()];
    let mut is_cn = vec![false; f.nodes.len()];
    for list in &t.hcas {
        for &(_, h) in list {
            is_cn[h as usize] = true;
        }
    }
    for (i, name) in order.iter().enumerate() {
        let Some(n) = f.find(name) else {
            bail!("order: unknown node {name:?}")
        };
        if !is_cn[n as usize] {
            bail!("order: {name:?} is not a compute node");
        }
        if pos[n as usize] != usize::MAX {
            bail!("order: {name:?} listed twice");
        }
        pos[n as usize] = i;
    }
    Ok(pos)
}

pub fn noftree_slots(t: &Topo, pos: &[usize]) -> Slots {
    let m = t.max_cn_per_leaf.max(1);
    t.leaves
        .iter()
        .map(|&l| {
            let mut slots: Vec<Option<(u8, u32)>> = vec![None; m];
            let mut listed: Vec<(usize, (u8, u32))> = t.hcas[l as usize]
                .iter()
                .filter(|&&(_, h)| pos[h as usize] != usize::MAX)
                .map(|&x| (pos[x.1 as usize], x))
                .collect();
            listed.sort_unstable();
            for (n, x) in listed {
                let mut s = n % m;
                while slots[s].is_some() {
                    s = (s + 1) % m;
                }
                slots[s] = Some(x);
            }
            let mut free = (0..m)
                .filter(|&s| slots[s].is_none())
                .collect::<Vec<_>>()
                .into_iter();
            for &x in t.hcas[l as usize]
                .iter()
                .filter(|&&(_, h)| pos[h as usize] == usize::MAX)
            {
                if let Some(s) = free.next() {
                    slots[s] = Some(x);
                }
            }
            slots
        })
        .collect()
}

pub fn sorted_slots(t: &Topo, pos: &[usize]) -> Slots {
    let m = t.max_cn_per_leaf;
    t.leaves
        .iter()
        .map(|&l| {
            let mut v: Vec<(usize, usize, (u8, u32))> = t.hcas[l as usize]
                .iter()
                .enumerate()
                .map(|(i, &x)| (pos[x.1 as usize], i, x))
                .collect();
            v.sort_unstable();
            let mut slots: Vec<Option<(u8, u32)>> =
                v.into_iter().map(|(_, _, x)| Some(x)).collect();
            slots.resize(m, None);
            slots
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ftree;
    use crate::gen::Pgft;
    use crate::lft::Lfts;

    fn up_port(f: &Fabric, l: &Lfts, leaf: &str, dst: &str) -> u8 {
        let g = f.nodes[f.find(leaf).unwrap() as usize].guid;
        let lid = f.nodes[f.find(dst).unwrap() as usize].lid;
        l.switches.iter().find(|s| s.guid == g).unwrap().port(lid)
    }

    #[test]
    fn paper_iii_example_noftree_removes_upward_link_sharing() {
        // 4 leaves x 4 nodes; b, c, d on the first leaf send to e, i, m (first node of leaves 2-4).
        let f = Pgft::kary(4, 2).unwrap().build().unwrap();
        let t = Topo::new(&f).unwrap();
        let (plain, _) = ftree::route(&f).unwrap();
        let ports: Vec<u8> = ["h-4", "h-8", "h-12"]
            .iter()
            .map(|d| up_port(&f, &plain, "s1-0", d))
            .collect();
        assert!(
            ports.iter().all(|&p| p == ports[0]),
            "ftree shares one up link: {ports:?}"
        );
        let order: Vec<String> = ["h-4", "h-8", "h-12"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let pos = positions(&f, &t, &order).unwrap();
        let (nof, _) = ftree::route_slots(&f, &t, &noftree_slots(&t, &pos), "noftree").unwrap();
        let mut ports: Vec<u8> = ["h-4", "h-8", "h-12"]
            .iter()
            .map(|d| up_port(&f, &nof, "s1-0", d))
            .collect();
        ports.sort();
        ports.dedup();
        assert_eq!(ports.len(), 3, "NoFTree gives three different up links");
        // Without an order NoFTree is ftree.
        let (same, _) = ftree::route_slots(
            &f,
            &t,
            &noftree_slots(&t, &vec![usize::MAX; f.nodes.len()]),
            "noftree",
        )
        .unwrap();
        assert_eq!(same, plain);
    }

    #[test]
    fn slot_rules() {
        let f = Pgft::kary(4, 2).unwrap().build().unwrap();
        let t = Topo::new(&f).unwrap();
        // h-6 at position 0 -> slot 0 of leaf 1; h-5 at position 4 -> slot 0 taken -> slot 1.
        let order: Vec<String> = ["h-6", "h-0", "h-1", "h-2", "h-5"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let pos = positions(&f, &t, &order).unwrap();
        let s = noftree_slots(&t, &pos);
        let name = |x: Option<(u8, u32)>| f.nodes[x.unwrap().1 as usize].name.clone();
        assert_eq!(
            s[1].iter().map(|&x| name(x)).collect::<Vec<_>>(),
            ["h-6", "h-5", "h-4", "h-7"]
        );
        let s = sorted_slots(&t, &pos);
        assert_eq!(
            s[1].iter().map(|&x| name(x)).collect::<Vec<_>>(),
            ["h-6", "h-5", "h-4", "h-7"]
        );
        assert_eq!(
            s[0].iter().map(|&x| name(x)).collect::<Vec<_>>(),
            ["h-0", "h-1", "h-2", "h-3"]
        );
        assert!(positions(&f, &t, &["s1-0".to_string()]).is_err());
        assert!(positions(&f, &t, &["h-1".to_string(), "h-1".to_string()]).is_err());
    }
}

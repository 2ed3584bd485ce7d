//! Minimal reconfiguration for a VM that moved (FTreeMinRC, "Efficient network reconfiguration for
//! InfiniBand-based HPC clouds"): after a LID copy, only the switches whose route towards the VM's
//! LID no longer reaches it need a new entry. The rest keep theirs, so an intra-leaf move (both
//! hypervisors under one leaf) changes one physical switch: the leaf.
//!
//! Marking, outwards from the destination hypervisor (whose entry is the VM's VF port): a switch
//! keeps its old entry when that hop reaches a switch already settled (a down hop only into one
//! whose route goes down only, so no U-turn appears); when no more can keep theirs, the switches
//! whose PF entry reaches a settled switch take it, and keeping is tried again. The PF's column is
//! an up*/down* route to the destination, so every switch gets settled.

use std::collections::HashSet;

use crate::bail;
use crate::error::Result;
use crate::lft::Lfts;
use crate::model::Fabric;
use crate::topo::{Dir, Topo};

/// GUIDs of the switches (hypervisors' vSwitches included, the destination's excepted) whose old
/// entry for the LID of `vm` (node index in the new fabric `g`) still leads to it; `pf_lid` is
/// the destination PF's LID.
pub fn entries_to_keep(g: &Fabric, old: &Lfts, vm: u32, pf_lid: u16) -> Result<HashSet<u64>> {
    entries_to_keep_in(&Topo::new(g)?, g, old, vm, pf_lid)
}

/// The same with a fat-tree view `t` the SM already has: the new fabric's, or the one before the
/// move (switches and their links do not change when a VM moves; only the VM's new port, taken
/// from `g`, is trusted to reach the VM, so stale HCA lists in `t` do no harm).
pub fn entries_to_keep_in(
    t: &Topo,
    g: &Fabric,
    old: &Lfts,
    vm: u32,
    pf_lid: u16,
) -> Result<HashSet<u64>> {
    let vm_lid = g.nodes[vm as usize].lid;
    let node = &g.nodes[vm as usize];
    let Some(dest) = node.first_port().and_then(|p| node.remote(p)) else {
        bail!("{} is not connected", node.name)
    };
    if t.node_sw
        .get(dest.node as usize)
        .is_none_or(|&s| s == crate::topo::NONE)
    {
        bail!(
            "the fat-tree view does not know {}",
            g.nodes[dest.node as usize].name
        );
    }
    let dest_sw = t.node_sw[dest.node as usize];
    let dest_port = dest.port;
    let by_guid = old.by_guid();
    let guid = |s: usize| g.nodes[t.sw_node[s] as usize].guid;
    let ns = t.num_switches();
    let mut old_col = Vec::with_capacity(ns);
    let mut pf_col = Vec::with_capacity(ns);
    for s in 0..ns {
        let Some(&i) = by_guid.get(&guid(s)) else {
            bail!("no LFT for switch {}", g.nodes[t.sw_node[s] as usize].name)
        };
        old_col.push(old.switches[i].port(vm_lid));
        pf_col.push(old.switches[i].port(pf_lid));
    }
    // Settled switches and whether their route from there only goes down. Keeping the old entry
    // is preferred: first every keep that leads to a settled switch, then one layer of PF entries.
    let mut down_only: Vec<Option<bool>> = vec![None; ns];
    let mut kept = vec![false; ns];
    down_only[dest_sw as usize] = Some(true);
    let hop = |s: usize, p: u8, settled: &[Option<bool>]| -> Option<bool> {
        if s == dest_sw as usize && p == dest_port {
            return Some(true);
        }
        match t.dir(s as u32, p) {
            Dir::Hca => None,
            Dir::Up => settled[t.remote_sw[s * t.stride + p as usize] as usize].map(|_| false),
            Dir::Down => settled[t.remote_sw[s * t.stride + p as usize] as usize]
                .filter(|&d| d)
                .map(|_| true),
            Dir::Unused => None,
        }
    };
    loop {
        let mut progress = true;
        while progress {
            progress = false;
            for s in 0..ns {
                if down_only[s].is_none() {
                    if let Some(d) = hop(s, old_col[s], &down_only) {
                        down_only[s] = Some(d);
                        kept[s] = true;
                        progress = true;
                    }
                }
            }
        }
        let layer: Vec<(usize, bool)> = (0..ns)
            .filter(|&s| down_only[s].is_none())
            .filter_map(|s| hop(s, pf_col[s], &down_only).map(|d| (s, d)))
            .collect();
        if layer.is_empty() {
            break;
        }
        for (s, d) in layer {
            down_only[s] = Some(d);
        }
    }
    if let Some(s) = (0..ns).find(|&s| down_only[s].is_none()) {
        bail!(
            "min-copy: no up*/down* route from {} to the VM keeps the others",
            g.nodes[t.sw_node[s] as usize].name
        );
    }
    Ok((0..ns)
        .filter(|&s| s != dest_sw as usize && kept[s])
        .map(guid)
        .collect())
}

#[cfg(test)]
mod tests {
    use crate::check::check;
    use crate::gen::Pgft;
    use crate::migrate::{migrate, Mode};
    use crate::topo::Topo;
    use crate::vswitch::{self, expand};

    #[test]
    fn an_intra_leaf_move_updates_only_the_leaf() {
        // 4-ary-2-tree, 16 hypervisors with 3 VFs; hv-0..hv-3 sit under leaf s1-0.
        let f = expand(&Pgft::kary(4, 2).unwrap().build().unwrap(), 3, &[2, 1]).unwrap();
        let t = Topo::new(&f).unwrap();
        let (l, _) = vswitch::route(&f, &t, None).unwrap();
        let (g, n, m) = migrate(&f, &l, "hv-0-vm-1", "hv-1", Mode::MinCopy).unwrap();
        assert_eq!((m.smps, m.switches_updated), (1, 1), "{m:?}");
        let (_, _, c) = migrate(&f, &l, "hv-0-vm-1", "hv-1", Mode::Copy).unwrap();
        assert_eq!((c.smps, c.max_smps), (4, 8), "{c:?}");
        let tg = Topo::new(&g).unwrap();
        let r = check(&g, &tg, &n).unwrap();
        assert!(r.deadlock_free && r.updown && r.unreachable == 0, "{r:?}");
        // To hv-9 under leaf s1-2: the 4 roots (down to s1-0 before, to s1-2 now), s1-0 (down
        // to hv-0 before, up now) and s1-2 (up before, down to hv-9 now) change; s1-1 and s1-3
        // keep their up entries. A plain copy of the PF's column changes all 8.
        let (g, n, m) = migrate(&f, &l, "hv-0-vm-1", "hv-9", Mode::MinCopy).unwrap();
        let (_, _, c) = migrate(&f, &l, "hv-0-vm-1", "hv-9", Mode::Copy).unwrap();
        assert_eq!((m.smps, c.smps), (6, 8), "{m:?} {c:?}");
        let tg = Topo::new(&g).unwrap();
        let r = check(&g, &tg, &n).unwrap();
        assert!(r.deadlock_free && r.updown && r.unreachable == 0, "{r:?}");
    }
}

//! The vSwitch model (Papers II and V) and vSwitchFatTree routing ("vswitch-ftree").
//!
//! A hypervisor with SR-IOV in vSwitch mode appears to the SM as a switch with a single uplink to
//! its leaf, the PF and the VFs (one vHCA per VM, each with its own LID) attached below it. OpenSM
//! and ibsim know no SR-IOV, so a hypervisor is modelled as a Switch node with the PF and the VMs as
//! Hca nodes: port 1 goes up to the leaf, port 2 is the PF, ports 3.. are the VFs.
//!
//! vSwitchFatTree (Paper V Alg. 1): per physical leaf, its vSwitches are taken by increasing VM
//! count; every VM LID is routed like ftree, but each carries the weight 1/VMs-of-its-hypervisor
//! (a hypervisor weighs 1 in total, its single link being what its VMs share), and ports are
//! chosen by accumulated weight. Then the vSwitches' physical LIDs (the PF and idle VFs) are
//! routed the same way, again weighing 1 per hypervisor. With one VM per hypervisor every weight
//! is 1, as in ftree. Weights are exact integers: the scale is the least common multiple of the
//! divisors when that fits the counters.

use std::collections::HashSet;
use std::time::Instant;

use serde_json::json;

use crate::bail;
use crate::error::Result;
use crate::ftree::{route_one, Columns, Counters, Stats};
use crate::lft::Lfts;
use crate::model::{Fabric, Kind};
use crate::topo::Topo;

/// Uplink, PF and first VF port of a generated hypervisor.
pub const UPLINK: u8 = 1;
pub const PF_PORT: u8 = 2;
pub const FIRST_VF: u8 = 3;

const HV_GUID_BASE: u64 = 0x0002_c903_0000_0000;
const VHCA_GUID_BASE: u64 = 0x0002_c904_0000_0000;

/// How a hypervisor (vSwitch) is addressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HvLid {
    /// Its own LID besides the PF's (lanes's default: every switch has a LID of its own).
    #[default]
    Own,
    /// The PF's LID, as in Paper II: a hypervisor with v VFs uses 1 + v LIDs.
    SharedWithPf,
}

impl HvLid {
    pub fn parse(s: &str) -> Result<HvLid> {
        Ok(match s {
            "own" => HvLid::Own,
            "shared" | "pf" => HvLid::SharedWithPf,
            _ => bail!("unknown hypervisor LID scheme {s:?} (own, shared)"),
        })
    }
}

/// `expand`, then the hypervisors' LIDs by `scheme`; LIDs stay dense from 1.
pub fn expand_with(f: &Fabric, vfs: u32, counts: &[u32], scheme: HvLid) -> Result<Fabric> {
    let hvs = f.num_hcas() as u64;
    let vms: u64 = (0..hvs)
        .map(|k| {
            if counts.is_empty() {
                u64::from(vfs)
            } else {
                u64::from(counts[k as usize % counts.len()])
            }
        })
        .sum();
    let own = u64::from(scheme == HvLid::Own);
    crate::model::check_lid_count(f.num_switches() as u64 + hvs * (1 + own) + vms)?;
    let mut g = expand(f, vfs, counts)?;
    if scheme == HvLid::SharedWithPf {
        let hvs: Vec<(usize, usize)> = g
            .switches()
            .filter(|(_, n)| n.name.starts_with("hv-"))
            .filter_map(|(i, n)| n.remote(PF_PORT).map(|r| (i as usize, r.node as usize)))
            .collect();
        for (hv, pf) in hvs {
            g.nodes[hv].lid = g.nodes[pf].lid;
        }
        // Close the gaps the hypervisors' own LIDs left, keeping the order.
        let mut used: Vec<u16> = g.nodes.iter().map(|n| n.lid).filter(|&l| l != 0).collect();
        used.sort_unstable();
        used.dedup();
        for n in &mut g.nodes {
            if n.lid != 0 {
                n.lid = used.binary_search(&n.lid).map_or(0, |i| i as u16 + 1);
            }
        }
        g.check_lids()?;
    }
    Ok(g)
}

/// Replaces every compute node of `f` by a hypervisor "hv-<i>" with `vfs` VF ports, its PF
/// "hv-<i>-pf" and `counts[i % counts.len()]` VMs "hv-<i>-vm-<j>" (all VFs when `counts` is empty).
pub fn expand(f: &Fabric, vfs: u32, counts: &[u32]) -> Result<Fabric> {
    if vfs == 0 || vfs > 250 {
        bail!("vfs must be 1..250");
    }
    if let Some(&c) = counts.iter().find(|&&c| c > vfs) {
        bail!("{c} VMs do not fit {vfs} VFs");
    }
    let mut g = Fabric::default();
    let mut new_idx = vec![u32::MAX; f.nodes.len()];
    for (i, n) in f.switches() {
        new_idx[i as usize] = g.add_node(Kind::Switch, n.name.clone(), n.guid, n.nports);
    }
    let hcas: Vec<(u32, crate::model::PortRef)> = f
        .hcas()
        .filter_map(|(i, n)| n.first_port().and_then(|p| n.remote(p)).map(|r| (i, r)))
        .collect();
    let mut hvs = Vec::with_capacity(hcas.len());
    for (k, _) in hcas.iter().enumerate() {
        let name = format!("hv-{k}");
        hvs.push(g.add_node(
            Kind::Switch,
            name,
            HV_GUID_BASE + k as u64 + 1,
            (FIRST_VF as u32 + vfs - 1) as u8,
        ));
    }
    let mut next_guid = VHCA_GUID_BASE;
    let mut guid = || {
        next_guid += 2;
        next_guid
    };
    let mut attach: Vec<(u32, u8, u32)> = Vec::new();
    for (k, _) in hcas.iter().enumerate() {
        let pf = g.add_node(Kind::Hca, format!("hv-{k}-pf"), guid(), 1);
        attach.push((hvs[k], PF_PORT, pf));
        let vms = if counts.is_empty() {
            vfs
        } else {
            counts[k % counts.len()]
        };
        for j in 0..vms {
            let vm = g.add_node(Kind::Hca, format!("hv-{k}-vm-{j}"), guid(), 1);
            attach.push((hvs[k], FIRST_VF + j as u8, vm));
        }
    }
    for (i, n) in f.switches() {
        for p in 1..=n.nports {
            if let Some(r) = n.remote(p) {
                let rn = &f.nodes[r.node as usize];
                if rn.is_switch() && (i, p) < (r.node, r.port) {
                    g.connect(new_idx[i as usize], p, new_idx[r.node as usize], r.port)?;
                }
            }
        }
    }
    for (k, &(_, r)) in hcas.iter().enumerate() {
        g.connect(new_idx[r.node as usize], r.port, hvs[k], UPLINK)?;
    }
    for (hv, port, h) in attach {
        g.connect(hv, port, h, 1)?;
    }
    g.assign_lids();
    Ok(g)
}

/// True for a switch with compute nodes, no switch below it and a single uplink.
pub fn is_vswitch(t: &Topo, s: u32) -> bool {
    let s = s as usize;
    !t.hcas[s].is_empty()
        && t.down[s].is_empty()
        && t.up[s].iter().map(|g| g.ports.len()).sum::<usize>() == 1
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// One hypervisor's LIDs: (port, node) of its VMs and of its physical LIDs (PF, idle VFs).
struct Hv {
    sw: u32,
    vms: Vec<(u8, u32)>,
    phys: Vec<(u8, u32)>,
}

/// vSwitchFatTree. `active`: names of the VMs that run; None = every VF HCA is a running VM.
pub fn route(f: &Fabric, t: &Topo, active: Option<&[String]>) -> Result<(Lfts, Stats)> {
    let start = Instant::now();
    f.check_lids()?;
    let active: Option<HashSet<u32>> = match active {
        None => None,
        Some(names) => {
            let mut set = HashSet::new();
            for n in names {
                match f.find(n) {
                    Some(i) if !f.nodes[i as usize].is_switch() => {
                        set.insert(i);
                    }
                    _ => bail!("vms: {n:?} is not a node of the fabric"),
                }
            }
            Some(set)
        }
    };
    // Hypervisors grouped under their physical leaf (first-seen order), other leaves on their own.
    let mut parents: Vec<u32> = Vec::new();
    let mut groups: Vec<Vec<Hv>> = Vec::new();
    let mut plain: Vec<Hv> = Vec::new();
    for &s in &t.leaves {
        let list = &t.hcas[s as usize];
        if !is_vswitch(t, s) {
            plain.push(Hv {
                sw: s,
                vms: list.clone(),
                phys: Vec::new(),
            });
            continue;
        }
        // The PF is the HCA on the lowest port; the rest are VFs.
        let mut hv = Hv {
            sw: s,
            vms: Vec::new(),
            phys: vec![list[0]],
        };
        for &x in &list[1..] {
            if active.as_ref().is_none_or(|a| a.contains(&x.1)) {
                hv.vms.push(x);
            } else {
                hv.phys.push(x);
            }
        }
        let parent = t.up[s as usize][0].remote;
        match parents.iter().position(|&p| p == parent) {
            Some(i) => groups[i].push(hv),
            None => {
                parents.push(parent);
                groups.push(vec![hv]);
            }
        }
    }
    for g in &mut groups {
        g.sort_by_key(|h| h.vms.len()); // stable: ties keep switch order
    }
    // Integer weights: scale / count, exact when the scale is a multiple of every count.
    let mut scale: u64 = 1;
    for h in groups.iter().flatten() {
        for n in [h.vms.len(), h.phys.len()] {
            if n > 0 {
                scale = scale / gcd(scale, n as u64) * n as u64;
            }
        }
    }
    let lids = f.num_lids() as u64 + 1;
    let limit = u64::from(u32::MAX) / 4 / lids;
    let exact = scale <= limit;
    if !exact {
        scale = limit.max(1);
    }
    let weight = |n: usize| ((scale / n.max(1) as u64).max(1)) as u32;
    let nlids = f.max_lid() as usize + 1;
    let mut cols = Columns::new(nlids, t.num_switches());
    let mut c = Counters::new(t);
    let (mut vms, mut phys) = (0usize, 0usize);
    for h in &plain {
        for &(port, node) in &h.vms {
            route_one(
                t,
                &mut c,
                h.sw,
                port,
                Some(cols.col(f.nodes[node as usize].lid)),
                scale as u32,
            );
        }
    }
    for g in &groups {
        for h in g {
            let w = weight(h.vms.len());
            for &(port, node) in &h.vms {
                route_one(
                    t,
                    &mut c,
                    h.sw,
                    port,
                    Some(cols.col(f.nodes[node as usize].lid)),
                    w,
                );
                vms += 1;
            }
        }
    }
    for g in &groups {
        for h in g {
            let w = weight(h.phys.len());
            for &(port, node) in &h.phys {
                route_one(
                    t,
                    &mut c,
                    h.sw,
                    port,
                    Some(cols.col(f.nodes[node as usize].lid)),
                    w,
                );
                phys += 1;
            }
        }
    }
    let lfts = cols.finish(f, t);
    let mut extra = serde_json::Map::new();
    extra.insert(
        "hypervisors".into(),
        json!(groups.iter().map(Vec::len).sum::<usize>()),
    );
    extra.insert("vms".into(), json!(vms));
    extra.insert("physical_lids".into(), json!(phys));
    extra.insert("weight_scale".into(), json!(scale));
    extra.insert("exact_weights".into(), json!(exact));
    let stats = Stats {
        engine: "vswitch-ftree".into(),
        switches: t.num_switches(),
        compute_nodes: t.leaves.iter().map(|&l| t.hcas[l as usize].len()).sum(),
        lids: f.num_lids(),
        dummy_routes: 0,
        seconds: start.elapsed().as_secs_f64(),
        phase_seconds: Vec::new(),
        extra,
    };
    Ok((lfts, stats))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::check;
    use crate::ftree;
    use crate::gen::Pgft;
    use crate::lft::NO_PATH;

    /// 4-ary-2 physical tree, 4 hypervisors per leaf with 4, 1, 1, 1 VMs.
    fn fabric() -> Fabric {
        let f = Pgft::kary(4, 2).unwrap().build().unwrap();
        expand(&f, 4, &[4, 1, 1, 1]).unwrap()
    }

    /// Per up port of physical leaf `leaf`: summed VM weight (1/VMs of the VM's hypervisor) of
    /// the remote VMs routed through it.
    fn up_weights(f: &Fabric, l: &Lfts, leaf: &str) -> Vec<f64> {
        let g = f.nodes[f.find(leaf).unwrap() as usize].guid;
        let sw = l.switches.iter().find(|s| s.guid == g).unwrap();
        let mut w = [0.0f64; 9];
        for k in 0..16 {
            let hv = format!("hv-{k}");
            let hvn = &f.nodes[f.find(&hv).unwrap() as usize];
            if f.nodes[hvn.remote(UPLINK).unwrap().node as usize].name == leaf {
                continue;
            }
            let vms: Vec<u16> = (0..4)
                .filter_map(|j| f.find(&format!("hv-{k}-vm-{j}")))
                .map(|i| f.nodes[i as usize].lid)
                .collect();
            for &lid in &vms {
                let p = sw.port(lid);
                assert!((5..=8).contains(&p), "leaf routes VM {lid} to port {p}");
                w[p as usize] += 1.0 / vms.len() as f64;
            }
        }
        w[5..=8].to_vec()
    }

    #[test]
    fn expand_builds_hypervisors_with_pf_and_vms() {
        let f = fabric();
        assert_eq!(f.num_switches(), 8 + 16);
        // 16 PFs + 4 * (4 + 1 + 1 + 1) VMs.
        assert_eq!(f.num_hcas(), 16 + 28);
        let hv = &f.nodes[f.find("hv-0").unwrap() as usize];
        assert_eq!(
            f.nodes[hv.remote(UPLINK).unwrap().node as usize].name,
            "s1-0"
        );
        assert_eq!(
            f.nodes[hv.remote(PF_PORT).unwrap().node as usize].name,
            "hv-0-pf"
        );
        assert!(hv.remote(FIRST_VF + 3).is_some());
        let hv1 = &f.nodes[f.find("hv-1").unwrap() as usize];
        assert!(hv1.remote(FIRST_VF + 1).is_none());
        f.check_lids().unwrap();
        assert!(expand(&Pgft::kary(2, 2).unwrap().build().unwrap(), 2, &[3]).is_err());
    }

    #[test]
    fn weights_balance_hypervisors_where_ftree_balances_vms() {
        let f = fabric();
        let t = Topo::new(&f).unwrap();
        let (v, stats) = route(&f, &t, None).unwrap();
        assert_eq!(stats.extra["vms"], 28);
        assert_eq!(stats.extra["hypervisors"], 16);
        assert_eq!(stats.extra["exact_weights"], true);
        let (plain, _) = ftree::route(&f).unwrap();
        for leaf in ["s1-0", "s1-1", "s1-2", "s1-3"] {
            // 12 remote hypervisors weigh 12: 3 per up port with vswitch-ftree.
            let w = up_weights(&f, &v, leaf);
            assert!(w.iter().all(|&x| (x - 3.0).abs() < 1e-9), "{leaf}: {w:?}");
            let w = up_weights(&f, &plain, leaf);
            let spread =
                w.iter().cloned().fold(0.0, f64::max) - w.iter().cloned().fold(9.0, f64::min);
            assert!(spread >= 0.75 - 1e-9, "ftree {leaf}: {w:?}");
        }
        let r = check(&f, &t, &v).unwrap();
        assert!(r.deadlock_free && r.unreachable == 0, "{r:?}");
        for sw in &v.switches {
            for (_, h) in f.hcas() {
                assert_ne!(sw.port(h.lid), NO_PATH);
            }
        }
    }

    #[test]
    fn one_vm_per_hypervisor_is_as_balanced_as_ftree() {
        let f = expand(&Pgft::kary(4, 2).unwrap().build().unwrap(), 2, &[1]).unwrap();
        let t = Topo::new(&f).unwrap();
        let (v, _) = route(&f, &t, None).unwrap();
        let (p, _) = ftree::route(&f).unwrap();
        let bv = crate::balance::balance(&f, &t, &v).unwrap();
        let bp = crate::balance::balance(&f, &t, &p).unwrap();
        assert_eq!(bv, bp);
    }

    #[test]
    fn idle_vfs_are_routed_as_physical_lids() {
        let f = fabric();
        let t = Topo::new(&f).unwrap();
        let names = vec!["hv-0-vm-0".to_string(), "hv-5-vm-0".to_string()];
        let (l, s) = route(&f, &t, Some(&names)).unwrap();
        assert_eq!(s.extra["vms"], 2);
        assert_eq!(s.extra["physical_lids"], 16 + 26);
        assert!(check(&f, &t, &l).unwrap().deadlock_free);
        assert!(route(&f, &t, Some(&["nope".to_string()])).is_err());
    }
}

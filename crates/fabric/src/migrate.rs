//! VM migration on a vSwitch fabric without re-routing (Paper II Alg. 1, later ItRC): the LFTs are
//! edited in place and only the changed 64-LID blocks are sent, one SMP each.
//!
//! - LID swap (prepopulated LIDs): the VM moves into an idle VF of the destination hypervisor and
//!   that VF's LID L_dest takes the VM's old place. On every switch LFT[L_vm] and LFT[L_dest] are
//!   swapped: no SMP when both already name the same port, one when both LIDs lie in one block,
//!   else two. Physical switches: at most 2 n SMPs.
//! - LID copy (dynamic LIDs): the VM moves into a free VF port of the destination hypervisor; on
//!   every switch LFT[L_vm] becomes LFT[L_pf] of the destination's PF (the destination vSwitch
//!   itself points to the VF port): at most one SMP per switch.
//!
//! Routes after the edit are routes that existed before (to L_dest or to the PF), so up/down
//! deadlock freedom is kept; `check` verifies it. The hypervisors' own tables (vSwitch LFTs) are
//! counted apart from the physical switches, which are what Paper II Table I counts.

use serde::Serialize;

use crate::bail;
use crate::error::Result;
use crate::lft::{Lfts, BLOCK};
use crate::model::{Fabric, PortRef};
use crate::vswitch::{FIRST_VF, PF_PORT};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Swap,
    Copy,
    /// LID copy with minimal reconfiguration (FTreeMinRC): a switch keeps its entry for the VM's
    /// LID when the route from it still reaches the VM up*/down*; only the others take the
    /// destination PF's entry. An intra-leaf move changes one physical switch, the leaf.
    MinCopy,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Migration {
    pub mode: &'static str,
    pub vm: String,
    pub from_hypervisor: String,
    pub to_hypervisor: String,
    pub vm_lid: u16,
    /// Swap: the idle VF's LID; copy: the destination PF's LID.
    pub other_lid: u16,
    /// SMPs (changed LFT blocks) on physical switches, and physical switches touched.
    pub smps: usize,
    pub switches_updated: usize,
    pub physical_switches: usize,
    /// SMPs to the two hypervisors' vSwitch tables.
    pub vswitch_smps: usize,
    /// Table I's bounds: 2 n (swap) or n (copy) physical SMPs at most.
    pub max_smps: usize,
    /// A full reconfiguration: every block of every physical switch.
    pub full_reconfiguration_smps: usize,
    /// Time to find the switches to update (min-copy; near zero for the others).
    pub marking_seconds: f64,
}

fn hypervisor_of(f: &Fabric, node: u32, what: &str) -> Result<PortRef> {
    let n = &f.nodes[node as usize];
    if n.is_switch() {
        bail!("{what} {:?} is a switch, not a VM or VF", n.name);
    }
    let Some(p) = n.first_port() else {
        bail!("{what} {:?} is not connected", n.name)
    };
    let r = n.remote(p).unwrap_or(PortRef { node: 0, port: 0 });
    let hv = &f.nodes[r.node as usize];
    if !hv.is_switch() || r.port < FIRST_VF {
        bail!(
            "{what} {:?} does not sit on a VF port of a hypervisor",
            n.name
        );
    }
    Ok(r)
}

fn relink(f: &mut Fabric, h: u32, to: PortRef) -> Result<()> {
    let p = f.nodes[h as usize].first_port().unwrap_or(1);
    if let Some(old) = f.nodes[h as usize].remote(p) {
        f.nodes[old.node as usize].links[old.port as usize] = None;
    }
    f.nodes[h as usize].links[p as usize] = None;
    f.connect(h, p, to.node, to.port)
}

/// Migrates VM `vm`: swap mode into the idle VF `to` (an HCA on another hypervisor), copy mode to
/// a free VF port of hypervisor `to`. Returns the new fabric, the new tables and the counts.
pub fn migrate(
    f: &Fabric,
    lfts: &Lfts,
    vm: &str,
    to: &str,
    mode: Mode,
) -> Result<(Fabric, Lfts, Migration)> {
    migrate_in(f, None, lfts, vm, to, mode)
}

/// `migrate` with the fat-tree view of `f` the caller already has (min-copy then marks on it
/// instead of building the view of the new fabric).
pub fn migrate_in(
    f: &Fabric,
    view: Option<&crate::topo::Topo>,
    lfts: &Lfts,
    vm: &str,
    to: &str,
    mode: Mode,
) -> Result<(Fabric, Lfts, Migration)> {
    let Some(v) = f.find(vm) else {
        bail!("unknown VM {vm:?}")
    };
    let Some(target) = f.find(to) else {
        bail!("unknown destination {to:?}")
    };
    let src = hypervisor_of(f, v, "VM")?;
    let mut g = f.clone();
    let vm_lid = f.nodes[v as usize].lid;
    let (dest_hv, other_lid) = match mode {
        Mode::Swap => {
            let dst = hypervisor_of(f, target, "idle VF")?;
            if target == v {
                bail!("the VM cannot swap with itself");
            }
            // Free both VF ports, then cross the links.
            g.nodes[src.node as usize].links[src.port as usize] = None;
            g.nodes[dst.node as usize].links[dst.port as usize] = None;
            let pv = f.nodes[v as usize].first_port().unwrap_or(1);
            let pt = f.nodes[target as usize].first_port().unwrap_or(1);
            g.nodes[v as usize].links[pv as usize] = None;
            g.nodes[target as usize].links[pt as usize] = None;
            g.connect(v, pv, dst.node, dst.port)?;
            g.connect(target, pt, src.node, src.port)?;
            (dst.node, f.nodes[target as usize].lid)
        }
        Mode::Copy | Mode::MinCopy => {
            let hv = &f.nodes[target as usize];
            if !hv.is_switch() {
                bail!(
                    "copy mode needs a hypervisor (vSwitch) as destination, {to:?} is not a switch"
                );
            }
            let Some(pf) = hv
                .remote(PF_PORT)
                .filter(|r| !f.nodes[r.node as usize].is_switch())
            else {
                bail!("{to:?} has no PF on port {PF_PORT}: not a hypervisor")
            };
            let Some(free) = (FIRST_VF..=hv.nports).find(|&p| hv.remote(p).is_none()) else {
                bail!("hypervisor {to:?} has no free VF")
            };
            if target == src.node {
                bail!("the VM already runs on {to:?}");
            }
            relink(
                &mut g,
                v,
                PortRef {
                    node: target,
                    port: free,
                },
            )?;
            (target, f.nodes[pf.node as usize].lid)
        }
    };
    let mut new = lfts.clone();
    let hv_guids = [
        f.nodes[src.node as usize].guid,
        f.nodes[dest_hv as usize].guid,
    ];
    let (a, b) = (vm_lid as usize, other_lid as usize);
    // Minimal copy: the entries that must change, found on the new fabric (timed: the marking).
    let marking = std::time::Instant::now();
    let keep = if mode == Mode::MinCopy {
        Some(match view {
            Some(t) => crate::minrc::entries_to_keep_in(t, &g, lfts, v, other_lid)?,
            None => crate::minrc::entries_to_keep(&g, lfts, v, other_lid)?,
        })
    } else {
        None
    };
    let marking_seconds = marking.elapsed().as_secs_f64();
    let mut m = Migration {
        mode: match mode {
            Mode::Swap => "swap",
            Mode::Copy => "copy",
            Mode::MinCopy => "min-copy",
        },
        vm: vm.to_string(),
        from_hypervisor: f.nodes[src.node as usize].name.clone(),
        to_hypervisor: f.nodes[dest_hv as usize].name.clone(),
        vm_lid,
        other_lid,
        smps: 0,
        switches_updated: 0,
        physical_switches: 0,
        vswitch_smps: 0,
        max_smps: 0,
        full_reconfiguration_smps: 0,
        marking_seconds,
    };
    let dest_guid = f.nodes[dest_hv as usize].guid;
    let dest_vf = g.nodes[v as usize]
        .first_port()
        .and_then(|p| g.nodes[v as usize].remote(p))
        .map_or(0, |r| r.port);
    // Hypervisors: switches with an HCA (the PF) on port 2 and nothing but HCAs below.
    let hypervisors: std::collections::HashSet<u64> = f
        .switches()
        .filter(|(_, n)| {
            n.remote(PF_PORT)
                .is_some_and(|r| !f.nodes[r.node as usize].is_switch())
                && (2..=n.nports).all(|p| {
                    n.remote(p)
                        .is_none_or(|r| !f.nodes[r.node as usize].is_switch())
                })
        })
        .map(|(_, n)| n.guid)
        .collect();
    for s in &mut new.switches {
        let need = a.max(b) + 1;
        if s.ports.len() < need {
            s.ports.resize(need, crate::lft::NO_PATH);
        }
        let (pa, pb) = (s.ports[a], s.ports[b]);
        let smps = match mode {
            Mode::Swap => {
                s.ports.swap(a, b);
                if pa == pb {
                    0
                } else if a / BLOCK == b / BLOCK {
                    1
                } else {
                    2
                }
            }
            Mode::Copy | Mode::MinCopy => {
                let want = if s.guid == dest_guid {
                    dest_vf
                } else if keep.as_ref().is_some_and(|k| k.contains(&s.guid)) {
                    pa
                } else {
                    pb
                };
                s.ports[a] = want;
                usize::from(pa != want)
            }
        };
        let hypervisor = hv_guids.contains(&s.guid) || hypervisors.contains(&s.guid);
        if hypervisor {
            m.vswitch_smps += smps;
        } else {
            m.physical_switches += 1;
            m.smps += smps;
            m.switches_updated += usize::from(smps > 0);
        }
    }
    m.max_smps = match mode {
        Mode::Swap => 2 * m.physical_switches,
        Mode::Copy | Mode::MinCopy => m.physical_switches,
    };
    m.full_reconfiguration_smps =
        m.physical_switches * crate::lft::blocks_for(f.max_lid() as usize);
    Ok((g, new, m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::check;
    use crate::gen::Pgft;
    use crate::lft::diff;
    use crate::topo::Topo;
    use crate::vswitch::{self, expand};

    fn setup() -> (Fabric, Lfts) {
        // 2-ary-2 tree, 4 hypervisors with 3 VFs and 2, 1, 1, 1 VMs.
        let f = expand(
            &Pgft::kary(2, 2).unwrap().build().unwrap(),
            3,
            &[2, 1, 1, 1],
        )
        .unwrap();
        let t = Topo::new(&f).unwrap();
        let (l, _) = vswitch::route(&f, &t, None).unwrap();
        (f, l)
    }

    fn port_to(f: &Fabric, l: &Lfts, sw: &str, dst: &str) -> u8 {
        let g = f.nodes[f.find(sw).unwrap() as usize].guid;
        let lid = f.nodes[f.find(dst).unwrap() as usize].lid;
        l.switches.iter().find(|s| s.guid == g).unwrap().port(lid)
    }

    #[test]
    fn lid_copy_follows_the_destination_pf_and_stays_deadlock_free() {
        let (f, l) = setup();
        let (g, n, m) = migrate(&f, &l, "hv-0-vm-1", "hv-3", Mode::Copy).unwrap();
        assert_eq!(
            (m.from_hypervisor.as_str(), m.to_hypervisor.as_str()),
            ("hv-0", "hv-3")
        );
        // Physical switches: LFT[vm] = LFT[pf of hv-3]; hv-3 itself: its first free VF port (4).
        for s in ["s1-0", "s1-1", "s2-0", "s2-1"] {
            assert_eq!(
                port_to(&g, &n, s, "hv-0-vm-1"),
                port_to(&f, &l, s, "hv-3-pf"),
                "{s}"
            );
        }
        assert_eq!(port_to(&g, &n, "hv-3", "hv-0-vm-1"), 4);
        assert_eq!(port_to(&g, &n, "hv-0", "hv-0-vm-1"), 1);
        let d = diff(&l, &n).unwrap();
        assert_eq!(m.smps + m.vswitch_smps, d.blocks);
        assert!(
            m.smps >= 1 && m.smps <= m.max_smps && m.max_smps == 4,
            "{m:?}"
        );
        let t = Topo::new(&g).unwrap();
        let r = check(&g, &t, &n).unwrap();
        assert!(r.deadlock_free && r.unreachable == 0, "{r:?}");
        assert!(migrate(&f, &l, "hv-0-vm-1", "hv-0-pf", Mode::Copy).is_err());
        assert!(migrate(&f, &l, "hv-0-vm-1", "hv-0", Mode::Copy).is_err());
    }

    #[test]
    fn lid_swap_exchanges_two_columns_and_counts_blocks() {
        let (f, l) = setup();
        // hv-2 has one VM and two idle VFs: give hv-0-vm-0 the place of an idle VF "hv-2-vm-0"
        // (treated as idle here) and send that VF's LID back to hv-0.
        let (g, n, m) = migrate(&f, &l, "hv-0-vm-0", "hv-2-vm-0", Mode::Swap).unwrap();
        for s in ["s1-0", "s1-1", "s2-0", "s2-1", "hv-0", "hv-2"] {
            assert_eq!(
                port_to(&g, &n, s, "hv-0-vm-0"),
                port_to(&f, &l, s, "hv-2-vm-0"),
                "{s}"
            );
            assert_eq!(
                port_to(&g, &n, s, "hv-2-vm-0"),
                port_to(&f, &l, s, "hv-0-vm-0"),
                "{s}"
            );
        }
        // All LIDs of this small fabric share block 0: one SMP per physical switch that changed.
        assert_eq!(m.smps, m.switches_updated);
        assert_eq!(m.smps + m.vswitch_smps, diff(&l, &n).unwrap().blocks);
        assert_eq!(m.max_smps, 8);
        let t = Topo::new(&g).unwrap();
        assert!(check(&g, &t, &n).unwrap().deadlock_free);
        assert!(migrate(&f, &l, "hv-0-vm-0", "hv-2", Mode::Swap).is_err());
    }

    #[test]
    fn swap_across_blocks_costs_two_smps_per_switch() {
        let (f, mut l) = setup();
        // Move the VM's LID column into block 1 to exercise the two-block case.
        let (a, b) = (
            f.nodes[f.find("hv-0-vm-0").unwrap() as usize].lid as usize,
            f.nodes[f.find("hv-2-vm-0").unwrap() as usize].lid as usize,
        );
        let mut f2 = f.clone();
        let v = f2.find("hv-2-vm-0").unwrap();
        f2.nodes[v as usize].lid = 70;
        for s in &mut l.switches {
            s.ports.resize(71, crate::lft::NO_PATH);
            s.ports[70] = s.ports[b];
            s.ports[b] = crate::lft::NO_PATH;
        }
        let (_, _, m) = migrate(&f2, &l, "hv-0-vm-0", "hv-2-vm-0", Mode::Swap).unwrap();
        let changed = l
            .switches
            .iter()
            .filter(|s| s.ports[a] != s.ports[70])
            .count();
        assert_eq!(m.smps + m.vswitch_smps, 2 * changed);
    }
}

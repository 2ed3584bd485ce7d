//! Migration simulator (Paper V's simulations): a vSwitch fat tree routed with vSwitchFatTree,
//! then a sequence of VM migrations, each carried out on the fabric and tables the previous one
//! left (LID copy or FTreeMinRC's minimal copy), optionally re-balanced every K moves by routing
//! the current placement afresh. Per move: SMPs to physical switches and hypervisors; at
//! snapshots (every X % of the moves, like the paper's LFT snapshots every 10 %): routing quality
//! of the tables in place and of a fresh vSwitchFatTree on the same placement (what a re-balance
//! would give, and what it would cost in SMPs).
//!
//! Routing quality is the paper's: ORCS's bisect pattern over the running VMs (random pairs,
//! mean of 1 / max congestion per flow, averaged over runs), plus the largest number of VM
//! destinations any link between physical switches carries.

use std::collections::HashSet;
use std::time::Instant;

use serde::Serialize;

use crate::align::align;
use crate::bail;
use crate::error::Result;
use crate::eval::{Channels, TableLookup};
use crate::lft::{Lfts, BLOCK, NO_PATH};
use crate::migplan::{plan, Initial, Pattern, Placement};
use crate::migrate::{migrate_in, Migration, Mode};
use crate::model::Fabric;
use crate::patterns::{phases, Rng};
use crate::topo::{Dir, Topo, NONE};
use crate::vswitch::{self, expand_with, is_vswitch, HvLid, FIRST_VF, UPLINK};

#[derive(Debug, Clone)]
pub struct SimOptions {
    pub vfs: u32,
    /// Share of all VFs holding a VM at the start (Paper V: 0.25, 0.5, 0.75).
    pub population: f64,
    pub initial: Initial,
    pub pattern: Pattern,
    /// Moves of the random pattern (default 2 x hypervisors); the others end when placed.
    pub migrations: Option<usize>,
    pub mode: Mode,
    /// Re-route with vSwitchFatTree after every this many moves (0: never).
    pub rebalance_every: usize,
    pub snapshot_percent: f64,
    pub bisect_runs: usize,
    pub seed: u64,
    pub progress: bool,
    /// The hypervisors' own LID or the PF's.
    pub hv_lid: HvLid,
}

/// One migration as carried out.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Step {
    pub step: usize,
    pub vm: String,
    pub from: String,
    pub to: String,
    pub same_leaf: bool,
    pub smps: usize,
    pub switches_updated: usize,
    pub vswitch_smps: usize,
    pub marking_ms: f64,
    /// Physical SMPs of the re-balance made after this move (0 when none was made).
    pub rebalance_smps: usize,
    /// Physical SMPs so far, re-balances included.
    pub cumulative_smps: usize,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Quality {
    /// Effective bisection bandwidth (ORCS bisect, mean over runs).
    pub bisect: f64,
    /// Most VM destinations routed over one link between physical switches.
    pub max_routes_per_link: usize,
    pub mean_routes_per_link: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Snapshot {
    pub step: usize,
    pub percent: f64,
    pub current: Quality,
    /// A fresh vSwitchFatTree on the same placement.
    pub rebalanced: Quality,
    /// Physical SMPs a re-balance would send now.
    pub rebalance_smps: usize,
    pub deadlock_free: bool,
    pub unreachable: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct SimResult {
    pub hypervisors: usize,
    pub vms: usize,
    pub vfs: u32,
    pub physical_switches: usize,
    pub lids: usize,
    pub mode: &'static str,
    pub pattern: String,
    pub initial: String,
    pub population: f64,
    pub rebalance_every: usize,
    pub seed: u64,
    pub hv_lid: &'static str,
    pub migrations: usize,
    pub intra_leaf: usize,
    pub smps_total: usize,
    pub smps_mean: f64,
    pub smps_max: usize,
    pub switches_updated_mean: f64,
    pub vswitch_smps_total: usize,
    pub rebalances: usize,
    pub rebalance_smps_total: usize,
    /// Full reconfiguration of the physical switches: every block of every one.
    pub full_reconfiguration_smps: usize,
    pub steps: Vec<Step>,
    pub snapshots: Vec<Snapshot>,
    pub seconds: f64,
}

/// A vSwitch fabric and the tables in place.
#[derive(Debug, Clone)]
pub struct State {
    pub fabric: Fabric,
    pub lfts: Lfts,
    hv_guids: HashSet<u64>,
    /// Fat-tree view of the switches (VM moves do not change it); min-copy marks on it.
    view: Topo,
}

impl State {
    /// Hypervisors with `vfs` VFs and `counts[i]` VMs on `phys`, routed with vSwitchFatTree.
    pub fn new(phys: &Fabric, vfs: u32, counts: &[u32], hv_lid: HvLid) -> Result<State> {
        let f = expand_with(phys, vfs, counts, hv_lid)?;
        crate::model::check_lid_count(f.num_lids() as u64)?;
        let t = Topo::new(&f)?;
        let (lfts, _) = vswitch::route(&f, &t, None)?;
        let hv_guids = t
            .leaves
            .iter()
            .filter(|&&s| is_vswitch(&t, s))
            .map(|&s| f.nodes[t.sw_node[s as usize] as usize].guid)
            .collect();
        Ok(State {
            fabric: f,
            lfts,
            hv_guids,
            view: t,
        })
    }

    pub fn migrate(&mut self, vm: &str, to: &str, mode: Mode) -> Result<Migration> {
        let (g, l, m) = migrate_in(&self.fabric, Some(&self.view), &self.lfts, vm, to, mode)?;
        self.fabric = g;
        self.lfts = l;
        Ok(m)
    }

    /// Tables a fresh vSwitchFatTree gives the current placement.
    pub fn rerouted(&self) -> Result<Lfts> {
        let t = Topo::new(&self.fabric)?;
        Ok(vswitch::route(&self.fabric, &t, None)?.0)
    }

    /// Changed 64-LID blocks from the tables in place to `new`: (physical switches, hypervisors).
    pub fn blocks_to(&self, new: &Lfts) -> (usize, usize) {
        let old = self.lfts.by_guid();
        let (mut phys, mut vsw) = (0, 0);
        for s in &new.switches {
            let o = old.get(&s.guid).map(|&i| &self.lfts.switches[i].ports);
            let n = s.ports.len().max(o.map_or(0, Vec::len));
            let changed = (0..n.div_ceil(BLOCK))
                .filter(|b| {
                    (b * BLOCK..((b + 1) * BLOCK).min(n)).any(|lid| {
                        s.ports.get(lid).copied().unwrap_or(NO_PATH)
                            != o.and_then(|o| o.get(lid).copied()).unwrap_or(NO_PATH)
                    })
                })
                .count();
            if self.hv_guids.contains(&s.guid) {
                vsw += changed;
            } else {
                phys += changed;
            }
        }
        (phys, vsw)
    }

    pub fn physical_switches(&self) -> usize {
        self.fabric.num_switches() - self.hv_guids.len()
    }

    /// Hypervisor name of each VM, leaf of each hypervisor.
    fn hypervisor_of(&self, vm: &str) -> Result<(String, String)> {
        let f = &self.fabric;
        let Some(v) = f.find(vm) else {
            bail!("unknown VM {vm:?}")
        };
        let n = &f.nodes[v as usize];
        let Some(hv) = n.first_port().and_then(|p| n.remote(p)) else {
            bail!("{vm} is not connected")
        };
        let hvn = &f.nodes[hv.node as usize];
        let leaf = hvn
            .remote(UPLINK)
            .map_or(String::new(), |r| f.nodes[r.node as usize].name.clone());
        Ok((hvn.name.clone(), leaf))
    }
}

/// Routing quality of `lfts` on `f` over the VMs (HCAs on VF ports of vSwitches).
pub fn quality(f: &Fabric, lfts: &Lfts, runs: usize, seed: u64) -> Result<Quality> {
    let t = Topo::new(f)?;
    let tables = align(f, &t, lfts)?;
    let mut lids = Vec::new();
    let mut at = Vec::new();
    for &s in &t.leaves {
        if !is_vswitch(&t, s) {
            continue;
        }
        for &(port, h) in &t.hcas[s as usize] {
            if port >= FIRST_VF {
                lids.push(f.nodes[h as usize].lid);
                at.push(s);
            }
        }
    }
    let n = lids.len();
    if n < 2 {
        bail!("routing quality needs at least 2 VMs, the fabric has {n}");
    }
    // Links between physical switches: VM destinations per port.
    let mut load = vec![0usize; t.num_switches() * t.stride];
    let mut links = 0usize;
    for (s, table) in tables.iter().enumerate() {
        if is_vswitch(&t, s as u32) {
            continue;
        }
        for p in 1..t.stride {
            let k = s * t.stride + p;
            let dir = t.dir(s as u32, p as u8);
            let r = t.remote_sw[k];
            if !matches!(dir, Dir::Up | Dir::Down) || r == NONE || is_vswitch(&t, r) {
                continue;
            }
            links += 1;
            load[k] = lids.iter().filter(|&&l| table.port(l) == p as u8).count();
        }
    }
    let ch = Channels { t: &t, leaf: at };
    let lookup = TableLookup { tables, lids };
    let place: Vec<usize> = (0..n).collect();
    let (mut sum, mut work, mut paths) = (0.0, Vec::new(), Vec::new());
    for run in 0..runs.max(1) {
        let mut rng = Rng::new(seed.wrapping_mul(0x9E37_79B9) ^ run as u64);
        let ph = phases("bisect", n, &mut rng)?;
        sum += ch.score(&lookup, &ph, &place, &mut work, &mut paths).0;
    }
    Ok(Quality {
        bisect: sum / runs.max(1) as f64,
        max_routes_per_link: load.iter().copied().max().unwrap_or(0),
        mean_routes_per_link: if links == 0 {
            0.0
        } else {
            load.iter().sum::<usize>() as f64 / links as f64
        },
    })
}

fn snapshot(st: &State, step: usize, total: usize, o: &SimOptions) -> Result<Snapshot> {
    let fresh = st.rerouted()?;
    let seed = o.seed ^ step as u64;
    let t = Topo::new(&st.fabric)?;
    let r = crate::check::check(&st.fabric, &t, &st.lfts)?;
    Ok(Snapshot {
        step,
        percent: if total == 0 {
            100.0
        } else {
            100.0 * step as f64 / total as f64
        },
        current: quality(&st.fabric, &st.lfts, o.bisect_runs, seed)?,
        rebalanced: quality(&st.fabric, &fresh, o.bisect_runs, seed)?,
        rebalance_smps: st.blocks_to(&fresh).0,
        deadlock_free: r.deadlock_free,
        unreachable: r.unreachable,
    })
}

/// Runs the simulation on the physical tree `phys`.
pub fn simulate(phys: &Fabric, o: &SimOptions) -> Result<SimResult> {
    let start = Instant::now();
    if o.mode == Mode::Swap {
        bail!("migsim moves VMs by LID copy (copy, min-copy): VFs without a VM have no LID here");
    }
    if !(o.snapshot_percent > 0.0 && o.snapshot_percent <= 100.0) {
        bail!("snapshot percent must be in (0, 100]");
    }
    let hypervisors = phys.num_hcas();
    let mut rng = Rng::new(o.seed);
    let counts = Placement::initial(
        hypervisors,
        o.vfs as usize,
        o.population,
        o.initial,
        &mut rng,
    )?;
    let placement = Placement::from_counts(o.vfs as usize, &counts);
    let moves = plan(&placement, o.pattern, o.migrations, &mut rng)?;
    let counts32: Vec<u32> = counts.iter().map(|&c| c as u32).collect();
    let mut st = State::new(phys, o.vfs, &counts32, o.hv_lid)?;
    // VM names as expand gives them, in placement order.
    let names: Vec<String> = counts
        .iter()
        .enumerate()
        .flat_map(|(h, &c)| (0..c).map(move |j| format!("hv-{h}-vm-{j}")))
        .collect();
    let total = moves.len();
    let every = (total as f64 * o.snapshot_percent / 100.0).ceil().max(1.0) as usize;
    let mut snaps = vec![snapshot(&st, 0, total, o)?];
    let mut steps = Vec::with_capacity(total);
    let (mut cumulative, mut rebalances, mut rebalance_total) = (0usize, 0usize, 0usize);
    let mut last = Instant::now();
    for (i, &(vm, to)) in moves.iter().enumerate() {
        let (from, from_leaf) = st.hypervisor_of(&names[vm])?;
        let to_name = format!("hv-{to}");
        let m = st.migrate(&names[vm], &to_name, o.mode)?;
        let (_, to_leaf) = st.hypervisor_of(&names[vm])?;
        cumulative += m.smps;
        let mut rebalance_smps = 0;
        if o.rebalance_every > 0 && (i + 1) % o.rebalance_every == 0 {
            let fresh = st.rerouted()?;
            rebalance_smps = st.blocks_to(&fresh).0;
            st.lfts = fresh;
            cumulative += rebalance_smps;
            rebalances += 1;
            rebalance_total += rebalance_smps;
        }
        steps.push(Step {
            step: i + 1,
            vm: names[vm].clone(),
            from,
            to: to_name,
            same_leaf: from_leaf == to_leaf,
            smps: m.smps,
            switches_updated: m.switches_updated,
            vswitch_smps: m.vswitch_smps,
            marking_ms: m.marking_seconds * 1e3,
            rebalance_smps,
            cumulative_smps: cumulative,
        });
        if (i + 1) % every == 0 || i + 1 == total {
            snaps.push(snapshot(&st, i + 1, total, o)?);
        }
        if o.progress && last.elapsed().as_secs_f64() > 2.0 {
            last = Instant::now();
            eprintln!(
                "fabric migsim: {}/{} moves, {} SMPs so far, {:.0} s",
                i + 1,
                total,
                cumulative,
                start.elapsed().as_secs_f64()
            );
        }
    }
    let n = steps.len().max(1) as f64;
    let phys_sw = st.physical_switches();
    Ok(SimResult {
        hypervisors,
        vms: names.len(),
        vfs: o.vfs,
        physical_switches: phys_sw,
        lids: st.fabric.num_lids(),
        mode: match o.mode {
            Mode::Copy => "copy",
            Mode::MinCopy => "min-copy",
            Mode::Swap => "swap",
        },
        pattern: o.pattern.name().to_string(),
        initial: o.initial.name().to_string(),
        population: o.population,
        rebalance_every: o.rebalance_every,
        seed: o.seed,
        hv_lid: if o.hv_lid == HvLid::Own {
            "own"
        } else {
            "shared"
        },
        migrations: steps.len(),
        intra_leaf: steps.iter().filter(|s| s.same_leaf).count(),
        smps_total: steps.iter().map(|s| s.smps).sum(),
        smps_mean: steps.iter().map(|s| s.smps).sum::<usize>() as f64 / n,
        smps_max: steps.iter().map(|s| s.smps).max().unwrap_or(0),
        switches_updated_mean: steps.iter().map(|s| s.switches_updated).sum::<usize>() as f64 / n,
        vswitch_smps_total: steps.iter().map(|s| s.vswitch_smps).sum(),
        rebalances,
        rebalance_smps_total: rebalance_total,
        full_reconfiguration_smps: phys_sw * crate::lft::blocks_for(st.fabric.max_lid() as usize),
        steps,
        snapshots: snaps,
        seconds: start.elapsed().as_secs_f64(),
    })
}

//! Routing quality like ORCS: ranks are placed on compute nodes (randomly per run, seeded, or by a
//! given node order), each phase of a pattern puts its flows on the routes the LFTs give, every
//! directed channel (node injection links included) counts the flows crossing it, a flow's
//! congestion is the largest count on its route and its bandwidth the inverse. Per run the
//! effective bandwidth is the mean flow bandwidth over all phases (ORCS's hist_acc_band);
//! results are averaged over the runs, which are spread over threads.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use serde::Serialize;

use crate::align::{align, par_fold_on, thread_count};
use crate::bail;
use crate::error::Result;
use crate::lft::{Lfts, SwitchLft, NO_PATH};
use crate::model::Fabric;
use crate::patterns::{phases, Rng};
use crate::topo::{Dir, Topo, NONE};

#[derive(Debug, Clone)]
pub struct EvalOptions {
    pub pattern: String,
    pub runs: usize,
    pub seed: u64,
    /// Compute-node names in rank order; unlisted nodes follow in fabric order. None = random.
    pub order: Option<Vec<String>>,
    pub progress: bool,
    /// Worker threads for the runs (0: one per core).
    pub threads: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct EvalResult {
    pub pattern: String,
    pub runs: usize,
    pub nodes: usize,
    pub ordered: bool,
    pub bandwidth_mean: f64,
    pub bandwidth_min: f64,
    pub bandwidth_max: f64,
    pub max_congestion_mean: f64,
    /// Runs per effective-bandwidth decile [0,0.1), ..., [0.9,1.0].
    pub bandwidth_histogram: Vec<usize>,
    pub broken_routes: usize,
    pub seconds: f64,
    /// Worker threads the runs were spread over.
    pub threads: usize,
}

/// Where routes come from: the out port of switch `s` towards compute node `dst` (an index into
/// the evaluation's node list).
pub trait PortLookup: Sync {
    fn port(&self, s: u32, dst: usize) -> u8;
}

/// Routes from LFTs: `lids[dst]` is the LID of compute node `dst`.
pub struct TableLookup<'a> {
    pub tables: Vec<&'a SwitchLft>,
    pub lids: Vec<u16>,
}

impl PortLookup for TableLookup<'_> {
    fn port(&self, s: u32, dst: usize) -> u8 {
        self.tables[s as usize].port(self.lids[dst])
    }
}

/// Channels of the fabric: every switch port plus one injection channel per compute node.
pub struct Channels<'a> {
    pub t: &'a Topo,
    /// Leaf switch of each compute node.
    pub leaf: Vec<u32>,
}

impl Channels<'_> {
    pub fn count(&self) -> usize {
        self.t.num_switches() * self.t.stride + self.leaf.len()
    }

    /// Channels of the route src -> dst (injection channel first); false when it does not arrive.
    pub fn path(&self, r: &impl PortLookup, src: usize, dst: usize, out: &mut Vec<u32>) -> bool {
        out.clear();
        let t = self.t;
        let switch_channels = t.num_switches() * t.stride;
        out.push((switch_channels + src) as u32);
        let mut x = self.leaf[src];
        for _ in 0..=2 * t.nlevels + 1 {
            let p = r.port(x, dst);
            if p == NO_PATH || p == 0 {
                return false;
            }
            out.push((x as usize * t.stride + p as usize) as u32);
            if t.dir(x, p) == Dir::Hca {
                return x == self.leaf[dst];
            }
            x = t.remote_sw[x as usize * t.stride + p as usize];
            if x == NONE {
                return false;
            }
        }
        false
    }

    /// One run: ranks placed by `place` (rank -> node index), the pattern's phases one after the
    /// other. Returns (effective bandwidth = mean of 1 / max congestion over all flows, largest
    /// congestion, routes that did not arrive). `load` and `paths` are work space.
    pub fn score(
        &self,
        r: &impl PortLookup,
        phases: &[crate::patterns::Phase],
        place: &[usize],
        load: &mut Vec<u32>,
        paths: &mut Vec<Vec<u32>>,
    ) -> (f64, u32, usize) {
        load.clear();
        load.resize(self.count(), 0);
        let (mut sum_bw, mut flows, mut maxc, mut broken) = (0.0f64, 0usize, 0u32, 0usize);
        for phase in phases {
            paths.resize_with(phase.len().max(paths.len()), Vec::new);
            for (k, &(a, b)) in phase.iter().enumerate() {
                if !self.path(r, place[a as usize], place[b as usize], &mut paths[k]) {
                    broken += 1;
                    paths[k].clear();
                }
                for &c in &paths[k] {
                    load[c as usize] += 1;
                }
            }
            for p in &paths[..phase.len()] {
                if p.is_empty() {
                    continue;
                }
                let c = p.iter().map(|&c| load[c as usize]).max().unwrap_or(1);
                maxc = maxc.max(c);
                sum_bw += 1.0 / f64::from(c);
                flows += 1;
            }
            for p in &paths[..phase.len()] {
                for &c in p {
                    load[c as usize] = 0;
                }
            }
        }
        let bw = if flows == 0 {
            0.0
        } else {
            sum_bw / flows as f64
        };
        (bw, maxc, broken)
    }
}

#[derive(Default)]
struct Acc {
    bw: Vec<(usize, f64, f64)>,
    broken: usize,
    load: Vec<u32>,
    paths: Vec<Vec<u32>>,
}

pub fn evaluate(f: &Fabric, t: &Topo, lfts: &Lfts, o: &EvalOptions) -> Result<EvalResult> {
    let start = Instant::now();
    let tables = align(f, t, lfts)?;
    let mut nodes: Vec<(u32, u16, u32)> = Vec::new();
    for &l in &t.leaves {
        for &(_, h) in &t.hcas[l as usize] {
            nodes.push((l, f.nodes[h as usize].lid, h));
        }
    }
    let n = nodes.len();
    if o.runs == 0 {
        bail!("runs must be >= 1");
    }
    // Fixed rank -> node placement from the order, if any.
    let fixed: Option<Vec<usize>> = match &o.order {
        None => None,
        Some(names) => {
            let mut pos = vec![usize::MAX; f.nodes.len()];
            for (i, &(_, _, h)) in nodes.iter().enumerate() {
                pos[h as usize] = i;
            }
            let mut used = vec![false; n];
            let mut v = Vec::with_capacity(n);
            for name in names {
                let Some(ni) = f.find(name) else {
                    bail!("order: unknown node {name:?}")
                };
                let i = pos[ni as usize];
                if i == usize::MAX {
                    bail!("order: {name:?} is not a compute node");
                }
                if std::mem::replace(&mut used[i], true) {
                    bail!("order: {name:?} listed twice");
                }
                v.push(i);
            }
            v.extend((0..n).filter(|&i| !used[i]));
            Some(v)
        }
    };
    let lookup = TableLookup {
        tables,
        lids: nodes.iter().map(|&(_, lid, _)| lid).collect(),
    };
    let ch = Channels {
        t,
        leaf: nodes.iter().map(|&(l, _, _)| l).collect(),
    };
    let done = AtomicUsize::new(0);
    let last = std::sync::Mutex::new(Instant::now());
    let parts = par_fold_on(o.threads, o.runs, Acc::default, |acc, run| {
        let mut rng = Rng::new(o.seed.wrapping_mul(0x1000_0000_01B3) ^ run as u64);
        let place: Vec<usize> = match &fixed {
            Some(v) => v.clone(),
            None => {
                let mut v: Vec<usize> = (0..n).collect();
                rng.shuffle(&mut v);
                v
            }
        };
        let Ok(ph) = phases(&o.pattern, n, &mut rng) else {
            return;
        };
        let (bw, maxc, broken) = ch.score(&lookup, &ph, &place, &mut acc.load, &mut acc.paths);
        acc.broken += broken;
        acc.bw.push((run, bw, f64::from(maxc)));
        let d = done.fetch_add(1, Ordering::Relaxed) + 1;
        if o.progress {
            if let Ok(mut l) = last.try_lock() {
                if l.elapsed().as_secs_f64() > 2.0 {
                    *l = Instant::now();
                    eprintln!("fabric eval: {d}/{} runs", o.runs);
                }
            }
        }
    });
    let mut all: Vec<(usize, f64, f64)> = Vec::with_capacity(o.runs);
    let mut broken = 0;
    for a in parts {
        all.extend(a.bw);
        broken += a.broken;
    }
    if all.len() != o.runs {
        bail!("unknown pattern {:?}", o.pattern);
    }
    all.sort_by_key(|x| x.0);
    let runs = all.len() as f64;
    let mut hist = vec![0usize; 10];
    for &(_, bw, _) in &all {
        hist[((bw * 10.0) as usize).min(9)] += 1;
    }
    Ok(EvalResult {
        pattern: o.pattern.clone(),
        runs: all.len(),
        nodes: n,
        ordered: fixed.is_some(),
        bandwidth_mean: all.iter().map(|x| x.1).sum::<f64>() / runs,
        bandwidth_min: all.iter().map(|x| x.1).fold(f64::INFINITY, f64::min),
        bandwidth_max: all.iter().map(|x| x.1).fold(0.0, f64::max),
        max_congestion_mean: all.iter().map(|x| x.2).sum::<f64>() / runs,
        bandwidth_histogram: hist,
        broken_routes: broken,
        seconds: start.elapsed().as_secs_f64(),
        threads: thread_count(o.threads),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ftree;
    use crate::gen::Pgft;

    fn opts(pattern: &str, runs: usize, order: Option<Vec<String>>) -> EvalOptions {
        EvalOptions {
            pattern: pattern.into(),
            runs,
            seed: 3,
            order,
            progress: false,
            threads: 0,
        }
    }

    #[test]
    fn neighbour_patterns_are_bounded_by_injection() {
        // With n neighbours every node injects n flows: bandwidth at most 1/n.
        let f = Pgft::kary(4, 2).unwrap().build().unwrap();
        let t = Topo::new(&f).unwrap();
        let (l, _) = ftree::route(&f).unwrap();
        for (p, bound) in [
            ("2-neighbor", 0.5),
            ("4-neighbor", 0.25),
            ("6-neighbor", 1.0 / 6.0),
        ] {
            let r = evaluate(&f, &t, &l, &opts(p, 20, None)).unwrap();
            assert!(r.bandwidth_max <= bound + 1e-9, "{p} {r:?}");
            assert_eq!(r.broken_routes, 0);
        }
    }

    #[test]
    fn ftree_in_port_order_gives_full_bandwidth_for_shift_in_port_order() {
        // Ranks in fabric order on a k-ary-2-tree: ftree spreads each leaf's k nodes over k roots,
        // so a shift by k (leaf to leaf) never shares a link. Random placement does worse.
        let f = Pgft::kary(4, 2).unwrap().build().unwrap();
        let t = Topo::new(&f).unwrap();
        let (l, _) = ftree::route(&f).unwrap();
        let names: Vec<String> = (0..16).map(|i| format!("h-{i}")).collect();
        let r = evaluate(&f, &t, &l, &opts("bruck", 1, Some(names))).unwrap();
        let random = evaluate(&f, &t, &l, &opts("bruck", 200, None)).unwrap();
        assert_eq!(r.bandwidth_mean, 1.0, "{r:?}");
        assert!(random.bandwidth_mean < 0.9, "{random:?}");
        let e = evaluate(&f, &t, &l, &opts("bisect", 0, None)).unwrap_err();
        assert!(e.0.contains("runs"));
    }

    #[test]
    fn seeded_runs_are_reproducible() {
        let f = Pgft::kary(4, 2).unwrap().build().unwrap();
        let t = Topo::new(&f).unwrap();
        let (l, _) = ftree::route(&f).unwrap();
        let a = evaluate(&f, &t, &l, &opts("bisect", 50, None)).unwrap();
        let b = evaluate(&f, &t, &l, &opts("bisect", 50, None)).unwrap();
        assert_eq!(a.bandwidth_mean, b.bandwidth_mean);
        assert!(a.bandwidth_min < a.bandwidth_max);
    }
}

//! Lines up LFTs (from a dump or an engine) with the switches of a fabric, by GUID.

use crate::bail;
use crate::error::Result;
use crate::lft::{Lfts, SwitchLft};
use crate::model::Fabric;
use crate::topo::Topo;

/// Tables in `Topo` switch order.
pub fn align<'a>(f: &Fabric, t: &Topo, lfts: &'a Lfts) -> Result<Vec<&'a SwitchLft>> {
    let idx = lfts.by_guid();
    let mut out = Vec::with_capacity(t.num_switches());
    for &ni in &t.sw_node {
        let n = &f.nodes[ni as usize];
        match idx.get(&n.guid) {
            Some(&i) => out.push(&lfts.switches[i]),
            None => bail!("no LFT for switch {} (GUID {:#018x})", n.name, n.guid),
        }
    }
    Ok(out)
}

/// Destination LIDs of compute nodes (HCAs attached to a leaf), ascending.
pub fn hca_lids(f: &Fabric, t: &Topo) -> Vec<u16> {
    let mut v: Vec<u16> = t
        .hcas
        .iter()
        .flatten()
        .map(|&(_, h)| f.nodes[h as usize].lid)
        .collect();
    v.sort_unstable();
    v
}

/// Runs `work(i)` for i in 0..n on all cores, each thread folding into its own accumulator.
pub fn par_fold<A: Send, W: Fn(&mut A, usize) + Sync>(
    n: usize,
    init: impl Fn() -> A + Sync,
    work: W,
) -> Vec<A> {
    par_fold_on(0, n, init, work)
}

/// Worker threads for `wanted` (0: one per core, at most 16).
pub fn thread_count(wanted: usize) -> usize {
    if wanted > 0 {
        return wanted;
    }
    std::thread::available_parallelism()
        .map_or(1, |x| x.get())
        .clamp(1, 16)
}

/// `par_fold` on `threads` threads (0: one per core).
pub fn par_fold_on<A: Send, W: Fn(&mut A, usize) + Sync>(
    threads: usize,
    n: usize,
    init: impl Fn() -> A + Sync,
    work: W,
) -> Vec<A> {
    let threads = thread_count(threads);
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut acc = init();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if i >= n {
                            break;
                        }
                        work(&mut acc, i);
                    }
                    acc
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    })
}

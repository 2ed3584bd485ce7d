//! Deadlock freedom with service levels: engines such as LASH and DFSSSP break the cycles of the
//! channel dependency graph by putting paths on different SLs, and so on different virtual lanes.
//! The graph's vertices are then (channel, VL) pairs: a dependency joins two consecutive channels
//! of a path on the VLs the path's SL maps to there. Paths are walked source by source (an SL
//! belongs to a source and destination pair), with the SLs the SA hands out (`saquery -p` output,
//! or "SLID DLID SL" lines) and a SL-to-VL map (identity unless given; per switch and port pair
//! from OpenSM's opensm-sl2vl.dump). Works on any topology, tori and rings included.

use std::collections::HashMap;

use serde::Serialize;

use crate::bail;
use crate::error::Result;
use crate::lft::{Lfts, NO_PATH};
use crate::model::Fabric;

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct VlReport {
    pub paths: usize,
    /// (VL, dependencies, acyclic) for every VL in use.
    pub vls: Vec<(u8, usize, bool)>,
    /// Dependencies that change VL between two hops (an SL2VL table mapping the SL differently).
    pub cross_vl_dependencies: usize,
    /// Source-destination paths that end nowhere (no entry, a port with no link), and that loop.
    pub unreachable: usize,
    pub loops: usize,
    /// The graph over (channel, VL) is acyclic and no path loops.
    pub deadlock_free: bool,
}

/// SL-to-VL mapping: one map everywhere, or per switch (by GUID) and (in port, out port), as
/// OpenSM's opensm-sl2vl.dump lists them; pairs a switch does not list map SL to VL unchanged.
#[derive(Debug, Clone)]
pub enum Sl2Vl {
    Uniform([u8; 16]),
    PerPort(HashMap<(u64, u8, u8), [u8; 16]>),
}

impl Sl2Vl {
    fn vl(&self, guid: u64, inp: u8, out: u8, sl: u8) -> u8 {
        match self {
            Sl2Vl::Uniform(m) => m[sl as usize & 0xF],
            Sl2Vl::PerPort(t) => t
                .get(&(guid, inp, out))
                .map_or(sl & 0xF, |m| m[sl as usize & 0xF]),
        }
    }
}

/// Reads opensm-sl2vl.dump: "Switch 0x<guid>, ..." headers, then "IN OUT : VL0 .. VL15" rows
/// (rows under other headers, e.g. channel adapters, are skipped).
pub fn read_sl2vl_dump(text: &str) -> Result<Sl2Vl> {
    let mut out = HashMap::new();
    let mut guid = None;
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        if let Some(rest) = l.strip_prefix("Switch ") {
            let g = rest.split(',').next().unwrap_or("").trim();
            guid = u64::from_str_radix(g.trim_start_matches("0x"), 16).ok();
            if guid.is_none() {
                bail!("line {}: bad switch GUID", i + 1);
            }
            continue;
        }
        let Some((ports, vls)) = l.split_once(':') else {
            guid = None; // another kind of header
            continue;
        };
        let Some(g) = guid else { continue };
        let p: Vec<u8> = ports
            .split_whitespace()
            .map(str::parse)
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| crate::error::err(format!("line {}: expected IN OUT : 16 VLs", i + 1)))?;
        let v: Vec<u8> = vls
            .split_whitespace()
            .map(str::parse)
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| crate::error::err(format!("line {}: expected IN OUT : 16 VLs", i + 1)))?;
        if p.len() != 2 || v.len() != 16 {
            bail!("line {}: expected IN OUT : 16 VLs", i + 1);
        }
        let mut m = [0u8; 16];
        m.copy_from_slice(&v);
        out.insert((g, p[0], p[1]), m);
    }
    if out.is_empty() {
        bail!("no switch SL2VL tables found");
    }
    Ok(Sl2Vl::PerPort(out))
}

/// Reads path SLs: `saquery -p` output (blocks with slid/dlid/sl lines) or "SLID DLID SL" lines.
pub fn read_path_sls(text: &str) -> Result<HashMap<(u16, u16), u8>> {
    let mut out = HashMap::new();
    let (mut slid, mut dlid) = (None, None);
    let num = |v: &str| -> Option<u64> {
        let v = v.trim();
        match v.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => v.parse().ok(),
        }
    };
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if let Some((key, val)) = l.split_once("..") {
            let val = val.trim_start_matches('.');
            match key.trim() {
                "slid" => slid = num(val),
                "dlid" => dlid = num(val),
                "sl" => {
                    if let (Some(s), Some(d), Some(sl)) = (slid, dlid, num(val)) {
                        out.insert((s as u16, d as u16), (sl & 0xF) as u8);
                    }
                }
                _ => {}
            }
            continue;
        }
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.len() == 3 && !l.starts_with('#') {
            match (num(w[0]), num(w[1]), num(w[2])) {
                (Some(s), Some(d), Some(sl)) if sl < 16 => {
                    out.insert((s as u16, d as u16), sl as u8);
                }
                _ => bail!("line {}: expected SLID DLID SL", i + 1),
            }
        }
    }
    Ok(out)
}

/// The channel dependency graph over (channel, VL) of `lfts` on any topology (no fat tree
/// needed): every compute node's path to every other, walked hop by hop with the path's SL (from
/// `sls`, missing pairs SL 0) mapped to a VL at each switch by `sl2vl`. A channel is a
/// switch-to-switch link in one direction; a dependency joins two consecutive channels of a path
/// on the VLs they are used on. `vl_blind` puts every hop on one VL: the plain CDG check.
pub fn check(
    f: &Fabric,
    lfts: &Lfts,
    sls: &HashMap<(u16, u16), u8>,
    sl2vl: &Sl2Vl,
    vl_blind: bool,
) -> Result<VlReport> {
    let mut sw_index = vec![usize::MAX; f.nodes.len()];
    let switches: Vec<u32> = f.switches().map(|(i, _)| i).collect();
    for (k, &n) in switches.iter().enumerate() {
        sw_index[n as usize] = k;
    }
    let by_guid = lfts.by_guid();
    let mut tables = Vec::with_capacity(switches.len());
    for &n in &switches {
        let node = &f.nodes[n as usize];
        match by_guid.get(&node.guid) {
            Some(&i) => tables.push(&lfts.switches[i]),
            None => bail!("no LFT for switch {} (GUID {:#018x})", node.name, node.guid),
        }
    }
    let stride = f
        .nodes
        .iter()
        .map(|n| n.nports as usize + 1)
        .max()
        .unwrap_or(1);
    // Compute nodes: (LID, switch index, switch port) of their first connected port.
    let mut ends: Vec<(u16, usize, u8)> = Vec::new();
    for (_, h) in f.hcas() {
        let Some(p) = h.first_port() else { continue };
        let Some(r) = h.remote(p) else { continue };
        if h.lid != 0 && sw_index[r.node as usize] != usize::MAX {
            ends.push((h.lid, sw_index[r.node as usize], r.port));
        }
    }
    if ends.len().saturating_mul(ends.len()) > 50_000_000 {
        bail!(
            "{} compute nodes: too many paths for the per-path VL check",
            ends.len()
        );
    }
    let mut graph: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut per_vl: HashMap<u8, usize> = HashMap::new();
    let (mut paths, mut unreachable, mut loops, mut cross) = (0, 0, 0, 0);
    for &(slid, first, first_in) in &ends {
        for &(dlid, _, _) in &ends {
            if slid == dlid {
                continue;
            }
            paths += 1;
            let sl = *sls.get(&(slid, dlid)).unwrap_or(&0);
            let (mut x, mut inp) = (first, first_in);
            let mut prev: Option<(usize, u8)> = None;
            let mut hops = 0;
            loop {
                if hops > switches.len() {
                    loops += 1;
                    break;
                }
                let out = tables[x].port(dlid);
                let node = &f.nodes[switches[x] as usize];
                let Some(r) = (out != 0 && out != NO_PATH)
                    .then(|| node.remote(out))
                    .flatten()
                else {
                    unreachable += 1;
                    break;
                };
                let far = sw_index[r.node as usize];
                if far == usize::MAX {
                    // Into a compute node: arrived if it is the destination.
                    if f.nodes[r.node as usize].lid != dlid {
                        unreachable += 1;
                    }
                    break;
                }
                let vl = if vl_blind {
                    0
                } else {
                    sl2vl.vl(node.guid, inp, out, sl)
                };
                let c = (x * stride + out as usize) * 16 + vl as usize;
                if let Some((pc, pvl)) = prev {
                    let e = graph.entry(pc).or_default();
                    if !e.contains(&c) {
                        e.push(c);
                        *per_vl.entry(pvl).or_default() += 1;
                        cross += usize::from(pvl != vl);
                    }
                } else {
                    per_vl.entry(vl).or_default();
                }
                prev = Some((c, vl));
                x = far;
                inp = r.port;
                hops += 1;
            }
        }
    }
    // Per-VL verdicts: the part of the graph on each VL; the whole graph decides.
    let mut vls: Vec<(u8, usize, bool)> = per_vl
        .iter()
        .map(|(&vl, &deps)| {
            let sub: HashMap<usize, Vec<usize>> = graph
                .iter()
                .filter(|(&c, _)| c % 16 == vl as usize)
                .map(|(&c, e)| {
                    (
                        c,
                        e.iter()
                            .copied()
                            .filter(|&d| d % 16 == vl as usize)
                            .collect(),
                    )
                })
                .collect();
            (vl, deps, acyclic(&sub))
        })
        .collect();
    vls.sort_unstable();
    let deadlock_free = loops == 0 && acyclic(&graph);
    Ok(VlReport {
        paths,
        vls,
        cross_vl_dependencies: cross,
        unreachable,
        loops,
        deadlock_free,
    })
}

fn acyclic(g: &HashMap<usize, Vec<usize>>) -> bool {
    // Iterative DFS with colours: absent = white, 1 grey, 2 black.
    let mut colour: HashMap<usize, u8> = HashMap::new();
    for &start in g.keys() {
        if colour.contains_key(&start) {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        colour.insert(start, 1);
        while let Some(&mut (v, ref mut i)) = stack.last_mut() {
            let next = g.get(&v).and_then(|e| e.get(*i)).copied();
            *i += 1;
            match next {
                Some(w) => match colour.get(&w) {
                    None => {
                        colour.insert(w, 1);
                        stack.push((w, 0));
                    }
                    Some(1) => return false,
                    _ => {}
                },
                None => {
                    colour.insert(v, 2);
                    stack.pop();
                }
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topo::Topo;
    use crate::{check, ftree, gen::Pgft};

    #[test]
    fn a_cycle_split_over_two_sls_is_no_deadlock() {
        // 4-ary-2-tree; channels A = s1-0>s2-0, B = s2-0>s1-1, C = s1-1>s2-1, D = s2-1>s1-0.
        // Paths to h-8 turn at s1-1 (A>B>C), paths to h-12 turn at s1-0 (C>D>A): one cycle.
        let f = Pgft::kary(4, 2).unwrap().build().unwrap();
        let t = Topo::new(&f).unwrap();
        let (mut l, _) = ftree::route(&f).unwrap();
        let lid = |n: &str| f.nodes[f.find(n).unwrap() as usize].lid as usize;
        let mut set = |sw: &str, dst: &str, port: u8| {
            let g = f.nodes[f.find(sw).unwrap() as usize].guid;
            l.switches.iter_mut().find(|s| s.guid == g).unwrap().ports[lid(dst)] = port;
        };
        for (sw, dst, port) in [
            ("s1-0", "h-8", 5),
            ("s2-0", "h-8", 2),
            ("s1-1", "h-8", 6),
            ("s2-1", "h-8", 3),
            ("s1-1", "h-12", 6),
            ("s2-1", "h-12", 1),
            ("s1-0", "h-12", 5),
            ("s2-0", "h-12", 4),
            ("s1-0", "h-4", 5),
            ("s2-0", "h-4", 2),
            ("s1-1", "h-0", 6),
            ("s2-1", "h-0", 1),
        ] {
            set(sw, dst, port);
        }
        let one_vl = check::check(&f, &t, &l).unwrap();
        assert!(!one_vl.cdg_acyclic && !one_vl.deadlock_free);
        let ident: [u8; 16] = std::array::from_fn(|i| i as u8);
        let none = HashMap::new();
        assert!(
            !super::check(&f, &l, &none, &Sl2Vl::Uniform(ident), false)
                .unwrap()
                .deadlock_free
        );
        // Every path to h-12 on SL 1: two VLs, each acyclic.
        let mut text = String::new();
        for (_, h) in f.hcas() {
            text.push_str(&format!("{} {} 1\n", h.lid, lid("h-12")));
        }
        let sls = read_path_sls(&text).unwrap();
        let r = super::check(&f, &l, &sls, &Sl2Vl::Uniform(ident), false).unwrap();
        assert_eq!(r.paths, 16 * 15);
        assert_eq!(r.vls.len(), 2);
        assert!(r.deadlock_free, "{r:?}");
        // Both SLs on one VL: the cycle is back.
        let mut merged = ident;
        merged[1] = 0;
        assert!(
            !super::check(&f, &l, &sls, &Sl2Vl::Uniform(merged), false)
                .unwrap()
                .deadlock_free
        );
    }

    #[test]
    fn reads_opensm_sl2vl_dumps() {
        let text = "Switch 0x0000000000001000, base LID 1, \"t0-0\"\n\
                    #in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15\n\
                    #--------------------------------------------------------\n\
                    5   1   : 0  1  2  3  4  5  6  7  0  1  2  3  4  5  6  7 \n\
                    Channel Adapter 0x0000000000100000, port 1\n\
                    1   0   : 7  7  7  7  7  7  7  7  7  7  7  7  7  7  7  7 \n";
        let m = read_sl2vl_dump(text).unwrap();
        assert_eq!(m.vl(0x1000, 5, 1, 9), 1);
        assert_eq!(m.vl(0x1000, 5, 1, 3), 3);
        // A pair the dump does not list keeps the SL; rows under a CA header are not read.
        assert_eq!(m.vl(0x1000, 2, 3, 12), 12);
        let Sl2Vl::PerPort(t) = &m else { panic!() };
        assert_eq!(t.len(), 1);
        assert!(read_sl2vl_dump("Switch 0x10, x\n1 2 : 0 1\n")
            .unwrap_err()
            .0
            .contains("16 VLs"));
    }

    #[test]
    fn reads_saquery_path_records() {
        let text = "PathRecord dump:\n\t\tservice_id..............0x0\n\t\tdlid....................0x0009\n\
                    \t\tslid....................0x000E\n\t\tsl......................0x2\n";
        let m = read_path_sls(text).unwrap();
        assert_eq!(m.get(&(14, 9)), Some(&2));
        assert!(read_path_sls("1 2 x\n")
            .unwrap_err()
            .0
            .contains("SLID DLID SL"));
    }
}

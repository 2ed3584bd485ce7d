//! Deadlock freedom with service levels: engines such as LASH and DFSSSP break the cycles of the
//! channel dependency graph by putting paths on different SLs, and so on different virtual lanes.
//! The graph is then one per VL: a dependency joins two consecutive channels of a path only on the
//! VL the path's SL maps to. Paths are walked source by source (an SL belongs to a source and
//! destination pair), with the SLs the SA hands out (`saquery -p` output, or "SLID DLID SL" lines)
//! and a SL-to-VL map (identity unless given).

use std::collections::HashMap;

use serde::Serialize;

use crate::align::align;
use crate::bail;
use crate::error::Result;
use crate::lft::{Lfts, NO_PATH};
use crate::model::Fabric;
use crate::topo::{Dir, Topo};

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct VlReport {
    pub paths: usize,
    /// (VL, dependencies, acyclic) for every VL in use.
    pub vls: Vec<(u8, usize, bool)>,
    /// Every VL's graph is acyclic.
    pub deadlock_free: bool,
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

/// The per-VL channel dependency graphs of `lfts` with the given path SLs (missing pairs: SL 0).
pub fn check(
    f: &Fabric,
    t: &Topo,
    lfts: &Lfts,
    sls: &HashMap<(u16, u16), u8>,
    sl2vl: &[u8; 16],
) -> Result<VlReport> {
    let tables = align(f, t, lfts)?;
    let st = t.stride;
    // Sources and destinations: compute nodes with their leaf switch.
    let mut ends: Vec<(u16, u32)> = Vec::new();
    for (s, list) in t.hcas.iter().enumerate() {
        for &(_, h) in list {
            ends.push((f.nodes[h as usize].lid, s as u32));
        }
    }
    if ends.len().saturating_mul(ends.len()) > 50_000_000 {
        bail!(
            "{} compute nodes: too many paths for the per-path VL check",
            ends.len()
        );
    }
    let mut graphs: HashMap<u8, HashMap<usize, Vec<usize>>> = HashMap::new();
    let mut paths = 0;
    for &(slid, leaf) in &ends {
        for &(dlid, _) in &ends {
            if slid == dlid {
                continue;
            }
            let vl = sl2vl[*sls.get(&(slid, dlid)).unwrap_or(&0) as usize & 0xF];
            let g = graphs.entry(vl).or_default();
            paths += 1;
            let (mut x, mut prev, mut hops) = (leaf as usize, usize::MAX, 0);
            while hops <= t.num_switches() {
                let p = tables[x].port(dlid) as usize;
                if p == 0 || p == NO_PATH as usize || p >= st {
                    break;
                }
                if !matches!(t.dir[x * st + p], Dir::Up | Dir::Down) {
                    break;
                }
                let c = x * st + p;
                if prev != usize::MAX {
                    let e = g.entry(prev).or_default();
                    if !e.contains(&c) {
                        e.push(c);
                    }
                }
                prev = c;
                x = t.remote_sw[c] as usize;
                hops += 1;
            }
        }
    }
    let mut vls: Vec<(u8, usize, bool)> = graphs
        .iter()
        .map(|(&vl, g)| (vl, g.values().map(Vec::len).sum(), acyclic(g)))
        .collect();
    vls.sort_unstable();
    let deadlock_free = vls.iter().all(|v| v.2);
    Ok(VlReport {
        paths,
        vls,
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
            !super::check(&f, &t, &l, &none, &ident)
                .unwrap()
                .deadlock_free
        );
        // Every path to h-12 on SL 1: two VLs, each acyclic.
        let mut text = String::new();
        for (_, h) in f.hcas() {
            text.push_str(&format!("{} {} 1\n", h.lid, lid("h-12")));
        }
        let sls = read_path_sls(&text).unwrap();
        let r = super::check(&f, &t, &l, &sls, &ident).unwrap();
        assert_eq!(r.paths, 16 * 15);
        assert_eq!(r.vls.len(), 2);
        assert!(r.deadlock_free, "{r:?}");
        // Both SLs on one VL: the cycle is back.
        let mut merged = ident;
        merged[1] = 0;
        assert!(
            !super::check(&f, &t, &l, &sls, &merged)
                .unwrap()
                .deadlock_free
        );
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

//! Failures as a workflow: take links, switches or compute nodes out of a fabric (named, or a share
//! of the switch-to-switch links at random), re-route the degraded fabric with an engine, and say
//! what the operator needs to know: SMPs to send, time, reachability, balance and the deadlock
//! verdict, beside what the old tables do if nobody re-routes.

use std::collections::HashSet;
use std::time::Instant;

use serde::Serialize;

use crate::bail;
use crate::error::Result;
use crate::lft::{blocks_for, Lfts, BLOCK, NO_PATH};
use crate::model::{Fabric, Kind};
use crate::patterns::Rng;

/// What to take out.
#[derive(Debug, Clone, Default)]
pub struct Failures {
    /// Links named by one end: (node name, port).
    pub links: Vec<(String, u8)>,
    pub switches: Vec<String>,
    pub nodes: Vec<String>,
    /// Percent of the switch-to-switch links to fail at random (after the named ones).
    pub random_link_percent: f64,
    pub seed: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Applied {
    pub links_failed: usize,
    pub switches_failed: usize,
    pub nodes_failed: usize,
    /// The failed links as "node[port]-node[port]".
    pub failed_links: Vec<String>,
}

/// Parses "s1-0[8]", "s1-0:8" into (name, port).
pub fn parse_link(spec: &str) -> Result<(String, u8)> {
    let s = spec.trim();
    let (name, port) = if let Some(open) = s.rfind('[') {
        let Some(close) = s[open..].find(']') else {
            bail!("bad link {spec:?}: expected NODE[PORT] or NODE:PORT")
        };
        (&s[..open], &s[open + 1..open + close])
    } else if let Some(colon) = s.rfind(':') {
        (&s[..colon], &s[colon + 1..])
    } else {
        bail!("bad link {spec:?}: expected NODE[PORT] or NODE:PORT")
    };
    match port.trim().parse::<u8>() {
        Ok(p) if p > 0 && !name.is_empty() => Ok((name.trim_matches('"').to_string(), p)),
        _ => bail!("bad link {spec:?}: expected NODE[PORT] or NODE:PORT"),
    }
}

fn describe(f: &Fabric, a: u32, pa: u8) -> String {
    let r = f.nodes[a as usize].remote(pa).expect("connected port");
    format!(
        "{}[{pa}]-{}[{}]",
        f.nodes[a as usize].name, f.nodes[r.node as usize].name, r.port
    )
}

fn cut(f: &mut Fabric, a: u32, pa: u8) {
    if let Some(r) = f.nodes[a as usize].remote(pa) {
        f.nodes[a as usize].links[pa as usize] = None;
        f.nodes[r.node as usize].links[r.port as usize] = None;
    }
}

/// Returns the degraded fabric (failed switches and nodes removed, LIDs and GUIDs kept).
pub fn apply(f: &Fabric, fl: &Failures) -> Result<(Fabric, Applied)> {
    let mut g = f.clone();
    let mut failed_links = Vec::new();
    for (name, port) in &fl.links {
        let Some(n) = g.find(name) else {
            bail!("no node named {name:?}")
        };
        if g.nodes[n as usize].remote(*port).is_none() {
            bail!("{name}[{port}] is not connected");
        }
        failed_links.push(describe(&g, n, *port));
        cut(&mut g, n, *port);
    }
    let mut gone: HashSet<u32> = HashSet::new();
    for (names, want) in [(&fl.switches, Kind::Switch), (&fl.nodes, Kind::Hca)] {
        for name in names {
            let Some(n) = g.find(name) else {
                bail!("no node named {name:?}")
            };
            if g.nodes[n as usize].kind != want {
                let what = if want == Kind::Switch {
                    "a switch"
                } else {
                    "a compute node"
                };
                bail!("{name} is not {what}");
            }
            gone.insert(n);
        }
    }
    if fl.random_link_percent > 0.0 {
        if fl.random_link_percent > 100.0 {
            bail!(
                "random link failures: {} % is more than all links",
                fl.random_link_percent
            );
        }
        let mut isl: Vec<(u32, u8)> = Vec::new();
        for (i, n) in g.nodes.iter().enumerate() {
            if !n.is_switch() || gone.contains(&(i as u32)) {
                continue;
            }
            for p in 1..=n.nports {
                if let Some(r) = n.remote(p) {
                    let other = &g.nodes[r.node as usize];
                    // Each link once, from its lower (node, port) end.
                    if other.is_switch()
                        && !gone.contains(&r.node)
                        && (i as u32, p) < (r.node, r.port)
                    {
                        isl.push((i as u32, p));
                    }
                }
            }
        }
        let k = ((isl.len() as f64) * fl.random_link_percent / 100.0).round() as usize;
        let mut rng = Rng::new(fl.seed);
        rng.shuffle(&mut isl);
        isl.truncate(k);
        isl.sort_unstable();
        for (n, p) in isl {
            failed_links.push(describe(&g, n, p));
            cut(&mut g, n, p);
        }
    }
    let links_failed = failed_links.len();
    let out = if gone.is_empty() {
        g
    } else {
        without(&g, &gone)?
    };
    Ok((
        out,
        Applied {
            links_failed,
            switches_failed: fl.switches.len(),
            nodes_failed: fl.nodes.len(),
            failed_links,
        },
    ))
}

/// The fabric without the nodes in `gone` (their links cut), indices renumbered.
fn without(f: &Fabric, gone: &HashSet<u32>) -> Result<Fabric> {
    let mut map = vec![u32::MAX; f.nodes.len()];
    let mut g = Fabric::default();
    for (i, n) in f.nodes.iter().enumerate() {
        if gone.contains(&(i as u32)) {
            continue;
        }
        map[i] = g.add_node(n.kind, n.name.clone(), n.guid, n.nports);
        g.nodes[map[i] as usize].lid = n.lid;
    }
    for (i, n) in f.nodes.iter().enumerate() {
        if map[i] == u32::MAX {
            continue;
        }
        for p in 1..=n.nports {
            if let Some(r) = n.remote(p) {
                if map[r.node as usize] != u32::MAX && (i as u32, p) < (r.node, r.port) {
                    g.connect(map[i], p, map[r.node as usize], r.port)?;
                }
            }
        }
    }
    // A compute node that lost its only link keeps no LID.
    for n in &mut g.nodes {
        if !n.is_switch() && n.first_port().is_none() {
            n.lid = 0;
        }
    }
    Ok(g)
}

/// LFT blocks that differ between the old tables and the new (switches matched by GUID; a switch
/// that is gone is not sent anything, one without old tables is sent all of its blocks).
pub fn changed_blocks(old: &Lfts, new: &Lfts) -> (usize, usize, usize) {
    let idx = old.by_guid();
    let (mut changed, mut full, mut switches) = (0, 0, 0);
    for s in &new.switches {
        let nb = blocks_for(s.ports.len().saturating_sub(1));
        full += nb;
        let Some(&o) = idx.get(&s.guid) else {
            changed += nb;
            switches += 1;
            continue;
        };
        let o = &old.switches[o];
        let mut touched = false;
        for b in 0..nb {
            let hi = ((b + 1) * BLOCK).min(s.ports.len());
            if (b * BLOCK..hi).any(|l| o.ports.get(l).copied().unwrap_or(NO_PATH) != s.ports[l]) {
                changed += 1;
                touched = true;
            }
        }
        switches += usize::from(touched);
    }
    (changed, full, switches)
}

/// The old tables as they stand on the degraded fabric: the switches still there, unchanged.
pub fn surviving(old: &Lfts, g: &Fabric) -> Lfts {
    let keep: HashSet<u64> = g.switches().map(|(_, n)| n.guid).collect();
    Lfts {
        switches: old
            .switches
            .iter()
            .filter(|s| keep.contains(&s.guid))
            .cloned()
            .collect(),
    }
}

/// Times a closure in seconds.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let start = Instant::now();
    let v = f();
    (v, start.elapsed().as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::Pgft;

    #[test]
    fn links_switches_and_nodes_fail_by_name() {
        let f = Pgft::kary(4, 2).unwrap().build().unwrap();
        let fl = Failures {
            links: vec![parse_link("s1-0[8]").unwrap()],
            switches: vec!["s2-1".into()],
            nodes: vec!["h-3".into()],
            ..Failures::default()
        };
        let (g, a) = apply(&f, &fl).unwrap();
        assert_eq!(a.failed_links, vec!["s1-0[8]-s2-3[1]".to_string()]);
        assert_eq!((g.num_switches(), g.num_hcas()), (7, 15));
        let s = g.find("s1-0").unwrap() as usize;
        assert!(g.nodes[s].remote(8).is_none() && g.nodes[s].remote(6).is_none());
        // LIDs are kept.
        assert_eq!(
            g.nodes[g.find("h-15").unwrap() as usize].lid,
            f.nodes[f.find("h-15").unwrap() as usize].lid
        );
        for bad in ["s1-0", "s1-0[x]", "[3]"] {
            assert!(parse_link(bad).unwrap_err().0.contains("bad link"), "{bad}");
        }
        let e = apply(
            &f,
            &Failures {
                switches: vec!["h-1".into()],
                ..Failures::default()
            },
        )
        .unwrap_err();
        assert!(e.0.contains("not a switch"), "{e}");
    }

    #[test]
    fn random_failures_take_the_share_of_switch_links() {
        let f = Pgft::kary(4, 2).unwrap().build().unwrap(); // 16 switch-to-switch links
        let fl = Failures {
            random_link_percent: 25.0,
            seed: 7,
            ..Failures::default()
        };
        let (_, a) = apply(&f, &fl).unwrap();
        assert_eq!(a.links_failed, 4);
        let (_, b) = apply(&f, &fl).unwrap();
        assert_eq!(a, b, "same seed, same links");
        assert!(a.failed_links.iter().all(|l| !l.contains("h-")));
    }
}

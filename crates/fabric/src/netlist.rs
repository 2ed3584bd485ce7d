//! ibnetdiscover / ibsim netlists. We write what ibsim parses (switchguid=/caguid= lines, a node
//! header, one line per connected port) and read both ibsim's examples and ibnetdiscover output.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::bail;
use crate::error::Result;
use crate::model::{Fabric, Kind};

/// Netlist id of a node: ibnetdiscover's "S-<guid>"/"H-<guid>" style keeps GUIDs visible.
pub fn node_id(f: &Fabric, idx: u32) -> &str {
    &f.nodes[idx as usize].name
}

pub fn write(f: &Fabric) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# lanes fabric netlist: {} switches, {} HCAs",
        f.num_switches(),
        f.num_hcas()
    );
    // Switches first: ibsim attaches the SM to the first node, and OpenSM keeps the netlist's LIDs
    // (ibsim's initial port LIDs) only when its own port is a switch's port 0.
    let order = f.switches().chain(f.hcas()).map(|(i, _)| i as usize);
    for i in order {
        let n = &f.nodes[i];
        out.push('\n');
        match n.kind {
            Kind::Switch => {
                let _ = writeln!(out, "switchguid={:#018x}", n.guid);
                let _ = writeln!(
                    out,
                    "Switch\t{} \"{}\"\t# \"{}\" base port 0 lid {} lmc 0",
                    n.nports, n.name, n.name, n.lid
                );
            }
            Kind::Hca => {
                let _ = writeln!(out, "caguid={:#018x}", n.guid);
                let _ = writeln!(out, "Ca\t{} \"{}\"\t# \"{}\"", n.nports, n.name, n.name);
            }
        }
        for p in 1..=n.nports {
            if let Some(r) = n.links[p as usize] {
                let rn = &f.nodes[r.node as usize];
                let pg = if n.is_switch() {
                    String::new()
                } else {
                    format!("({:x})", n.guid + u64::from(p))
                };
                // ibnetdiscover style: a CA port line names its own LID first (ibsim sets the
                // port's LID from it), a switch port line the remote's.
                let comment = if n.is_switch() {
                    format!("lid {} 4xQDR", rn.lid)
                } else {
                    format!("lid {} lmc 0 \"{}\" lid {} 4xQDR", n.lid, rn.name, rn.lid)
                };
                let _ = writeln!(
                    out,
                    "[{p}]{pg}\t\"{}\"[{}]\t# {comment}",
                    node_id(f, r.node),
                    r.port,
                );
            }
        }
    }
    out
}

struct Pending {
    node: u32,
    port: u8,
    remote: String,
    rport: u8,
    line: usize,
}

fn parse_guid(s: &str, line: usize) -> Result<u64> {
    let t = s.trim();
    let t = t.split('(').next().unwrap_or(t);
    let hex = t.trim_start_matches("0x").trim_start_matches("0X");
    match u64::from_str_radix(hex, 16) {
        Ok(v) => Ok(v),
        Err(_) => bail!("line {line}: bad GUID {s:?}"),
    }
}

/// Splits `"id"` at the start of `s`, returning (id, rest).
fn quoted(s: &str, line: usize) -> Result<(&str, &str)> {
    let s = s.trim_start();
    let Some(rest) = s.strip_prefix('"') else {
        bail!("line {line}: expected a quoted node id")
    };
    let Some(end) = rest.find('"') else {
        bail!("line {line}: unterminated quote")
    };
    Ok((&rest[..end], &rest[end + 1..]))
}

/// Parses `[N]` at the start of `s`, returning (N, rest).
fn bracket(s: &str, line: usize) -> Result<(u8, &str)> {
    let s = s.trim_start();
    let Some(rest) = s.strip_prefix('[') else {
        bail!("line {line}: expected [port]")
    };
    let Some(end) = rest.find(']') else {
        bail!("line {line}: expected [port]")
    };
    match rest[..end].trim().parse::<u8>() {
        Ok(p) if p > 0 => Ok((p, &rest[end + 1..])),
        _ => bail!("line {line}: bad port number {:?}", &rest[..end]),
    }
}

pub fn read(text: &str) -> Result<Fabric> {
    let mut f = Fabric::default();
    let mut by_id: HashMap<String, u32> = HashMap::new();
    let mut pending: Vec<Pending> = Vec::new();
    let mut guid: Option<u64> = None;
    let mut current: Option<u32> = None;
    let mut auto_guid: u64 = 0x0002_c9ff_0000_0000;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() {
            current = None;
            continue;
        }
        if l.starts_with('#') {
            continue;
        }
        if let Some(v) = l
            .strip_prefix("switchguid=")
            .or_else(|| l.strip_prefix("caguid="))
        {
            guid = Some(parse_guid(v, line)?);
            continue;
        }
        if l.contains('=') && !l.starts_with('[') && !l.starts_with('"') {
            continue; // vendid=, devid=, sysimgguid=, ...
        }
        let word = l.split_whitespace().next().unwrap_or("");
        let kind = match word {
            "Switch" => Some(Kind::Switch),
            "Hca" | "Ca" => Some(Kind::Hca),
            "Rt" => bail!("line {line}: routers are not supported"),
            _ => None,
        };
        if let Some(kind) = kind {
            let rest = l[word.len()..].trim_start();
            let nstr: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            let nports: u8 = match nstr.parse() {
                Ok(n) if n > 0 => n,
                _ => bail!("line {line}: bad port count"),
            };
            let (id, _) = quoted(&rest[nstr.len()..], line)?;
            if by_id.contains_key(id) {
                bail!("line {line}: node {id:?} defined twice");
            }
            let g = guid.take().unwrap_or_else(|| {
                auto_guid += 0x100;
                auto_guid
            });
            let idx = f.add_node(kind, id, g, nports);
            by_id.insert(id.to_string(), idx);
            current = Some(idx);
            continue;
        }
        if l.starts_with('[') {
            let Some(node) = current else {
                bail!("line {line}: port line outside a node")
            };
            let (port, rest) = bracket(l, line)?;
            let rest = rest.trim_start();
            let rest = if rest.starts_with('(') {
                rest.find(')').map_or(rest, |e| &rest[e + 1..])
            } else {
                rest
            };
            let (remote, rest) = quoted(rest, line)?;
            let (rport, _) = bracket(rest, line)?;
            pending.push(Pending {
                node,
                port,
                remote: remote.to_string(),
                rport,
                line,
            });
            continue;
        }
        bail!("line {line}: cannot parse {:?}", truncate(l));
    }
    for p in &pending {
        let Some(&r) = by_id.get(&p.remote) else {
            bail!("line {}: unknown node {:?}", p.line, p.remote)
        };
        let existing = f.nodes[p.node as usize].remote(p.port);
        match existing {
            // Each link is listed from both ends: the second listing must agree.
            Some(e) if e.node == r && e.port == p.rport => continue,
            Some(_) => bail!(
                "line {}: port {} of {} listed twice",
                p.line,
                p.port,
                f.nodes[p.node as usize].name
            ),
            None => f
                .connect(p.node, p.port, r, p.rport)
                .map_err(|e| crate::error::err(format!("line {}: {e}", p.line)))?,
        }
    }
    f.assign_lids();
    Ok(f)
}

fn truncate(s: &str) -> String {
    s.chars().take(60).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::Pgft;

    #[test]
    fn roundtrip_keeps_links_guids_and_lids() {
        let f = Pgft::new(vec![3, 2, 2], vec![1, 2, 2], vec![1, 2, 1])
            .unwrap()
            .build()
            .unwrap();
        let g = read(&write(&f)).unwrap();
        assert_eq!(f.nodes.len(), g.nodes.len());
        for (a, b) in f.nodes.iter().zip(&g.nodes) {
            assert_eq!(
                (a.kind, &a.name, a.guid, a.nports, a.lid),
                (b.kind, &b.name, b.guid, b.nports, b.lid)
            );
            assert_eq!(a.links, b.links);
        }
    }

    #[test]
    fn reads_ibsim_example_style() {
        let text = "Switch\t8 \"Switch1\"\n[1]\t\"Hca1\"[1]\n[3]\t\"Switch2\"[3]\n\n\
                    Switch 8 \"Switch2\"\n[3]\t\"Switch1\"[3]\n\nHca\t2 \"Hca1\"\n[1]\t\"Switch1\"[1]\n";
        let f = read(text).unwrap();
        assert_eq!((f.num_switches(), f.num_hcas()), (2, 1));
        let s1 = f.find("Switch1").unwrap();
        assert_eq!(f.nodes[s1 as usize].remote(3).unwrap().port, 3);
    }

    #[test]
    fn bad_input_gives_one_line_errors() {
        for (text, want) in [
            ("Switch x \"a\"\n", "bad port count"),
            ("Switch 4 \"a\"\n[1] \"b\"[1]\n", "unknown node"),
            ("[1] \"b\"[1]\n", "outside a node"),
            ("Switch 4 \"a\"\n[9] \"a\"[1]\n", "out of range"),
            ("hello\n", "cannot parse"),
        ] {
            let e = read(text).unwrap_err().0;
            assert!(e.contains(want), "{e}");
            assert!(!e.contains('\n'));
        }
    }
}

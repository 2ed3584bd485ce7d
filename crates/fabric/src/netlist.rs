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
    // LIDs the file names (ibnetdiscover: a switch's in its header, a CA's on its port lines).
    let mut file_lid: Vec<Option<u16>> = Vec::new();
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
            file_lid.push(if kind == Kind::Switch {
                comment_lid(l, "base port 0 lid ")
            } else {
                None
            });
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
            let (rport, rest) = bracket(rest, line)?;
            if f.nodes[node as usize].kind == Kind::Hca && file_lid[node as usize].is_none() {
                // "# lid 12 lmc 0 ..." on a CA's port line is the CA port's own LID.
                if let Some(c) = rest.split_once('#').map(|(_, c)| c.trim_start()) {
                    if c.starts_with("lid ") {
                        file_lid[node as usize] = comment_lid(c, "lid ");
                    }
                }
            }
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
    let wanted = f
        .nodes
        .iter()
        .filter(|n| n.is_switch() || n.first_port().is_some())
        .count();
    crate::model::check_lid_count(wanted as u64)?;
    f.assign_lids();
    // Keep the file's LIDs when it names one for every node that needs one (an ibnetdiscover
    // file of a running subnet); otherwise lanes assigns them all.
    let named = f
        .nodes
        .iter()
        .zip(&file_lid)
        .all(|(n, l)| n.lid == 0 || l.is_some_and(|l| l != 0));
    if named {
        for (n, l) in f.nodes.iter_mut().zip(&file_lid) {
            if n.lid != 0 {
                n.lid = l.unwrap_or(0);
            }
        }
        f.check_lids()?;
    }
    Ok(f)
}

/// The number after `key` in a line's comment, if it is a LID.
fn comment_lid(line: &str, key: &str) -> Option<u16> {
    let at = line.find(key)? + key.len();
    let digits: String = line[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
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
    fn keeps_the_lids_an_ibnetdiscover_file_names() {
        let text = "switchguid=0x10\nSwitch\t4 \"S-10\"\t# \"sw\" base port 0 lid 7 lmc 0\n\
                    [1]\t\"H-20\"[1](21)\t# \"h\" lid 42 4xQDR\n\n\
                    caguid=0x20\nCa\t1 \"H-20\"\t# \"h\"\n\
                    [1](21)\t\"S-10\"[1]\t# lid 42 lmc 0 \"sw\" lid 7 4xQDR\n";
        let f = read(text).unwrap();
        let lid = |n: &str| f.nodes[f.find(n).unwrap() as usize].lid;
        assert_eq!((lid("S-10"), lid("H-20")), (7, 42));
        // Without LIDs in the file, lanes assigns them (switches first).
        let f = read("Switch 4 \"a\"\n[1] \"b\"[1]\n\nCa 1 \"b\"\n[1] \"a\"[1]\n").unwrap();
        assert_eq!((f.nodes[0].lid, f.nodes[1].lid), (1, 2));
        // The same LID twice is an error.
        let dup = text.replace("lid 42", "lid 7");
        assert!(read(&dup).unwrap_err().0.contains("used twice"));
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

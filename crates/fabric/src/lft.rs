//! Linear forwarding tables and OpenSM's opensm-lfts.dump format (what `-U` loads back).

use std::collections::{BTreeSet, HashMap};
use std::io::Write as _;

use serde::Serialize;

use crate::bail;
use crate::error::Result;
use crate::model::{Fabric, Kind};

/// Port value meaning "no route" (OpenSM's OSM_NO_PATH).
pub const NO_PATH: u8 = 255;
/// LIDs per LFT block; one SMP writes one block.
pub const BLOCK: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchLft {
    pub guid: u64,
    pub lid: u16,
    pub name: String,
    /// Out port per destination LID (index = LID), NO_PATH where there is no route.
    pub ports: Vec<u8>,
}

impl SwitchLft {
    pub fn port(&self, lid: u16) -> u8 {
        self.ports.get(lid as usize).copied().unwrap_or(NO_PATH)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lfts {
    pub switches: Vec<SwitchLft>,
}

impl Lfts {
    /// Entries in the longest table (the largest LID routed + 1).
    pub fn width(&self) -> usize {
        self.switches
            .iter()
            .map(|s| s.ports.len())
            .max()
            .unwrap_or(0)
    }

    /// Empty tables for every switch of the fabric, sized to its largest LID.
    pub fn empty(f: &Fabric) -> Lfts {
        let n = f.max_lid() as usize + 1;
        let switches = f
            .switches()
            .map(|(_, s)| SwitchLft {
                guid: s.guid,
                lid: s.lid,
                name: s.name.clone(),
                ports: vec![NO_PATH; n],
            })
            .collect();
        Lfts { switches }
    }

    pub fn by_guid(&self) -> HashMap<u64, usize> {
        self.switches
            .iter()
            .enumerate()
            .map(|(i, s)| (s.guid, i))
            .collect()
    }
}

/// LFT blocks needed for LIDs 0..=max_lid (Paper II Table I: ceil(LIDs / 64)).
pub fn blocks_for(max_lid: usize) -> usize {
    (max_lid + 1).div_ceil(BLOCK)
}

/// Writes the tables in opensm-lfts.dump format. Destinations are described from the fabric.
pub fn write_dump(f: &Fabric, lfts: &Lfts) -> String {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = write_dump_to(&mut out, f, lfts);
    String::from_utf8(out).unwrap_or_default()
}

/// Streams the dump to `w` (a 16,384-node fabric's dump is over a gigabyte): each destination's
/// line text is formatted once and copied for every switch.
pub fn write_dump_to(w: &mut impl std::io::Write, f: &Fabric, lfts: &Lfts) -> std::io::Result<()> {
    let width = lfts.width();
    let mut prefix: Vec<String> = Vec::with_capacity(width);
    let mut suffix: Vec<String> = vec!["\n".to_string(); width];
    for lid in 0..width {
        prefix.push(format!("0x{lid:04x} "));
    }
    for n in &f.nodes {
        let lid = n.lid as usize;
        if lid == 0 || lid >= width {
            continue;
        }
        let kind = if n.kind == Kind::Switch {
            "Switch"
        } else {
            "Channel Adapter"
        };
        suffix[lid] = format!(
            " # {kind} portguid 0x{:016x}: '{}'\n",
            n.port_guid(),
            n.name
        );
    }
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 20);
    for s in &lfts.switches {
        let top = s.ports.len().saturating_sub(1);
        let _ = writeln!(
            buf,
            "Unicast lids [0x0-0x{top:x}] of switch Lid {} guid 0x{:016x} ('{}'):",
            s.lid, s.guid, s.name
        );
        let mut count = 0;
        for (lid, &port) in s.ports.iter().enumerate() {
            if port == NO_PATH || lid == 0 {
                continue;
            }
            count += 1;
            buf.extend_from_slice(prefix[lid].as_bytes());
            buf.extend_from_slice(&[b'0' + port / 100, b'0' + port / 10 % 10, b'0' + port % 10]);
            buf.extend_from_slice(suffix[lid].as_bytes());
            if buf.len() > (1 << 20) - 256 {
                w.write_all(&buf)?;
                buf.clear();
            }
        }
        let _ = writeln!(buf, "{count} lids dumped");
    }
    w.write_all(&buf)?;
    w.flush()
}

/// What a dump holds: the tables and, from the comments, port GUID -> LID.
pub struct Dump {
    pub lfts: Lfts,
    pub lids: HashMap<u64, u16>,
}

fn parse_hex(s: &str) -> Option<u64> {
    let t = s.trim().trim_end_matches(':');
    let t = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X"))?;
    u64::from_str_radix(t, 16).ok()
}

pub fn read_dump(text: &str) -> Result<Dump> {
    let mut lfts = Lfts::default();
    let mut lids = HashMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.ends_with("lids dumped") {
            continue;
        }
        if l.starts_with("Unicast lids") {
            let words: Vec<&str> = l.split_whitespace().collect();
            let after = |key: &str| {
                words
                    .iter()
                    .position(|w| *w == key)
                    .and_then(|p| words.get(p + 1))
            };
            let Some(guid) = after("guid").and_then(|g| parse_hex(g)) else {
                bail!("line {line}: no switch guid")
            };
            let lid = after("Lid")
                .and_then(|x| x.parse::<u16>().ok())
                .unwrap_or(0);
            let name = l.find("('").and_then(|a| {
                l[a + 2..]
                    .rfind("')")
                    .map(|b| l[a + 2..a + 2 + b].to_string())
            });
            lfts.switches.push(SwitchLft {
                guid,
                lid,
                name: name.unwrap_or_default(),
                ports: Vec::new(),
            });
            if lid != 0 {
                lids.insert(guid, lid);
            }
            continue;
        }
        if l.starts_with("0x") {
            let Some(cur) = lfts.switches.last_mut() else {
                bail!("line {line}: entry before any switch header")
            };
            let mut it = l.split_whitespace();
            let lid = it
                .next()
                .and_then(parse_hex)
                .filter(|&v| v > 0 && v <= 0xBFFF);
            let Some(lid) = lid else {
                bail!("line {line}: bad LID")
            };
            let Some(port) = it.next().and_then(|p| p.parse::<u8>().ok()) else {
                continue; // e.g. "UNREACHABLE"
            };
            let lid = lid as usize;
            if cur.ports.len() <= lid {
                cur.ports.resize(lid + 1, NO_PATH);
            }
            cur.ports[lid] = port;
            if let Some(pos) = l.find("portguid ") {
                if let Some(g) = l[pos + 9..].split_whitespace().next().and_then(parse_hex) {
                    lids.insert(g, lid as u16);
                }
            }
            continue;
        }
        bail!(
            "line {line}: not an opensm-lfts.dump line: {:?}",
            l.chars().take(60).collect::<String>()
        );
    }
    let width = lfts.width();
    for s in &mut lfts.switches {
        s.ports.resize(width, NO_PATH);
    }
    Ok(Dump { lfts, lids })
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Diff {
    /// LFT entries that differ.
    pub entries: usize,
    /// 64-LID blocks that differ = SMPs a differential update sends.
    pub blocks: usize,
    /// Switches with at least one changed block.
    pub switches: usize,
    pub total_switches: usize,
    /// Blocks a full update sends (all switches, all blocks).
    pub full_blocks: usize,
    /// Switches in the old tables only (failed or removed: nothing is sent to them).
    pub switches_removed: usize,
    /// Switches in the new tables only (joined: their whole table is sent).
    pub switches_added: usize,
}

/// Compares two sets of tables switch by switch (matched by GUID).
pub fn diff(old: &Lfts, new: &Lfts) -> Result<Diff> {
    let old_idx = old.by_guid();
    let mut d = Diff {
        entries: 0,
        blocks: 0,
        switches: 0,
        total_switches: new.switches.len(),
        full_blocks: 0,
        switches_removed: 0,
        switches_added: 0,
    };
    let seen: BTreeSet<u64> = new.switches.iter().map(|s| s.guid).collect();
    d.switches_removed = old
        .switches
        .iter()
        .filter(|s| !seen.contains(&s.guid))
        .count();
    for s in &new.switches {
        let Some(&o) = old_idx.get(&s.guid) else {
            // A switch that joined gets its whole table: every block that routes a LID.
            let blocks: BTreeSet<usize> = (0..s.ports.len())
                .filter(|&l| s.ports[l] != NO_PATH)
                .map(|l| l / BLOCK)
                .collect();
            d.full_blocks += blocks_for(s.ports.len().saturating_sub(1));
            d.entries += s.ports.iter().filter(|&&p| p != NO_PATH).count();
            d.blocks += blocks.len();
            d.switches += usize::from(!blocks.is_empty());
            d.switches_added += 1;
            continue;
        };
        let o = &old.switches[o];
        let n = s.ports.len().max(o.ports.len());
        d.full_blocks += blocks_for(n.saturating_sub(1));
        let mut changed_blocks = BTreeSet::new();
        for lid in 0..n {
            if s.ports.get(lid).copied().unwrap_or(NO_PATH)
                != o.ports.get(lid).copied().unwrap_or(NO_PATH)
            {
                d.entries += 1;
                changed_blocks.insert(lid / BLOCK);
            }
        }
        d.blocks += changed_blocks.len();
        d.switches += usize::from(!changed_blocks.is_empty());
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::Pgft;

    #[test]
    fn a_switch_that_fails_or_joins_is_counted_not_refused() {
        let f = Pgft::kary(4, 2).unwrap().build().unwrap();
        let (old, _) = crate::ftree::route(&f).unwrap();
        let mut new = old.clone();
        let gone = f.nodes[f.find("s2-1").unwrap() as usize].guid;
        new.switches.retain(|s| s.guid != gone);
        let d = diff(&old, &new).unwrap();
        assert_eq!((d.switches_removed, d.switches_added, d.entries), (1, 0, 0));
        assert_eq!((d.switches, d.total_switches), (0, 7));
        // Back again: its whole table goes out (one block: 24 LIDs, of which the three other roots
        // have no up/down route from a root).
        let d = diff(&new, &old).unwrap();
        assert_eq!((d.switches_removed, d.switches_added), (0, 1));
        assert_eq!((d.switches, d.blocks, d.entries), (1, 1, 21));
    }

    #[test]
    fn table1_blocks_and_full_reconfiguration_smps() {
        // Paper II Table I: (name, LIDs, blocks per switch, SMPs of a full reconfiguration).
        for (name, lids, blocks, smps) in [
            ("18-2-1-half", 360, 6, 216),
            ("18-2-1-full", 702, 11, 594),
            ("18-3-1-half", 6804, 107, 104_004),
            ("18-3-1-full", 13284, 208, 336_960),
        ] {
            let t = Pgft::named(name).unwrap();
            let l = (t.num_nodes() + t.num_switches()) as usize;
            assert_eq!(l, lids, "{name}");
            assert_eq!(blocks_for(l), blocks, "{name}");
            assert_eq!(t.num_switches() as usize * blocks_for(l), smps, "{name}");
        }
        // The same from a built fabric (our LIDs are dense from 1).
        let f = Pgft::named("18-2-1-full").unwrap().build().unwrap();
        assert_eq!(f.num_lids(), 702);
        assert_eq!(blocks_for(f.max_lid() as usize), 11);
    }

    #[test]
    fn dump_roundtrip_and_diff() {
        let f = Pgft::kary(2, 2).unwrap().build().unwrap();
        let mut a = Lfts::empty(&f);
        for (i, s) in a.switches.iter_mut().enumerate() {
            for lid in 1..s.ports.len() {
                s.ports[lid] = ((lid + i) % 4 + 1) as u8;
            }
        }
        let text = write_dump(&f, &a);
        let d = read_dump(&text).unwrap();
        assert_eq!(d.lfts, a);
        for (_, n) in f.nodes.iter().enumerate().filter(|(_, n)| n.lid != 0) {
            assert_eq!(d.lids[&n.port_guid()], n.lid);
        }
        let mut b = a.clone();
        b.switches[1].ports[3] = 9;
        b.switches[1].ports[4] = 9;
        let df = diff(&a, &b).unwrap();
        assert_eq!(
            (df.entries, df.blocks, df.switches, df.total_switches),
            (2, 1, 1, 4)
        );
    }

    #[test]
    fn reads_opensm_output() {
        let text = "Unicast lids [0-6] of switch Lid 1 guid 0x0000000000200000 ('Switch1'):\n\
                    0x0001 000 # Switch portguid 0x0000000000200000: 'Switch1'\n\
                    0x0002 001 # Channel Adapter portguid 0x0000000000100001: 'Hca1'\n\
                    0x0003 UNREACHABLE\n2 lids dumped\n";
        let d = read_dump(text).unwrap();
        let s = &d.lfts.switches[0];
        assert_eq!((s.guid, s.lid, s.name.as_str()), (0x200000, 1, "Switch1"));
        assert_eq!((s.port(1), s.port(2), s.port(3)), (0, 1, NO_PATH));
        assert_eq!(d.lids[&0x100001], 2);
        assert!(read_dump("0x0001 000\n").is_err());
        assert!(read_dump("garbage\n").is_err());
    }
}

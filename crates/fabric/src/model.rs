//! The fabric: switches and HCAs with numbered ports, point-to-point links (parallel links allowed),
//! GUIDs and LIDs. HCAs get one LID (their first connected port); switches one LID (port 0).

use crate::bail;
use crate::error::Result;

/// Highest unicast LID (0xBFFF); 0xC000 and above are multicast.
pub const MAX_UNICAST_LID: u16 = 0xBFFF;
/// LFT blocks a switch can hold: 64 LIDs each, 768 x 64 = 49,152 = LIDs 0..=0xBFFF.
pub const MAX_LFT_BLOCKS: usize = 768;

/// Refuses a subnet that needs more unicast LIDs than InfiniBand has (one line, for users).
pub fn check_lid_count(lids: u64) -> Result<()> {
    if lids > u64::from(MAX_UNICAST_LID) {
        let blocks = (lids + 1).div_ceil(64);
        bail!(
            "{lids} LIDs needed but one subnet has {MAX_UNICAST_LID} unicast LIDs \
             ({blocks} LFT blocks per switch, the limit is {MAX_LFT_BLOCKS}): split the fabric"
        );
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Switch,
    Hca,
}

#[derive(Debug, Clone)]
pub struct Node {
    pub kind: Kind,
    pub name: String,
    pub guid: u64,
    /// Number of physical ports (1-based numbering; port 0 is a switch's management port).
    pub nports: u8,
    pub lid: u16,
    /// Remote end of each port, index 0 unused.
    pub links: Vec<Option<PortRef>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PortRef {
    pub node: u32,
    pub port: u8,
}

impl Node {
    pub fn is_switch(&self) -> bool {
        self.kind == Kind::Switch
    }

    /// Port GUID as ibsim reports it: a switch's is its node GUID, an HCA port's is node GUID + port.
    pub fn port_guid(&self) -> u64 {
        match self.kind {
            Kind::Switch => self.guid,
            Kind::Hca => self.guid + u64::from(self.first_port().unwrap_or(1)),
        }
    }

    /// First connected port, if any.
    pub fn first_port(&self) -> Option<u8> {
        (1..=self.nports).find(|&p| self.links[p as usize].is_some())
    }

    pub fn remote(&self, port: u8) -> Option<PortRef> {
        self.links.get(port as usize).copied().flatten()
    }
}

#[derive(Debug, Clone, Default)]
pub struct Fabric {
    pub nodes: Vec<Node>,
}

impl Fabric {
    pub fn add_node(&mut self, kind: Kind, name: impl Into<String>, guid: u64, nports: u8) -> u32 {
        self.nodes.push(Node {
            kind,
            name: name.into(),
            guid,
            nports,
            lid: 0,
            links: vec![None; nports as usize + 1],
        });
        (self.nodes.len() - 1) as u32
    }

    /// Connects two free ports.
    pub fn connect(&mut self, a: u32, pa: u8, b: u32, pb: u8) -> Result<()> {
        for &(n, p) in &[(a, pa), (b, pb)] {
            let node = match self.nodes.get(n as usize) {
                Some(x) => x,
                None => bail!("link to unknown node {n}"),
            };
            if p == 0 || p > node.nports {
                bail!("{}: port {p} out of range 1..{}", node.name, node.nports);
            }
            if node.links[p as usize].is_some() {
                bail!("{}: port {p} connected twice", node.name);
            }
        }
        if a == b && pa == pb {
            bail!(
                "{}: port {pa} linked to itself",
                self.nodes[a as usize].name
            );
        }
        self.nodes[a as usize].links[pa as usize] = Some(PortRef { node: b, port: pb });
        self.nodes[b as usize].links[pb as usize] = Some(PortRef { node: a, port: pa });
        Ok(())
    }

    pub fn switches(&self) -> impl Iterator<Item = (u32, &Node)> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.is_switch())
            .map(|(i, n)| (i as u32, n))
    }

    pub fn hcas(&self) -> impl Iterator<Item = (u32, &Node)> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| !n.is_switch())
            .map(|(i, n)| (i as u32, n))
    }

    pub fn num_switches(&self) -> usize {
        self.switches().count()
    }

    pub fn num_hcas(&self) -> usize {
        self.hcas().count()
    }

    /// Our LID assignment: switches first, then HCAs, each in node order, starting at 1.
    /// Unconnected HCAs get no LID. OpenSM assigns in discovery order; use
    /// `set_lids_from_guids` with its dump to compare LFTs entry by entry.
    pub fn assign_lids(&mut self) {
        let mut next: u16 = 1;
        let order: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| self.nodes[i].is_switch())
            .chain((0..self.nodes.len()).filter(|&i| !self.nodes[i].is_switch()))
            .collect();
        for i in order {
            let n = &mut self.nodes[i];
            if n.is_switch() || n.first_port().is_some() {
                n.lid = next;
                next = next.saturating_add(1);
            } else {
                n.lid = 0;
            }
        }
    }

    /// Takes LIDs from a port-GUID -> LID map (e.g. read from OpenSM's opensm-lfts.dump).
    pub fn set_lids_from_guids(&mut self, map: &std::collections::HashMap<u64, u16>) -> Result<()> {
        for n in &mut self.nodes {
            if !n.is_switch() && n.first_port().is_none() {
                continue;
            }
            match map.get(&n.port_guid()) {
                Some(&lid) => n.lid = lid,
                None => bail!("no LID for {} (port GUID {:#018x})", n.name, n.port_guid()),
            }
        }
        Ok(())
    }

    pub fn max_lid(&self) -> u16 {
        self.nodes.iter().map(|n| n.lid).max().unwrap_or(0)
    }

    /// Number of distinct LIDs in use (switches + connected HCAs; a shared LID counts once).
    pub fn num_lids(&self) -> usize {
        let mut seen = vec![false; self.max_lid() as usize + 1];
        self.nodes
            .iter()
            .filter(|n| n.lid != 0 && !std::mem::replace(&mut seen[n.lid as usize], true))
            .count()
    }

    pub fn find(&self, name: &str) -> Option<u32> {
        self.nodes
            .iter()
            .position(|n| n.name == name)
            .map(|i| i as u32)
    }

    /// Checks LIDs are unique and within the unicast range.
    pub fn check_lids(&self) -> Result<()> {
        let mut seen = vec![false; self.max_lid() as usize + 1];
        for n in &self.nodes {
            if n.lid == 0 {
                if n.is_switch() {
                    bail!("switch {} has no LID", n.name);
                }
                continue;
            }
            if n.lid > 0xBFFF {
                bail!("{}: LID {:#x} outside the unicast range", n.name, n.lid);
            }
            // A vSwitch hypervisor (uplink to a switch on port 1, the PF on port 2) may share its
            // LID with its PF; nothing else may share one.
            let pf_pair = |sw: &Node, hca: &Node| {
                sw.remote(1)
                    .is_some_and(|r| self.nodes[r.node as usize].is_switch())
                    && sw
                        .remote(2)
                        .is_some_and(|r| std::ptr::eq(&self.nodes[r.node as usize], hca))
                    && sw.lid == hca.lid
            };
            let shares_with_own_hca = if n.is_switch() {
                n.remote(2)
                    .is_some_and(|r| pf_pair(n, &self.nodes[r.node as usize]))
            } else {
                n.first_port()
                    .and_then(|p| n.remote(p))
                    .is_some_and(|r| pf_pair(&self.nodes[r.node as usize], n))
            };
            if std::mem::replace(&mut seen[n.lid as usize], true) && !shares_with_own_hca {
                bail!("LID {} used twice", n.lid);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_rejects_reuse_and_range() {
        let mut f = Fabric::default();
        let s = f.add_node(Kind::Switch, "s", 1, 4);
        let h = f.add_node(Kind::Hca, "h", 2, 1);
        f.connect(s, 1, h, 1).unwrap();
        assert!(f.connect(s, 1, h, 1).is_err());
        assert!(f.connect(s, 5, h, 1).is_err());
        f.assign_lids();
        assert_eq!((f.nodes[0].lid, f.nodes[1].lid), (1, 2));
        assert_eq!(f.nodes[1].port_guid(), 3);
        f.check_lids().unwrap();
    }
}

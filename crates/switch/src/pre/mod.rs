//! The packet replication engine (bmv2's simple_pre): multicast groups made of nodes, each node
//! a replication id (rid) and a set of ports. A packet whose ingress set `mcast_grp` = G leaves
//! once per (port, rid) of G's nodes. Groups are named by their id (the handle of a group is
//! its id); nodes get handles 0, 1, 2, ... A node belongs to at most one group, as in bmv2.
//!
//! The replica list of each group is kept flat and sorted (port, then rid), rebuilt when the
//! group or one of its nodes changes, so the packet path reads one slice.

use std::collections::BTreeMap;

use crate::EntryOp;

mod error;
pub use error::{mc_code, PreError};

/// Largest multicast group id (bmv2's `mcast_grp` is 16 bits; 0 means "no multicast").
pub const MAX_MGID: u32 = 65535;
/// Port numbers a node may name (bmv2's simple_pre: 0 to 511, 511 excluded as the drop port).
pub const MAX_PRE_PORT: u32 = 510;
/// Nodes the engine holds at most (bmv2's default is 16384 L1 nodes).
pub const MAX_NODES: usize = 16384;

/// One L1 node: a replication id and the ports it sends to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// Replication id: `egress_rid` of the copies this node makes.
    pub rid: u16,
    /// The ports it sends to, sorted.
    pub ports: Vec<u32>,
    /// The group it is associated with, if any.
    pub group: Option<u32>,
}

/// Multicast groups and nodes.
#[derive(Debug, Default)]
pub struct Pre {
    groups: BTreeMap<u32, Group>,
    nodes: Vec<Option<Node>>,
}

#[derive(Debug, Default)]
struct Group {
    nodes: Vec<u32>,
    replicas: Vec<(u32, u16)>,
}

type R<T> = Result<T, PreError>;

impl Pre {
    /// Create group `mgid` (1 to MAX_MGID); its handle is `mgid`.
    pub fn mgrp_create(&mut self, mgid: u32) -> R<u32> {
        if mgid == 0 || mgid > MAX_MGID {
            return Err(PreError::MgidOutOfRange(mgid));
        }
        if self.groups.contains_key(&mgid) {
            return Err(PreError::GroupExists(mgid));
        }
        self.groups.insert(mgid, Group::default());
        Ok(mgid)
    }

    /// Destroy group `mgid`; its nodes stay, no longer associated.
    pub fn mgrp_destroy(&mut self, mgid: u32) -> R<()> {
        let g = self.groups.remove(&mgid).ok_or(PreError::NoGroup(mgid))?;
        for h in g.nodes {
            if let Some(Some(n)) = self.nodes.get_mut(h as usize) {
                n.group = None;
            }
        }
        Ok(())
    }

    /// Create a node with replication id `rid` sending to `ports`; its handle.
    pub fn node_create(&mut self, rid: u32, ports: &[u32]) -> R<u32> {
        let rid = u16::try_from(rid).map_err(|_| PreError::RidOutOfRange(rid))?;
        let ports = check_ports(ports)?;
        let node = Node {
            rid,
            ports,
            group: None,
        };
        if let Some(h) = self.nodes.iter().position(Option::is_none) {
            self.nodes[h] = Some(node);
            return Ok(h as u32);
        }
        if self.nodes.len() >= MAX_NODES {
            return Err(PreError::Full { wanted: 1 });
        }
        self.nodes.push(Some(node));
        Ok(self.nodes.len() as u32 - 1)
    }

    /// Replace the ports of node `handle`.
    pub fn node_update(&mut self, handle: u32, ports: &[u32]) -> R<()> {
        let ports = check_ports(ports)?;
        let n = self.node_mut(handle)?;
        n.ports = ports;
        let group = n.group;
        if let Some(g) = group {
            self.rebuild(g);
        }
        Ok(())
    }

    /// Destroy node `handle` (taking it out of its group first).
    pub fn node_destroy(&mut self, handle: u32) -> R<()> {
        if let Some(g) = self.node_mut(handle)?.group {
            self.node_dissociate(g, handle)?;
        }
        self.nodes[handle as usize] = None;
        Ok(())
    }

    /// Add node `handle` to group `mgid`.
    pub fn node_associate(&mut self, mgid: u32, handle: u32) -> R<()> {
        if !self.groups.contains_key(&mgid) {
            return Err(PreError::NoGroup(mgid));
        }
        let n = self.node_mut(handle)?;
        if let Some(g) = n.group {
            return Err(PreError::NodeInGroup {
                node: handle,
                group: g,
            });
        }
        n.group = Some(mgid);
        self.groups
            .get_mut(&mgid)
            .expect("checked")
            .nodes
            .push(handle);
        self.rebuild(mgid);
        Ok(())
    }

    /// Take node `handle` out of group `mgid`.
    pub fn node_dissociate(&mut self, mgid: u32, handle: u32) -> R<()> {
        let g = self.groups.get_mut(&mgid).ok_or(PreError::NoGroup(mgid))?;
        let Some(i) = g.nodes.iter().position(|h| *h == handle) else {
            return Err(PreError::NodeNotInGroup {
                node: handle,
                group: mgid,
            });
        };
        g.nodes.remove(i);
        self.node_mut(handle)?.group = None;
        self.rebuild(mgid);
        Ok(())
    }

    /// Make group `mgid` send to exactly `replicas` (port, rid), with one node per rid: what a
    /// P4Runtime MulticastGroupEntry says. `create`: the group must not exist yet (INSERT);
    /// otherwise it must (MODIFY), and its old nodes go.
    pub fn group_set(&mut self, mgid: u32, replicas: &[(u32, u32)], create: bool) -> R<()> {
        let mut by_rid: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for (port, rid) in replicas {
            by_rid.entry(*rid).or_default().push(*port);
        }
        for (rid, ports) in &by_rid {
            if *rid > 0xffff {
                return Err(PreError::RidOutOfRange(*rid));
            }
            check_ports(ports)?;
        }
        let free = self.nodes.iter().filter(|n| n.is_none()).count();
        let old = self.groups.get(&mgid).map_or(0, |g| g.nodes.len());
        if MAX_NODES - self.nodes.len() + free + old < by_rid.len() {
            return Err(PreError::Full {
                wanted: by_rid.len(),
            });
        }
        if create {
            self.mgrp_create(mgid)?;
        } else {
            let g = self.groups.get(&mgid).ok_or(PreError::NoGroup(mgid))?;
            for h in g.nodes.clone() {
                self.node_destroy(h)?;
            }
        }
        for (rid, ports) in by_rid {
            let h = self.node_create(rid, &ports)?;
            self.node_associate(mgid, h)?;
        }
        Ok(())
    }

    /// A P4Runtime multicast group write: the id in range and no replica given twice, then an
    /// insert of a new group, or a modify or delete of one that exists (`group_set`,
    /// `group_delete`).
    pub fn group_write(&mut self, op: EntryOp, mgid: u32, replicas: &[(u32, u32)]) -> R<()> {
        if mgid == 0 || mgid > MAX_MGID {
            return Err(PreError::MgidOutOfRange(mgid));
        }
        let mut seen = replicas.to_vec();
        seen.sort_unstable();
        if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
            let (port, rid) = w[0];
            return Err(PreError::DuplicateReplica { port, rid });
        }
        let exists = self.has_group(mgid);
        match op {
            EntryOp::Insert if exists => Err(PreError::GroupExists(mgid)),
            EntryOp::Modify | EntryOp::Delete if !exists => Err(PreError::NoGroup(mgid)),
            EntryOp::Delete => self.group_delete(mgid),
            EntryOp::Insert | EntryOp::Modify => {
                self.group_set(mgid, replicas, op == EntryOp::Insert)
            }
        }
    }

    /// Destroy group `mgid` and its nodes (a P4Runtime DELETE).
    pub fn group_delete(&mut self, mgid: u32) -> R<()> {
        let g = self.groups.get(&mgid).ok_or(PreError::NoGroup(mgid))?;
        for h in g.nodes.clone() {
            self.node_destroy(h)?;
        }
        self.mgrp_destroy(mgid)
    }

    /// The (port, rid) copies of group `mgid`, sorted; empty if the group does not exist.
    #[inline]
    pub fn replicas(&self, mgid: u32) -> &[(u32, u16)] {
        self.groups.get(&mgid).map_or(&[], |g| &g.replicas)
    }

    /// Whether group `mgid` exists.
    pub fn has_group(&self, mgid: u32) -> bool {
        self.groups.contains_key(&mgid)
    }

    /// Every group id with its node handles, in id order.
    pub fn groups(&self) -> impl Iterator<Item = (u32, &[u32])> + '_ {
        self.groups.iter().map(|(m, g)| (*m, g.nodes.as_slice()))
    }

    /// Node `handle`, if it exists.
    pub fn node(&self, handle: u32) -> Option<&Node> {
        self.nodes.get(handle as usize).and_then(Option::as_ref)
    }

    /// Every node with its handle.
    pub fn nodes(&self) -> impl Iterator<Item = (u32, &Node)> + '_ {
        self.nodes
            .iter()
            .enumerate()
            .filter_map(|(h, n)| n.as_ref().map(|n| (h as u32, n)))
    }

    /// Remove every group and node.
    pub fn clear(&mut self) {
        self.groups.clear();
        self.nodes.clear();
    }

    fn node_mut(&mut self, handle: u32) -> R<&mut Node> {
        self.nodes
            .get_mut(handle as usize)
            .and_then(Option::as_mut)
            .ok_or(PreError::NoNode(handle))
    }

    fn rebuild(&mut self, mgid: u32) {
        let Some(g) = self.groups.get(&mgid) else {
            return;
        };
        let mut reps: Vec<(u32, u16)> = g
            .nodes
            .iter()
            .filter_map(|h| self.nodes[*h as usize].as_ref())
            .flat_map(|n| n.ports.iter().map(move |p| (*p, n.rid)))
            .collect();
        reps.sort_unstable();
        reps.dedup();
        self.groups.get_mut(&mgid).expect("exists").replicas = reps;
    }
}

fn check_ports(ports: &[u32]) -> R<Vec<u32>> {
    if let Some(p) = ports.iter().find(|p| **p > MAX_PRE_PORT) {
        return Err(PreError::PortOutOfRange(*p));
    }
    let mut v = ports.to_vec();
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_sends_once_per_port_and_rid_of_its_nodes() {
        let mut pre = Pre::default();
        assert_eq!(pre.mgrp_create(7), Ok(7));
        let a = pre.node_create(1, &[3, 1, 2]).unwrap();
        let b = pre.node_create(9, &[2]).unwrap();
        pre.node_associate(7, a).unwrap();
        pre.node_associate(7, b).unwrap();
        assert_eq!(pre.replicas(7), &[(1, 1), (2, 1), (2, 9), (3, 1)]);
        pre.node_update(a, &[4]).unwrap();
        assert_eq!(pre.replicas(7), &[(2, 9), (4, 1)]);
        pre.node_dissociate(7, b).unwrap();
        assert_eq!(pre.replicas(7), &[(4, 1)]);
        assert!(pre.replicas(8).is_empty());
    }

    #[test]
    fn a_p4runtime_group_write_checks_id_duplicates_and_existence_in_that_order() {
        let mut pre = Pre::default();
        let (ins, modify, del) = (EntryOp::Insert, EntryOp::Modify, EntryOp::Delete);
        let e = pre.group_write(modify, 0, &[]).unwrap_err();
        assert_eq!(
            (e.grpc_code(), e.about_group(0)),
            (3, "multicast group 0 out of range (1-65535)".into())
        );
        let twice = [(1, 5), (2, 5), (1, 5)];
        let e = pre.group_write(ins, 4, &twice).unwrap_err();
        assert_eq!(e, PreError::DuplicateReplica { port: 1, rid: 5 });
        assert_eq!(
            e.about_group(4),
            "multicast group 4: replica (port 1, instance 5) given twice"
        );
        assert_eq!(
            pre.group_write(modify, 4, &[(1, 5)]),
            Err(PreError::NoGroup(4))
        );
        assert_eq!(pre.group_write(del, 4, &[]), Err(PreError::NoGroup(4)));
        pre.group_write(ins, 4, &[(1, 5), (2, 5)]).unwrap();
        let e = pre.group_write(ins, 4, &[]).unwrap_err();
        assert_eq!(
            (e.grpc_code(), e.about_group(4)),
            (6, "multicast group 4 exists".into())
        );
        pre.group_write(modify, 4, &[(3, 0)]).unwrap();
        assert_eq!(pre.replicas(4), &[(3, 0)]);
        pre.group_write(del, 4, &[]).unwrap();
        assert!(!pre.has_group(4));
    }

    #[test]
    fn bad_calls_are_refused_with_a_reason() {
        let mut pre = Pre::default();
        assert_eq!(pre.mgrp_create(0), Err(PreError::MgidOutOfRange(0)));
        pre.mgrp_create(1).unwrap();
        pre.mgrp_create(2).unwrap();
        assert_eq!(pre.mgrp_create(1), Err(PreError::GroupExists(1)));
        assert_eq!(
            pre.node_create(70000, &[1]),
            Err(PreError::RidOutOfRange(70000))
        );
        let e = pre.node_create(1, &[511]).unwrap_err();
        assert_eq!(e, PreError::PortOutOfRange(511));
        assert_eq!(e.to_string(), "port 511 out of range (0-510)");
        let h = pre.node_create(1, &[1]).unwrap();
        pre.node_associate(1, h).unwrap();
        let in_group = PreError::NodeInGroup { node: h, group: 1 };
        assert_eq!(pre.node_associate(2, h), Err(in_group));
        assert_eq!(pre.node_associate(3, h), Err(PreError::NoGroup(3)));
        let not_in = PreError::NodeNotInGroup { node: h, group: 2 };
        assert_eq!(pre.node_dissociate(2, h), Err(not_in));
        assert_eq!(pre.node_update(99, &[1]), Err(PreError::NoNode(99)));
        assert_eq!(
            PreError::NoNode(99).to_string(),
            "no multicast node 99",
            "the command port's one-line answer"
        );
    }

    #[test]
    fn destroying_reuses_handles_and_leaves_nothing_behind() {
        let mut pre = Pre::default();
        pre.mgrp_create(5).unwrap();
        let a = pre.node_create(1, &[1]).unwrap();
        pre.node_associate(5, a).unwrap();
        pre.node_destroy(a).unwrap();
        assert!(pre.replicas(5).is_empty());
        assert_eq!(pre.node_create(2, &[2]).unwrap(), a);
        pre.mgrp_destroy(5).unwrap();
        assert_eq!(pre.node(a).unwrap().group, None);
    }

    #[test]
    fn group_set_is_p4runtime_insert_modify_delete() {
        let mut pre = Pre::default();
        pre.group_set(3, &[(1, 0), (2, 0), (2, 5)], true).unwrap();
        assert_eq!(pre.replicas(3), &[(1, 0), (2, 0), (2, 5)]);
        assert!(pre.group_set(3, &[(1, 0)], true).is_err());
        pre.group_set(3, &[(4, 1)], false).unwrap();
        assert_eq!(pre.replicas(3), &[(4, 1)]);
        assert_eq!(pre.nodes().count(), 1);
        assert!(pre.group_set(4, &[(1, 0)], false).is_err());
        pre.group_delete(3).unwrap();
        assert!(!pre.has_group(3));
        assert_eq!(pre.nodes().count(), 0);
    }
}

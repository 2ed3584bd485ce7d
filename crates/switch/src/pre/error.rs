//! Why the packet replication engine refused a call. Typed, so each front end maps it to its own
//! protocol's code (bmv2's Thrift `McOperationErrorCode`, P4Runtime's gRPC status) without
//! reading the message; the message is the one-line reason people see.

use std::fmt;

use super::{MAX_MGID, MAX_NODES, MAX_PRE_PORT};

/// Why a call to the engine (`crate::pre::Pre`) was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PreError {
    /// A group id of 0 or over MAX_MGID.
    MgidOutOfRange(u32),
    /// Creating a group that exists.
    GroupExists(u32),
    /// No group with this id.
    NoGroup(u32),
    /// No node with this handle.
    NoNode(u32),
    /// Associating a node that already belongs to a group.
    NodeInGroup {
        /// The node's handle.
        node: u32,
        /// The group it is in.
        group: u32,
    },
    /// Dissociating a node from a group it is not in.
    NodeNotInGroup {
        /// The node's handle.
        node: u32,
        /// The group named.
        group: u32,
    },
    /// A replication id over 16 bits.
    RidOutOfRange(u32),
    /// A port over MAX_PRE_PORT.
    PortOutOfRange(u32),
    /// The engine holds MAX_NODES nodes and this call needs `wanted` more.
    Full {
        /// Nodes the call needs.
        wanted: usize,
    },
}

impl fmt::Display for PreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PreError::MgidOutOfRange(m) => {
                write!(f, "multicast group {m} out of range (1-{MAX_MGID})")
            }
            PreError::GroupExists(m) => write!(f, "multicast group {m} exists"),
            PreError::NoGroup(m) => write!(f, "no multicast group {m}"),
            PreError::NoNode(h) => write!(f, "no multicast node {h}"),
            PreError::NodeInGroup { node, group } => {
                write!(f, "node {node} already belongs to group {group}")
            }
            PreError::NodeNotInGroup { node, group } => {
                write!(f, "node {node} is not in group {group}")
            }
            PreError::RidOutOfRange(r) => write!(f, "rid {r} out of range (0-65535)"),
            PreError::PortOutOfRange(p) => write!(f, "port {p} out of range (0-{MAX_PRE_PORT})"),
            PreError::Full { wanted: 1 } => {
                write!(f, "no room for another node ({MAX_NODES} exist)")
            }
            PreError::Full { wanted } => write!(f, "no room for {wanted} more nodes"),
        }
    }
}

impl std::error::Error for PreError {}

/// The command port answers errors as one line of text.
impl From<PreError> for String {
    fn from(e: PreError) -> String {
        e.to_string()
    }
}

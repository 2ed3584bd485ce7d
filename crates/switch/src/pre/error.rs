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
    /// A replica (port, rid) given twice in one group.
    DuplicateReplica {
        /// The port.
        port: u32,
        /// The replication id.
        rid: u32,
    },
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
            PreError::DuplicateReplica { port, rid } => {
                write!(f, "replica (port {port}, instance {rid}) given twice")
            }
            PreError::Full { wanted: 1 } => {
                write!(f, "no room for another node ({MAX_NODES} exist)")
            }
            PreError::Full { wanted } => write!(f, "no room for {wanted} more nodes"),
        }
    }
}

impl std::error::Error for PreError {}

/// bmv2's `McOperationErrorCode` (simple_pre_lag.thrift): the numbers are the wire protocol.
pub mod mc_code {
    /// The engine has no room.
    pub const TABLE_FULL: i32 = 1;
    /// A group id out of range or taken.
    pub const INVALID_MGID: i32 = 2;
    /// No group with this handle.
    pub const INVALID_MGRP_HANDLE: i32 = 3;
    /// No node with this handle.
    pub const INVALID_L1_HANDLE: i32 = 4;
    /// Any other refusal.
    pub const ERROR: i32 = 5;
}

impl PreError {
    /// The code bmv2's simple_pre answers the same refusal with. A node associated twice or
    /// dissociated from a group it is not in is bmv2's plain ERROR; a group created twice, which
    /// bmv2 lets through, is refused here as an invalid group id.
    pub fn thrift_code(&self) -> i32 {
        match self {
            PreError::MgidOutOfRange(_) | PreError::GroupExists(_) => mc_code::INVALID_MGID,
            PreError::NoGroup(_) => mc_code::INVALID_MGRP_HANDLE,
            PreError::NoNode(_) => mc_code::INVALID_L1_HANDLE,
            PreError::Full { .. } => mc_code::TABLE_FULL,
            PreError::NodeInGroup { .. }
            | PreError::NodeNotInGroup { .. }
            | PreError::RidOutOfRange(_)
            | PreError::PortOutOfRange(_)
            | PreError::DuplicateReplica { .. } => mc_code::ERROR,
        }
    }

    /// The gRPC status of a P4Runtime write refused for this reason (the P4Runtime
    /// specification's codes: a group that exists, none to change, no room).
    pub fn grpc_code(&self) -> u8 {
        use lanes_p4::api_error::grpc;
        match self {
            PreError::GroupExists(_) => grpc::ALREADY_EXISTS,
            PreError::NoGroup(_) | PreError::NoNode(_) => grpc::NOT_FOUND,
            PreError::Full { .. } => grpc::RESOURCE_EXHAUSTED,
            PreError::MgidOutOfRange(_)
            | PreError::NodeInGroup { .. }
            | PreError::NodeNotInGroup { .. }
            | PreError::RidOutOfRange(_)
            | PreError::PortOutOfRange(_)
            | PreError::DuplicateReplica { .. } => grpc::INVALID_ARGUMENT,
        }
    }

    /// The error as a P4Runtime multicast group write states it: what names the group already
    /// alone, the rest after the group's name.
    pub fn about_group(&self, mgid: u32) -> String {
        match self {
            PreError::MgidOutOfRange(_) | PreError::GroupExists(_) | PreError::NoGroup(_) => {
                self.to_string()
            }
            _ => format!("multicast group {mgid}: {self}"),
        }
    }
}

/// The command port answers errors as one line of text.
impl From<PreError> for String {
    fn from(e: PreError) -> String {
        e.to_string()
    }
}

//! Why a mirror session or queue setting was refused, and what that means to each route into
//! it: the one-line text (`lanes ctl`, the Thrift server's log, P4Runtime's message), the
//! P4Runtime (gRPC) status code, and bmv2's Thrift answer. The routes never pick a code from a
//! message.

use std::fmt;

use lanes_p4::api_error::grpc;

use super::MAX_MIRROR_SESSION;
use crate::pre::MAX_MGID;

/// bmv2's `MirroringOperationErrorCode` (simple_switch.thrift): the only code its
/// `InvalidMirroringOperation` carries.
pub const THRIFT_SESSION_NOT_FOUND: i32 = 1;

/// Why a mirror session or queue setting was refused.
#[derive(Clone, Debug, PartialEq)]
pub enum SettingError {
    /// A mirror session id over MAX_MIRROR_SESSION.
    SessionOutOfRange(u32),
    /// A mirror session with neither a port nor a multicast group.
    NoDestination,
    /// No mirror session with this id.
    NoSession(u32),
    /// Adding a mirror session that exists (P4Runtime's INSERT).
    SessionExists(u32),
    /// A multicast group id of 0 or over MAX_MGID.
    GroupOutOfRange(u32),
    /// No port with this number.
    NoPort(u32),
    /// The port has fewer queues.
    NoQueue {
        /// The port.
        port: u32,
        /// The queue asked for.
        queue: usize,
    },
    /// A queue depth of 0 packets.
    ZeroDepth,
    /// A queue rate that is not a positive number of packets per second.
    BadRate(f64),
    /// The traffic manager refused the queue's new settings (its reason).
    Refused(String),
}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SettingError::SessionOutOfRange(s) => {
                write!(
                    f,
                    "mirror session {s} out of range (0-{MAX_MIRROR_SESSION})"
                )
            }
            SettingError::NoDestination => {
                write!(f, "a mirror session needs a port or a multicast group")
            }
            SettingError::NoSession(s) => write!(f, "no mirror session {s}"),
            SettingError::SessionExists(s) => write!(f, "mirror session {s} exists"),
            SettingError::GroupOutOfRange(g) => {
                write!(f, "multicast group {g} out of range (1-{MAX_MGID})")
            }
            SettingError::NoPort(p) => write!(f, "no port {p}"),
            SettingError::NoQueue { port, queue } => write!(f, "port {port} has no queue {queue}"),
            SettingError::ZeroDepth => write!(f, "a queue depth must be at least 1 packet"),
            SettingError::BadRate(r) => {
                write!(f, "a queue rate must be positive, got {r} packets/s")
            }
            SettingError::Refused(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for SettingError {}

impl From<SettingError> for String {
    fn from(e: SettingError) -> String {
        e.to_string()
    }
}

impl SettingError {
    /// The error as a P4Runtime clone session write states it: what names the session already
    /// alone, the rest after the session's name.
    pub fn about_session(&self, session: u32) -> String {
        match self {
            SettingError::NoSession(_)
            | SettingError::SessionExists(_)
            | SettingError::SessionOutOfRange(_) => self.to_string(),
            _ => format!("clone session {session}: {self}"),
        }
    }

    /// The P4Runtime (gRPC) status code of this error.
    pub fn grpc_code(&self) -> u8 {
        match self {
            SettingError::NoSession(_) => grpc::NOT_FOUND,
            SettingError::SessionExists(_) => grpc::ALREADY_EXISTS,
            _ => grpc::INVALID_ARGUMENT,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_missing_session_is_not_found_to_p4runtime() {
        assert_eq!(SettingError::NoSession(3).grpc_code(), grpc::NOT_FOUND);
        for e in [
            SettingError::SessionOutOfRange(5000),
            SettingError::NoDestination,
            SettingError::NoPort(9),
            SettingError::ZeroDepth,
        ] {
            assert_eq!(e.grpc_code(), grpc::INVALID_ARGUMENT, "{e}");
        }
        assert_eq!(
            SettingError::NoQueue { port: 2, queue: 8 }.to_string(),
            "port 2 has no queue 8"
        );
    }
}

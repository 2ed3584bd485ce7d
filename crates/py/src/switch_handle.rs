//! The switch a `lanes._native.Switch` drives: one on network interfaces, or one whose ports are
//! pcap files (bmv2's --use-files). Both offer the same calls, so every binding works on either.

use std::io;
use std::time::Duration;

use lanes_switch::{Dataplane, FileSwitch, Switch};

pub(crate) enum SwitchHandle {
    Live(Switch),
    Files(FileSwitch),
}

impl SwitchHandle {
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut Dataplane) -> R) -> R {
        match self {
            SwitchHandle::Live(s) => s.with(f),
            SwitchHandle::Files(s) => s.with(f),
        }
    }

    pub(crate) fn wait_packet_ins(&self, timeout: Duration) -> Vec<Vec<u8>> {
        match self {
            SwitchHandle::Live(s) => s.wait_packet_ins(timeout),
            SwitchHandle::Files(s) => s.wait_packet_ins(timeout),
        }
    }

    pub(crate) fn wait_digests(&self, timeout: Duration) -> Vec<lanes_p4::Digest> {
        match self {
            SwitchHandle::Live(s) => s.wait_digests(timeout),
            SwitchHandle::Files(s) => s.wait_digests(timeout),
        }
    }

    /// Start taking frames from the ports: a file switch waits for this, a live one needs it not.
    pub(crate) fn start_ports(&self) {
        if let SwitchHandle::Files(s) = self {
            s.start_reading();
        }
    }

    pub(crate) fn is_running(&self) -> bool {
        match self {
            SwitchHandle::Live(s) => s.is_running(),
            SwitchHandle::Files(s) => s.is_running(),
        }
    }

    pub(crate) fn stop(&mut self) -> io::Result<()> {
        match self {
            SwitchHandle::Live(s) => s.stop(),
            SwitchHandle::Files(s) => s.stop(),
        }
    }
}

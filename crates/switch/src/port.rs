//! A switch port's socket: AF_PACKET (sys.rs, ring.rs) or AF_XDP (xsk.rs), chosen with
//! `--rx-mode`. The event loop sees only this type; the TM, pacing and pipeline are the same
//! for both.

use std::io;
use std::os::fd::RawFd;
use std::str::FromStr;

use crate::packet_socket::PacketSocket;
use crate::sys::MsgScratch;
use crate::xsk::XskSocket;

/// Which socket the ports use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RxMode {
    /// AF_PACKET with a TPACKET_V2 receive ring (the default).
    #[default]
    Packet,
    /// AF_XDP on queue 0 with an XDP redirect program.
    AfXdp,
}

impl FromStr for RxMode {
    type Err = String;
    fn from_str(s: &str) -> Result<RxMode, String> {
        match s {
            "packet" => Ok(RxMode::Packet),
            "afxdp" => Ok(RxMode::AfXdp),
            _ => Err(format!("unknown rx mode '{s}' (packet or afxdp)")),
        }
    }
}

/// One port's socket.
pub enum Port {
    /// An AF_PACKET socket.
    Packet(PacketSocket),
    /// An AF_XDP socket.
    Xdp(Box<XskSocket>),
}

impl Port {
    /// Open `ifname` in `mode`; for AF_XDP also say how it runs (XDP mode, copy or zero-copy).
    pub fn open(ifname: &str, mode: RxMode) -> io::Result<(Port, Option<String>)> {
        Ok(match mode {
            RxMode::Packet => (Port::Packet(PacketSocket::open(ifname)?), None),
            RxMode::AfXdp => {
                let s = XskSocket::open(ifname)?;
                let how = s.describe();
                (Port::Xdp(Box::new(s)), Some(how))
            }
        })
    }

    /// The oldest received frame not yet released: (bytes, real length).
    pub fn peek(&mut self) -> Option<(&[u8], usize)> {
        match self {
            Port::Packet(s) => s.peek(),
            Port::Xdp(s) => s.peek(),
        }
    }

    /// When the oldest frame not yet released arrived (ns; one clock for all ports of a mode).
    pub fn head_arrival_ns(&mut self) -> Option<u64> {
        match self {
            Port::Packet(s) => s.head_arrival_ns(),
            Port::Xdp(s) => s.head_arrival_ns(),
        }
    }

    /// Hand the frame `peek` returned back to the kernel.
    pub fn release(&mut self) {
        match self {
            Port::Packet(s) => s.release(),
            Port::Xdp(s) => s.release(),
        }
    }

    /// Send `buf[off..off + len]` for each frame; returns how many the kernel took.
    pub fn send_many(
        &mut self,
        buf: &[u8],
        frames: &[(usize, usize)],
        scratch: &mut MsgScratch,
    ) -> io::Result<usize> {
        match self {
            Port::Packet(s) => s.send_many(buf, frames, scratch),
            Port::Xdp(s) => s.send_many(buf, frames),
        }
    }

    /// The socket's pending error, if any.
    pub fn take_error(&self) -> Option<io::Error> {
        match self {
            Port::Packet(s) => s.take_error(),
            Port::Xdp(s) => s.take_error(),
        }
    }

    /// The descriptor epoll watches.
    pub fn raw(&self) -> RawFd {
        match self {
            Port::Packet(s) => s.raw(),
            Port::Xdp(s) => s.raw(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rx_modes_parse_and_unknown_ones_are_named() {
        assert_eq!("packet".parse(), Ok(RxMode::Packet));
        assert_eq!("afxdp".parse(), Ok(RxMode::AfXdp));
        assert_eq!(RxMode::default(), RxMode::Packet);
        let e = "xdp".parse::<RxMode>().unwrap_err();
        assert!(e.contains("'xdp'"), "{e}");
    }
}

//! The AF_PACKET socket a port sends and receives on. Its `unsafe` blocks are single system
//! calls on memory it owns or borrows for the duration of the call, as in sys.rs.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::ring::RxRing;
use crate::sys::{check, if_index, setsockopt, take_socket_error, MsgScratch};

/// A raw AF_PACKET socket bound to one interface: promiscuous, non-blocking, blind to the
/// frames it sends itself, and bypassing the qdisc (the switch paces; nothing may queue after it).
/// It receives into a ring shared with the kernel ([`RxRing`]) and sends with sendmmsg.
pub struct PacketSocket {
    fd: OwnedFd,
    rx: RxRing,
}

const PACKET_IGNORE_OUTGOING: libc::c_int = 23;

/// Read and drop every frame waiting in a socket's receive queue.
fn drain(fd: RawFd) {
    let mut buf = [0u8; 64];
    loop {
        // SAFETY: recv writes at most buf.len() bytes into a buffer we own.
        let n = unsafe {
            libc::recv(
                fd,
                buf.as_mut_ptr() as *mut libc::c_void,
                buf.len(),
                libc::MSG_DONTWAIT,
            )
        };
        if n < 0 {
            return;
        }
    }
}

impl PacketSocket {
    pub fn open(ifname: &str) -> io::Result<PacketSocket> {
        let ifindex = if_index(ifname)?;
        let proto = (libc::ETH_P_ALL as u16).to_be();
        // SAFETY: socket() with constant arguments; the fd is owned right after.
        let raw = check(unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                libc::c_int::from(proto),
            )
        })?;
        // SAFETY: raw is a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: sockaddr_ll is plain data; zeroed is a valid value.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = proto;
        addr.sll_ifindex = ifindex as i32;
        // SAFETY: bind with a sockaddr_ll we own and its size.
        check(unsafe {
            libc::bind(
                raw,
                &addr as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        })?;
        // SAFETY: packet_mreq is plain data.
        let mut mreq: libc::packet_mreq = unsafe { std::mem::zeroed() };
        mreq.mr_ifindex = ifindex as i32;
        mreq.mr_type = libc::PACKET_MR_PROMISC as u16;
        setsockopt(raw, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mreq)?;
        setsockopt(raw, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, &1i32)?;
        setsockopt(raw, libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, &1i32)?;
        // what arrived between socket() and bind() came from any interface: drop it, then
        // receive into the ring (its slots ride out moments when the loop is not scheduled)
        drain(raw);
        let rx = RxRing::new(raw)?;
        Ok(PacketSocket { fd, rx })
    }

    /// Take the socket's pending error (e.g. ENETDOWN when its interface went down or away). A
    /// socket with an error stays readable to epoll until the error is taken; receiving through
    /// the ring never takes it.
    pub fn take_error(&self) -> Option<io::Error> {
        take_socket_error(self.fd.as_raw_fd())
    }

    /// The oldest received frame not yet released: (bytes, real length).
    pub fn peek(&self) -> Option<(&[u8], usize)> {
        self.rx.peek()
    }

    /// When the oldest frame not yet released arrived (ns, one clock for all sockets).
    pub fn head_arrival_ns(&self) -> Option<u64> {
        self.rx.head_arrival_ns()
    }

    /// Hand the frame `peek` returned back to the kernel.
    pub fn release(&mut self) {
        self.rx.release();
    }

    /// Send the frames `buf[off..off + len]` with one sendmmsg. Returns how many the kernel took
    /// (fewer when its buffer is full).
    pub fn send_many(
        &self,
        buf: &[u8],
        frames: &[(usize, usize)],
        scratch: &mut MsgScratch,
    ) -> io::Result<usize> {
        scratch.iov.clear();
        for &(off, len) in frames {
            let f = &buf[off..off + len];
            scratch.iov.push(libc::iovec {
                iov_base: f.as_ptr() as *mut libc::c_void,
                iov_len: f.len(),
            });
        }
        scratch.point_msgs_at_iovs();
        // SAFETY: one message header per frame, each pointing at one iovec over a slice of
        // `buf`, which we borrow for the whole call; sendmmsg only reads them.
        let sent = unsafe {
            libc::sendmmsg(
                self.fd.as_raw_fd(),
                scratch.msgs.as_mut_ptr(),
                frames.len() as u32,
                libc::MSG_DONTWAIT,
            )
        };
        if sent < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(0),
                _ => Err(e),
            };
        }
        Ok(sent as usize)
    }

    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

//! The receive ring of an AF_PACKET socket (TPACKET_V2): the kernel copies each arriving frame
//! into a slot of memory it shares with us and flips the slot's status word; taking a frame is a
//! memory read, not a system call, so the loop reads every port at every wake-up for free.
//! Every `unsafe` block here touches only the mapping this type owns, within its bounds.

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU32, Ordering};

/// Bytes per slot: a header, then the frame (a jumbo frame of 9234 B fits; longer ones arrive
/// truncated and are dropped as oversize by the data plane).
pub const SLOT_BYTES: usize = 10240;
/// Slots per ring: 512 x 10 KiB = 5 MiB per port, several milliseconds of a 1 Gb/s port.
pub const SLOTS: usize = 512;
/// Slots per kernel block (a block must be whole pages: 4 x 10240 = 10 pages).
const SLOTS_PER_BLOCK: usize = 4;

pub struct RxRing {
    base: *mut u8,
    len: usize,
    next: usize,
}

// SAFETY: the ring owns its mapping; the data plane thread is its only user.
unsafe impl Send for RxRing {}

impl RxRing {
    /// Switch `fd` (an AF_PACKET socket) to TPACKET_V2 and map its receive ring.
    pub fn new(fd: RawFd) -> io::Result<RxRing> {
        Ok(Self::map(fd, false)?.0)
    }

    /// As `new`, with a transmit ring of the same geometry mapped right after the receive ring
    /// (one mapping, as the kernel lays them out); the [`TxRing`] lives inside this mapping.
    pub fn with_tx(fd: RawFd) -> io::Result<(RxRing, TxRing)> {
        let (rx, tx) = Self::map(fd, true)?;
        Ok((rx, tx.expect("asked for a transmit ring")))
    }

    fn map(fd: RawFd, tx: bool) -> io::Result<(RxRing, Option<TxRing>)> {
        let version = libc::tpacket_versions::TPACKET_V2 as libc::c_int;
        crate::sys::setsockopt(fd, libc::SOL_PACKET, libc::PACKET_VERSION, &version)?;
        let req = libc::tpacket_req {
            tp_block_size: (SLOT_BYTES * SLOTS_PER_BLOCK) as libc::c_uint,
            tp_block_nr: (SLOTS / SLOTS_PER_BLOCK) as libc::c_uint,
            tp_frame_size: SLOT_BYTES as libc::c_uint,
            tp_frame_nr: SLOTS as libc::c_uint,
        };
        if tx {
            // a frame the kernel cannot send is skipped (and its slot freed), not retried forever;
            // the kernel takes this only before the rings exist
            crate::sys::setsockopt(fd, libc::SOL_PACKET, libc::PACKET_LOSS, &1i32)?;
        }
        crate::sys::setsockopt(fd, libc::SOL_PACKET, libc::PACKET_RX_RING, &req)?;
        if tx {
            crate::sys::setsockopt(fd, libc::SOL_PACKET, libc::PACKET_TX_RING, &req)?;
        }
        let ring = SLOT_BYTES * SLOTS;
        let len = if tx { 2 * ring } else { ring };
        // SAFETY: maps the ring the kernel just allocated for this socket; we own the mapping.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = base as *mut u8;
        let tx = tx.then(|| TxRing {
            // SAFETY: the transmit ring is the mapping's second half.
            base: unsafe { base.add(ring) },
            next: 0,
        });
        Ok((RxRing { base, len, next: 0 }, tx))
    }

    fn status(&self) -> &AtomicU32 {
        // SAFETY: slot `next` lies within the mapping; its first 4 bytes are the status word the
        // kernel writes, aligned (slots are 16-byte aligned) and only accessed atomically here.
        unsafe { &*(self.base.add(self.next * SLOT_BYTES) as *const AtomicU32) }
    }

    /// The oldest frame the kernel has filled and we have not released: the bytes captured and
    /// the frame's real length (more when it was truncated).
    pub fn peek(&self) -> Option<(&[u8], usize)> {
        if self.status().load(Ordering::Acquire) & libc::TP_STATUS_USER == 0 {
            return None;
        }
        // SAFETY: the slot is ours until released (status USER, read with Acquire above); its
        // header is a tpacket2_hdr at the slot's start.
        let slot = unsafe { self.base.add(self.next * SLOT_BYTES) };
        let hdr = unsafe { &*(slot as *const libc::tpacket2_hdr) };
        let (mac, snap) = (usize::from(hdr.tp_mac), hdr.tp_snaplen as usize);
        if mac + snap > SLOT_BYTES {
            // cannot come from a kernel that honours the ring's geometry: hand over no bytes
            // (the data plane counts and drops a frame shorter than its length as oversize)
            return Some((&[], (hdr.tp_len as usize).max(1)));
        }
        // SAFETY: [mac, mac + snap) lies within the slot, checked above.
        let data = unsafe { std::slice::from_raw_parts(slot.add(mac), snap) };
        Some((data, hdr.tp_len as usize))
    }

    /// When the kernel received the oldest frame not yet released (its software timestamp, ns
    /// of CLOCK_REALTIME, one clock for every port), or None when there is no frame.
    pub fn head_arrival_ns(&self) -> Option<u64> {
        if self.status().load(Ordering::Acquire) & libc::TP_STATUS_USER == 0 {
            return None;
        }
        // SAFETY: as in `peek`: the slot is ours (status USER) and starts with a tpacket2_hdr.
        let hdr = unsafe { &*(self.base.add(self.next * SLOT_BYTES) as *const libc::tpacket2_hdr) };
        Some(u64::from(hdr.tp_sec) * 1_000_000_000 + u64::from(hdr.tp_nsec))
    }

    /// Give the slot `peek` returned back to the kernel.
    pub fn release(&mut self) {
        self.status()
            .store(libc::TP_STATUS_KERNEL, Ordering::Release);
        self.next = (self.next + 1) % SLOTS;
    }
}

impl Drop for RxRing {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`, which nothing references any more.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

/// Where a frame starts in a transmit slot: after the TPACKET_V2 header, as the kernel reads it
/// (TPACKET2_HDRLEN less the sockaddr_ll it leaves room for).
const TX_DATA: usize = 32;

/// The transmit ring of an AF_PACKET socket (TPACKET_V2), inside the mapping its [`RxRing`]
/// owns: a frame is copied into the next free slot and marked for sending; one `send` call then
/// hands every marked slot to the kernel, which frees each slot when its frame has left.
pub struct TxRing {
    base: *mut u8,
    next: usize,
}

// SAFETY: as RxRing: the data plane thread is the only user of the mapping.
unsafe impl Send for TxRing {}

impl TxRing {
    fn status(&self) -> &AtomicU32 {
        // SAFETY: as RxRing::status, in the transmit half of the mapping.
        unsafe { &*(self.base.add(self.next * SLOT_BYTES) as *const AtomicU32) }
    }

    /// Copy `frame` into the next slot and mark it for sending. False when the ring is full (the
    /// kernel has not sent the frame in that slot yet) or the frame is longer than a slot.
    pub fn push(&mut self, frame: &[u8]) -> bool {
        if frame.len() > SLOT_BYTES - TX_DATA
            || self.status().load(Ordering::Acquire) != libc::TP_STATUS_AVAILABLE
        {
            return false;
        }
        // SAFETY: the slot is ours (status AVAILABLE, read with Acquire); its header is a
        // tpacket2_hdr at the slot's start and the frame fits after TX_DATA (checked above).
        unsafe {
            let slot = self.base.add(self.next * SLOT_BYTES);
            std::ptr::copy_nonoverlapping(frame.as_ptr(), slot.add(TX_DATA), frame.len());
            let hdr = &mut *(slot as *mut libc::tpacket2_hdr);
            hdr.tp_len = frame.len() as u32;
            hdr.tp_snaplen = frame.len() as u32;
        }
        self.status()
            .store(libc::TP_STATUS_SEND_REQUEST, Ordering::Release);
        self.next = (self.next + 1) % SLOTS;
        true
    }
}

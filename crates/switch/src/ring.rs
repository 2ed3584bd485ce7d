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
        let version = libc::tpacket_versions::TPACKET_V2 as libc::c_int;
        crate::sys::setsockopt(fd, libc::SOL_PACKET, libc::PACKET_VERSION, &version)?;
        let req = libc::tpacket_req {
            tp_block_size: (SLOT_BYTES * SLOTS_PER_BLOCK) as libc::c_uint,
            tp_block_nr: (SLOTS / SLOTS_PER_BLOCK) as libc::c_uint,
            tp_frame_size: SLOT_BYTES as libc::c_uint,
            tp_frame_nr: SLOTS as libc::c_uint,
        };
        crate::sys::setsockopt(fd, libc::SOL_PACKET, libc::PACKET_RX_RING, &req)?;
        let len = SLOT_BYTES * SLOTS;
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
        Ok(RxRing {
            base: base as *mut u8,
            len,
            next: 0,
        })
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

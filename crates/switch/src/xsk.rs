//! An AF_XDP port: a socket bound to queue 0 of an interface, its frame memory (the UMEM) and
//! the four rings it shares with the kernel (fill, receive, transmit, completion), set up with
//! raw system calls. The XDP program of xdp_prog.rs redirects the queue's frames to it. Frames
//! are read where the kernel put them and their slots go back to the fill ring on release;
//! frames to send are copied into transmit slots and the kernel is kicked only when it asks
//! (need_wakeup). Every `unsafe` block touches only the mappings this type owns, within bounds,
//! or is one system call on memory it owns.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::xdp_prog::{XdpMode, XdpRedirect};

const AF_XDP: libc::c_int = 44;
const SOL_XDP: libc::c_int = 283;
const XDP_MMAP_OFFSETS: libc::c_int = 1;
const XDP_RX_RING: libc::c_int = 2;
const XDP_TX_RING: libc::c_int = 3;
const XDP_UMEM_REG: libc::c_int = 4;
const XDP_UMEM_FILL_RING: libc::c_int = 5;
const XDP_UMEM_COMPLETION_RING: libc::c_int = 6;
const XDP_OPTIONS: libc::c_int = 8;
const XDP_OPTIONS_ZEROCOPY: u32 = 1;
const XDP_USE_NEED_WAKEUP: u16 = 1 << 3;
const XDP_RING_NEED_WAKEUP: u32 = 1;
const PGOFF_RX: libc::off_t = 0;
const PGOFF_TX: libc::off_t = 0x8000_0000;
const PGOFF_FILL: libc::off_t = 0x1_0000_0000;
const PGOFF_COMPLETION: libc::off_t = 0x1_8000_0000;

/// Bytes per UMEM frame. The kernel keeps 256 B of headroom in each, so a received frame may
/// be 1792 B long (longer ones are dropped by the kernel and counted in its statistics).
pub const FRAME_BYTES: usize = 2048;
/// Entries per ring; the UMEM has as many frames for receiving and as many for sending.
const RING: u32 = 2048;
/// Kicks per send call at most: copy mode sends a budget of frames per kick.
const MAX_KICKS: usize = 64;

#[repr(C)]
#[derive(Default)]
struct RingOffsets {
    producer: u64,
    consumer: u64,
    desc: u64,
    flags: u64,
}

#[repr(C)]
#[derive(Default)]
struct MmapOffsets {
    rx: RingOffsets,
    tx: RingOffsets,
    fill: RingOffsets,
    completion: RingOffsets,
}

#[repr(C)]
struct UmemReg {
    addr: u64,
    len: u64,
    chunk_size: u32,
    headroom: u32,
}

#[repr(C)]
struct SockaddrXdp {
    family: u16,
    flags: u16,
    ifindex: u32,
    queue_id: u32,
    shared_umem_fd: u32,
}

/// A receive or transmit descriptor (struct xdp_desc).
#[repr(C)]
#[derive(Clone, Copy)]
struct Desc {
    addr: u64,
    len: u32,
    options: u32,
}

/// A mapped mmap region, unmapped on drop.
struct Mapping {
    base: *mut u8,
    len: usize,
}

impl Mapping {
    fn new(fd: RawFd, len: usize, pgoff: libc::off_t) -> io::Result<Mapping> {
        let (flags, fd) = if fd < 0 {
            (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1)
        } else {
            (libc::MAP_SHARED | libc::MAP_POPULATE, fd)
        };
        // SAFETY: a fresh mapping of `len` bytes; we own it until drop.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                fd,
                pgoff,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping {
            base: base as *mut u8,
            len,
        })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what `new` mapped; nothing references it any more.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

/// One ring: its producer and consumer words, flags and descriptors, in a shared mapping.
struct Ring {
    map: Mapping,
    off: RingOffsets,
}

impl Ring {
    fn open(fd: RawFd, off: RingOffsets, entry: usize, pgoff: libc::off_t) -> io::Result<Ring> {
        let len = off.desc as usize + RING as usize * entry;
        Ok(Ring {
            map: Mapping::new(fd, len, pgoff)?,
            off,
        })
    }
    fn word(&self, at: u64) -> &AtomicU32 {
        // SAFETY: the kernel's offsets lie within the mapping and are 4-byte aligned.
        unsafe { &*(self.map.base.add(at as usize) as *const AtomicU32) }
    }
    fn producer(&self) -> &AtomicU32 {
        self.word(self.off.producer)
    }
    fn consumer(&self) -> &AtomicU32 {
        self.word(self.off.consumer)
    }
    fn needs_wakeup(&self) -> bool {
        self.word(self.off.flags).load(Ordering::Relaxed) & XDP_RING_NEED_WAKEUP != 0
    }
    fn desc(&self, idx: u32) -> *mut Desc {
        // SAFETY: idx is masked to the ring's entries, all within the mapping.
        unsafe {
            self.map
                .base
                .add(self.off.desc as usize)
                .cast::<Desc>()
                .add((idx & (RING - 1)) as usize)
        }
    }
    fn addr(&self, idx: u32) -> *mut u64 {
        // SAFETY: as `desc`, for a ring of 8-byte addresses.
        unsafe {
            self.map
                .base
                .add(self.off.desc as usize)
                .cast::<u64>()
                .add((idx & (RING - 1)) as usize)
        }
    }
}

/// An AF_XDP socket on queue 0 of one interface, with its XDP program attached.
pub struct XskSocket {
    // the program goes first: detach it before the socket closes
    xdp: XdpRedirect,
    fd: OwnedFd,
    umem: Mapping,
    rx: Ring,
    tx: Ring,
    fill: Ring,
    completion: Ring,
    /// Our copies of the rings' indexes: the next receive descriptor to read, and how far the
    /// kernel had produced when last looked.
    rx_next: u32,
    rx_seen: u32,
    /// When the frames up to `rx_seen` were first seen (monotonic ns).
    rx_seen_at: u64,
    fill_next: u32,
    tx_next: u32,
    completion_next: u32,
    /// Transmit frames not in flight.
    tx_free: Vec<u64>,
    zero_copy: bool,
}

// SAFETY: the socket owns its mappings; the data plane thread is its only user.
unsafe impl Send for XskSocket {}

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

impl XskSocket {
    /// Open an AF_XDP socket on queue 0 of `ifname` and attach the redirect program.
    pub fn open(ifname: &str) -> io::Result<XskSocket> {
        let ifindex = crate::sys::if_index(ifname)?;
        let queues = rx_queues(ifname);
        if queues > 1 {
            // frames RSS spreads to the other queues would pass the switch by
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("{queues} receive queues; AF_XDP ports read queue 0 only (make it one with ethtool -L {ifname})"),
            ));
        }
        // SAFETY: socket() with constant arguments; the fd is owned right after.
        let raw = check(unsafe { libc::socket(AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) })
            .map_err(|e| io::Error::new(e.kind(), format!("cannot open an AF_XDP socket: {e}")))?;
        // SAFETY: a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let frames = 2 * RING as usize;
        let umem = Mapping::new(-1, frames * FRAME_BYTES, 0)?;
        let reg = UmemReg {
            addr: umem.base as u64,
            len: umem.len as u64,
            chunk_size: FRAME_BYTES as u32,
            headroom: 0,
        };
        let step = |what: &'static str| {
            move |e: io::Error| io::Error::new(e.kind(), format!("{what}: {e}"))
        };
        crate::sys::setsockopt(raw, SOL_XDP, XDP_UMEM_REG, &reg)
            .map_err(step("cannot register the UMEM"))?;
        for ring in [
            XDP_UMEM_FILL_RING,
            XDP_UMEM_COMPLETION_RING,
            XDP_RX_RING,
            XDP_TX_RING,
        ] {
            crate::sys::setsockopt(raw, SOL_XDP, ring, &RING)
                .map_err(step("cannot size an AF_XDP ring"))?;
        }
        let mut off = MmapOffsets::default();
        getsockopt(raw, XDP_MMAP_OFFSETS, &mut off)?;
        let desc = std::mem::size_of::<Desc>();
        let rx = Ring::open(raw, off.rx, desc, PGOFF_RX)?;
        let tx = Ring::open(raw, off.tx, desc, PGOFF_TX)?;
        let fill = Ring::open(raw, off.fill, 8, PGOFF_FILL)?;
        let completion = Ring::open(raw, off.completion, 8, PGOFF_COMPLETION)?;
        // the lower half of the UMEM receives, the upper half sends
        for i in 0..RING {
            // SAFETY: the fill ring is ours to produce into; the slot is within it.
            unsafe { *fill.addr(i) = u64::from(i) * FRAME_BYTES as u64 };
        }
        fill.producer().store(RING, Ordering::Release);
        let addr = SockaddrXdp {
            family: AF_XDP as u16,
            flags: XDP_USE_NEED_WAKEUP,
            ifindex,
            queue_id: 0,
            shared_umem_fd: 0,
        };
        // SAFETY: bind with a sockaddr_xdp we own and its size.
        check(unsafe {
            libc::bind(
                raw,
                &addr as *const SockaddrXdp as *const libc::sockaddr,
                std::mem::size_of::<SockaddrXdp>() as libc::socklen_t,
            )
        })
        .map_err(|e| io::Error::new(e.kind(), format!("cannot bind the AF_XDP socket: {e}")))?;
        let mut options = 0u32;
        let zero_copy = getsockopt(raw, XDP_OPTIONS, &mut options).is_ok()
            && options & XDP_OPTIONS_ZEROCOPY != 0;
        let xdp = XdpRedirect::attach(ifindex, 0, raw)?;
        Ok(XskSocket {
            xdp,
            fd,
            umem,
            rx,
            tx,
            fill,
            completion,
            rx_next: 0,
            rx_seen: 0,
            rx_seen_at: 0,
            fill_next: RING,
            tx_next: 0,
            completion_next: 0,
            tx_free: (RING as usize..frames)
                .map(|i| (i * FRAME_BYTES) as u64)
                .collect(),
            zero_copy,
        })
    }

    /// How the port runs, for the start-up line: "native XDP, copy mode".
    pub fn describe(&self) -> String {
        let copy = if self.zero_copy {
            "zero-copy"
        } else {
            "copy mode"
        };
        format!("AF_XDP, {}, {copy}", self.xdp.mode.describe())
    }

    /// Where the XDP program runs.
    pub fn xdp_mode(&self) -> XdpMode {
        self.xdp.mode
    }

    /// Whether a frame is waiting, looking at the kernel's producer word when all seen ones
    /// are taken (and stamping the newly seen ones with the time).
    fn rx_ready(&mut self) -> bool {
        if self.rx_next != self.rx_seen {
            return true;
        }
        let produced = self.rx.producer().load(Ordering::Acquire);
        if produced == self.rx_seen {
            return false;
        }
        self.rx_seen = produced;
        self.rx_seen_at = crate::sys::now_ns();
        true
    }

    /// The oldest received frame not yet released: (bytes, length).
    pub fn peek(&mut self) -> Option<(&[u8], usize)> {
        if !self.rx_ready() {
            return None;
        }
        // SAFETY: the descriptor at rx_next was produced by the kernel (Acquire above).
        let d = unsafe { *self.rx.desc(self.rx_next) };
        let (start, len) = (d.addr as usize, d.len as usize);
        if start + len > self.umem.len {
            // a kernel honouring the UMEM never does this: hand over no bytes (dropped as
            // oversize by the data plane)
            return Some((&[], len.max(1)));
        }
        // SAFETY: [start, start + len) lies within the UMEM (checked) and the frame is ours
        // until released.
        let data = unsafe { std::slice::from_raw_parts(self.umem.base.add(start), len) };
        Some((data, len))
    }

    /// When the oldest frame not yet released was first seen (monotonic ns), or None.
    pub fn head_arrival_ns(&mut self) -> Option<u64> {
        self.rx_ready().then_some(self.rx_seen_at)
    }

    /// Give the frame `peek` returned back to the kernel's fill ring.
    pub fn release(&mut self) {
        // SAFETY: as in `peek`.
        let d = unsafe { *self.rx.desc(self.rx_next) };
        self.rx_next = self.rx_next.wrapping_add(1);
        self.rx.consumer().store(self.rx_next, Ordering::Release);
        // SAFETY: every receive frame is either in the fill ring or in our hands, so the fill
        // ring has room for the one we return.
        unsafe { *self.fill.addr(self.fill_next) = d.addr & !(FRAME_BYTES as u64 - 1) };
        self.fill_next = self.fill_next.wrapping_add(1);
        self.fill
            .producer()
            .store(self.fill_next, Ordering::Release);
        if self.fill.needs_wakeup() {
            self.wake_rx();
        }
    }

    fn wake_rx(&self) {
        // SAFETY: a zero-length receive: only tells the kernel the fill ring has frames.
        unsafe {
            libc::recvfrom(
                self.fd.as_raw_fd(),
                std::ptr::null_mut(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
    }

    /// Take back the transmit frames the kernel has sent.
    fn reclaim(&mut self) {
        let done = self.completion.producer().load(Ordering::Acquire);
        while self.completion_next != done {
            // SAFETY: produced by the kernel (Acquire above), within the ring.
            let addr = unsafe { *self.completion.addr(self.completion_next) };
            self.tx_free.push(addr & !(FRAME_BYTES as u64 - 1));
            self.completion_next = self.completion_next.wrapping_add(1);
        }
        self.completion
            .consumer()
            .store(self.completion_next, Ordering::Release);
    }

    /// Queue the frames `buf[off..off + len]` on the transmit ring and kick the kernel.
    /// Returns how many were queued: fewer when the ring has no free frame or a frame is too
    /// long for one (the caller counts that one as failed).
    pub fn send_many(&mut self, buf: &[u8], frames: &[(usize, usize)]) -> io::Result<usize> {
        self.reclaim();
        let mut queued = 0;
        for &(off, len) in frames {
            if len > FRAME_BYTES {
                break;
            }
            let Some(addr) = self.tx_free.pop() else {
                break;
            };
            // SAFETY: `addr` is a free transmit frame of FRAME_BYTES within the UMEM, which
            // the kernel does not touch until we queue it; `len` fits (checked).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    buf[off..off + len].as_ptr(),
                    self.umem.base.add(addr as usize),
                    len,
                );
                *self.tx.desc(self.tx_next) = Desc {
                    addr,
                    len: len as u32,
                    options: 0,
                };
            }
            self.tx_next = self.tx_next.wrapping_add(1);
            queued += 1;
        }
        if queued > 0 {
            self.tx.producer().store(self.tx_next, Ordering::Release);
        }
        self.kick()?;
        Ok(queued)
    }

    /// Make the kernel send what the transmit ring holds: in copy mode each kick sends a
    /// budget of frames, so kick until the ring is empty (or the device pushes back).
    fn kick(&mut self) -> io::Result<()> {
        for _ in 0..MAX_KICKS {
            if self.tx.consumer().load(Ordering::Acquire) == self.tx_next || !self.tx.needs_wakeup()
            {
                return Ok(());
            }
            // SAFETY: a zero-length send: only tells the kernel the transmit ring has frames.
            let r = unsafe {
                libc::sendto(
                    self.fd.as_raw_fd(),
                    std::ptr::null(),
                    0,
                    libc::MSG_DONTWAIT,
                    std::ptr::null(),
                    0,
                )
            };
            if r < 0 {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EAGAIN | libc::EBUSY | libc::ENOBUFS | libc::EINTR) => return Ok(()),
                    // the interface went away: the loop reports it once via the socket's error
                    Some(libc::ENETDOWN | libc::ENXIO) => return Ok(()),
                    _ => return Err(e),
                }
            }
            self.reclaim();
        }
        Ok(())
    }

    /// Take the socket's pending error, if any.
    pub fn take_error(&self) -> Option<io::Error> {
        crate::sys::take_socket_error(self.fd.as_raw_fd())
    }

    /// The socket's descriptor (readable when frames are waiting).
    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// How many receive queues the interface has (1 when sysfs does not say).
fn rx_queues(ifname: &str) -> usize {
    std::fs::read_dir(format!("/sys/class/net/{ifname}/queues"))
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("rx-"))
                .count()
        })
        .unwrap_or(1)
        .max(1)
}

fn getsockopt<T>(fd: RawFd, name: libc::c_int, value: &mut T) -> io::Result<()> {
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into a value we own.
    check(unsafe {
        libc::getsockopt(
            fd,
            SOL_XDP,
            name,
            value as *mut T as *mut libc::c_void,
            &mut len,
        )
    })
    .map(|_| ())
}

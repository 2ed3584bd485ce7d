//! Thin wrappers over the Linux calls the switch needs: socket options, sendmmsg's buffers,
//! epoll, eventfd, the monotonic clock. Each `unsafe` block is a single system call on memory
//! this module owns or borrows for the duration of the call.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

pub(crate) fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Monotonic time in nanoseconds (CLOCK_MONOTONIC, the clock timerfd uses).
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Ask the kernel to wake this thread's timers on time: the default slack is 50 us, more than
/// a 1500 B packet lasts at 1 Gb/s.
pub fn set_timer_slack_ns(ns: u64) {
    // SAFETY: prctl with integer arguments only.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) };
}

pub fn if_index(name: &str) -> io::Result<u32> {
    let c = CString::new(name)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface name has a NUL"))?;
    // SAFETY: if_nametoindex reads a NUL-terminated string we own.
    let idx = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if idx == 0 {
        Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no interface named '{name}'"),
        ))
    } else {
        Ok(idx)
    }
}

pub(crate) fn setsockopt<T>(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: &T,
) -> io::Result<()> {
    // SAFETY: passes a pointer to a value we borrow and its exact size.
    check(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            value as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

/// Take a socket's pending error (SO_ERROR), if any.
pub(crate) fn take_socket_error(fd: RawFd) -> Option<io::Error> {
    let mut err: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes one c_int we own and its length.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ERROR,
            &mut err as *mut libc::c_int as *mut libc::c_void,
            &mut len,
        )
    };
    (r == 0 && err != 0).then(|| io::Error::from_raw_os_error(err))
}

/// Message headers and iovecs for recvmmsg/sendmmsg, reused between calls. Holds raw pointers
/// only for the duration of one call; they are rebuilt every time.
pub struct MsgScratch {
    pub(crate) iov: Vec<libc::iovec>,
    pub(crate) msgs: Vec<libc::mmsghdr>,
}

impl MsgScratch {
    pub fn new(batch: usize) -> MsgScratch {
        MsgScratch {
            iov: Vec::with_capacity(batch),
            msgs: Vec::with_capacity(batch),
        }
    }

    pub(crate) fn point_msgs_at_iovs(&mut self) {
        self.msgs.clear();
        for v in &mut self.iov {
            // SAFETY: mmsghdr is plain data; all-zero is a valid empty header.
            let mut m: libc::mmsghdr = unsafe { std::mem::zeroed() };
            m.msg_hdr.msg_iov = v as *mut libc::iovec;
            m.msg_hdr.msg_iovlen = 1;
            self.msgs.push(m);
        }
    }
}

pub struct Epoll {
    fd: OwnedFd,
}

impl Epoll {
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: epoll_create1 with a flag; the fd is owned right after.
        let raw = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: fresh descriptor.
        Ok(Epoll {
            fd: unsafe { OwnedFd::from_raw_fd(raw) },
        })
    }

    /// Stop watching `fd`.
    pub fn delete(&self, fd: RawFd) -> io::Result<()> {
        let mut ev = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: epoll_ctl with a descriptor and an event we own (ignored for DEL).
        check(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), libc::EPOLL_CTL_DEL, fd, &mut ev) })
            .map(|_| ())
    }

    pub fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: token,
        };
        // SAFETY: epoll_ctl reads one epoll_event we own.
        check(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })
            .map(|_| ())
    }

    /// Wait for events at most `timeout_ns` (None: forever, Some(0): just look). Nanosecond
    /// timeouts (epoll_pwait2, Linux 5.11) spare the loop a timerfd to arm and read per wait;
    /// on an older kernel the timeout is rounded up to milliseconds.
    pub fn wait(
        &self,
        events: &mut Vec<libc::epoll_event>,
        timeout_ns: Option<u64>,
    ) -> io::Result<usize> {
        events.clear();
        let cap = events.capacity().max(1);
        let ts = timeout_ns.map(|t| libc::timespec {
            tv_sec: (t / 1_000_000_000) as i64,
            tv_nsec: (t % 1_000_000_000) as i64,
        });
        let ts_ptr = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: the kernel writes at most `cap` events into the vector's spare capacity and
        // reads the timespec we own; no signal mask is passed. We then set the length to what
        // it reported.
        let mut n = unsafe {
            libc::syscall(
                libc::SYS_epoll_pwait2,
                self.fd.as_raw_fd(),
                events.as_mut_ptr(),
                cap as libc::c_int,
                ts_ptr,
                std::ptr::null::<libc::sigset_t>(),
                0usize,
            )
        } as libc::c_int;
        if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
            let ms = timeout_ns.map_or(-1, |t| t.div_ceil(1_000_000).min(i32::MAX as u64) as i32);
            // SAFETY: as above, with a millisecond timeout.
            n = unsafe {
                libc::epoll_wait(self.fd.as_raw_fd(), events.as_mut_ptr(), cap as i32, ms)
            };
        }
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(0)
            } else {
                Err(e)
            };
        }
        // SAFETY: n <= cap entries were initialised by epoll_wait.
        unsafe { events.set_len(n as usize) };
        Ok(n as usize)
    }
}

/// An eventfd other threads write to wake the event loop (control changes, stop).
pub struct Waker {
    fd: OwnedFd,
}

impl Waker {
    pub fn new() -> io::Result<Waker> {
        // SAFETY: eventfd with constant arguments.
        let raw = check(unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) })?;
        // SAFETY: fresh descriptor.
        Ok(Waker {
            fd: unsafe { OwnedFd::from_raw_fd(raw) },
        })
    }

    pub fn wake(&self) {
        let one = 1u64.to_ne_bytes();
        // SAFETY: write of 8 bytes from a buffer we own.
        unsafe { libc::write(self.fd.as_raw_fd(), one.as_ptr() as *const libc::c_void, 8) };
    }

    pub fn ack(&self) {
        let mut buf = [0u8; 8];
        // SAFETY: read of 8 bytes into a buffer we own.
        unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                buf.as_mut_ptr() as *mut libc::c_void,
                8,
            )
        };
    }

    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

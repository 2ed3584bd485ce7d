//! The XDP program that hands an interface's frames to its AF_XDP socket: an XSKMAP keyed by
//! receive queue and a five-instruction program calling bpf_redirect_map (frames of a queue
//! with no socket pass to the kernel stack). Loaded with the bpf() system call and attached
//! through a BPF link, so the program leaves the interface when the link's descriptor closes,
//! also when the process dies. Every `unsafe` block is one bpf() call on an attribute block
//! this module owns.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_LINK_CREATE: libc::c_long = 28;
const BPF_MAP_TYPE_XSKMAP: u32 = 17;
const BPF_PROG_TYPE_XDP: u32 = 6;
const BPF_XDP: u32 = 37;
const BPF_FUNC_REDIRECT_MAP: i32 = 51;
const XDP_PASS: i32 = 2;
/// Queues an interface may have that the map can name (veth has one per CPU at most).
const MAX_QUEUES: u32 = 64;
const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;

/// Where the program runs: in the driver (native XDP) or on the kernel's socket buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XdpMode {
    /// The driver runs it before allocating a socket buffer (veth supports this).
    Native,
    /// Generic XDP, after the socket buffer is built: works on every interface, slower.
    Skb,
}

impl XdpMode {
    /// How the start-up line names it.
    pub fn describe(self) -> &'static str {
        match self {
            XdpMode::Native => "native XDP",
            XdpMode::Skb => "skb-mode XDP",
        }
    }
}

/// A bpf_attr: the kernel reads the fields of the command and wants the rest zero.
#[repr(C, align(8))]
struct Attr([u8; 128]);

impl Attr {
    fn new() -> Attr {
        Attr([0; 128])
    }
    fn u32_at(&mut self, off: usize, v: u32) -> &mut Attr {
        self.0[off..off + 4].copy_from_slice(&v.to_ne_bytes());
        self
    }
    fn u64_at(&mut self, off: usize, v: u64) -> &mut Attr {
        self.0[off..off + 8].copy_from_slice(&v.to_ne_bytes());
        self
    }
}

fn bpf(cmd: libc::c_long, attr: &mut Attr) -> io::Result<libc::c_long> {
    // SAFETY: bpf() reads (and for some commands writes) the attribute block we own, of the
    // size we pass; pointers inside it point at memory borrowed for the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr.0.as_mut_ptr(),
            std::mem::size_of::<Attr>(),
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn owned(fd: libc::c_long) -> OwnedFd {
    // SAFETY: a descriptor bpf() just returned; nobody else owns it.
    unsafe { OwnedFd::from_raw_fd(fd as RawFd) }
}

/// One eBPF instruction (struct bpf_insn).
fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> u64 {
    u64::from(code)
        | (u64::from(dst & 0xf) << 8)
        | (u64::from(src & 0xf) << 12)
        | (u64::from(off as u16) << 16)
        | (u64::from(imm as u32) << 32)
}

/// The redirect program over map `map_fd`.
fn program(map_fd: RawFd) -> [u64; 6] {
    [
        insn(0x61, 2, 1, 16, 0),                    // r2 = ctx->rx_queue_index
        insn(0x18, 1, 1, 0, map_fd),                // r1 = the XSKMAP (64-bit load, ...
        0,                                          // ... its upper half)
        insn(0xb7, 3, 0, 0, XDP_PASS),              // r3 = XDP_PASS when the slot is empty
        insn(0x85, 0, 0, 0, BPF_FUNC_REDIRECT_MAP), // r0 = bpf_redirect_map(r1, r2, r3)
        insn(0x95, 0, 0, 0, 0),                     // return r0
    ]
}

/// The redirect program attached to one interface. Dropping it detaches the program.
pub struct XdpRedirect {
    _map: OwnedFd,
    _prog: OwnedFd,
    _link: OwnedFd,
    /// Where the program runs.
    pub mode: XdpMode,
}

impl XdpRedirect {
    /// Load the program, point queue `queue` of its map at `xsk` and attach it to `ifindex`,
    /// natively when the driver can, else in skb mode. Errors say which step failed.
    pub fn attach(ifindex: u32, queue: u32, xsk: RawFd) -> io::Result<XdpRedirect> {
        let step = |what: &'static str| {
            move |e: io::Error| io::Error::new(e.kind(), format!("{what}: {e}"))
        };
        let map = owned(
            bpf(
                BPF_MAP_CREATE,
                Attr::new()
                    .u32_at(0, BPF_MAP_TYPE_XSKMAP)
                    .u32_at(4, 4)
                    .u32_at(8, 4)
                    .u32_at(12, MAX_QUEUES),
            )
            .map_err(step("cannot create an XSKMAP (BPF unavailable?)"))?,
        );
        let insns = program(map.as_raw_fd());
        let license = b"GPL\0";
        let prog = owned(
            bpf(
                BPF_PROG_LOAD,
                Attr::new()
                    .u32_at(0, BPF_PROG_TYPE_XDP)
                    .u32_at(4, insns.len() as u32)
                    .u64_at(8, insns.as_ptr() as u64)
                    .u64_at(16, license.as_ptr() as u64)
                    .u32_at(68, BPF_XDP),
            )
            .map_err(step("cannot load the XDP redirect program"))?,
        );
        let key = queue;
        let value = xsk as u32;
        bpf(
            BPF_MAP_UPDATE_ELEM,
            Attr::new()
                .u32_at(0, map.as_raw_fd() as u32)
                .u64_at(8, &key as *const u32 as u64)
                .u64_at(16, &value as *const u32 as u64),
        )
        .map_err(step("cannot put the AF_XDP socket in the XSKMAP"))?;
        let link = |flags: u32| {
            bpf(
                BPF_LINK_CREATE,
                Attr::new()
                    .u32_at(0, prog.as_raw_fd() as u32)
                    .u32_at(4, ifindex)
                    .u32_at(8, BPF_XDP)
                    .u32_at(12, flags),
            )
        };
        let (link, mode) = match link(XDP_FLAGS_DRV_MODE) {
            Ok(fd) => (owned(fd), XdpMode::Native),
            Err(native) => match link(XDP_FLAGS_SKB_MODE) {
                Ok(fd) => (owned(fd), XdpMode::Skb),
                Err(skb) => {
                    return Err(io::Error::new(
                        skb.kind(),
                        format!("cannot attach XDP (native: {native}; skb mode: {skb})"),
                    ))
                }
            },
        };
        Ok(XdpRedirect {
            _map: map,
            _prog: prog,
            _link: link,
            mode,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_are_encoded_as_the_kernel_reads_them() {
        // code, dst (low nibble) | src (high nibble), offset (le16), immediate (le32)
        assert_eq!(
            insn(0x61, 2, 1, 16, 0).to_le_bytes(),
            [0x61, 0x12, 16, 0, 0, 0, 0, 0]
        );
        assert_eq!(
            insn(0xb7, 3, 0, 0, XDP_PASS).to_le_bytes(),
            [0xb7, 0x03, 0, 0, 2, 0, 0, 0]
        );
        let p = program(7);
        // the map load is a two-slot instruction naming the map by descriptor (src 1)
        assert_eq!(p[1].to_le_bytes(), [0x18, 0x11, 0, 0, 7, 0, 0, 0]);
        assert_eq!(p[2], 0);
        assert_eq!(p[4].to_le_bytes(), [0x85, 0, 0, 0, 51, 0, 0, 0]);
        assert_eq!(p[5].to_le_bytes()[0], 0x95);
    }
}

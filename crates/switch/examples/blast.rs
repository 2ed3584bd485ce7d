//! A paced UDP frame generator for the veth benchmarks (bench/switch_veth.py): sends IPv4/UDP
//! frames of a given size at a given rate on one interface through an AF_PACKET socket with
//! sendmmsg batches, then prints one JSON line with what it sent. The kernel's pktgen is not
//! available on these machines, and iperf3 cannot reach the packet rates needed.
//!
//! blast IFACE --dst-mac MAC --src-ip A.B.C.D --dst-ip A.B.C.D --size BYTES --pps N --seconds S

use std::io;
use std::time::{Duration, Instant};

const BATCH: usize = 64;

struct Args {
    iface: String,
    dst_mac: [u8; 6],
    src_ip: [u8; 4],
    dst_ip: [u8; 4],
    size: usize,
    pps: f64,
    seconds: f64,
}

fn parse_args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let iface = it.next().ok_or(
        "usage: blast IFACE --dst-mac MAC --src-ip IP --dst-ip IP --size B --pps N --seconds S",
    )?;
    let mut a = Args {
        iface,
        dst_mac: [0xff; 6],
        src_ip: [10, 0, 1, 1],
        dst_ip: [10, 0, 1, 2],
        size: 64,
        pps: 10_000.0,
        seconds: 1.0,
    };
    while let Some(flag) = it.next() {
        let v = it.next().ok_or(format!("{flag} needs a value"))?;
        let bad = |what: &str| format!("{flag}: not {what}: {v}");
        match flag.as_str() {
            "--dst-mac" => {
                let parts: Vec<u8> = v
                    .split(':')
                    .map(|p| u8::from_str_radix(p, 16))
                    .collect::<Result<_, _>>()
                    .map_err(|_| bad("a MAC address"))?;
                a.dst_mac = parts.try_into().map_err(|_| bad("a MAC address"))?;
            }
            "--src-ip" | "--dst-ip" => {
                let ip: std::net::Ipv4Addr = v.parse().map_err(|_| bad("an IPv4 address"))?;
                if flag == "--src-ip" {
                    a.src_ip = ip.octets();
                } else {
                    a.dst_ip = ip.octets();
                }
            }
            "--size" => a.size = v.parse().map_err(|_| bad("a size"))?,
            "--pps" => a.pps = v.parse().map_err(|_| bad("a rate"))?,
            "--seconds" => a.seconds = v.parse().map_err(|_| bad("a duration"))?,
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    if !(60..=1514).contains(&a.size) {
        return Err(format!(
            "--size must be 60..1514 bytes (without FCS), not {}",
            a.size
        ));
    }
    if !(a.pps > 0.0 && a.seconds > 0.0) {
        return Err("--pps and --seconds must be positive".into());
    }
    Ok(a)
}

/// An Ethernet/IPv4/UDP frame with a valid IPv4 header checksum.
fn frame(a: &Args) -> Vec<u8> {
    let mut f = Vec::with_capacity(a.size);
    f.extend_from_slice(&a.dst_mac);
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00]);
    let ip_len = (a.size - 14) as u16;
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
    ip[6] = 0x40;
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&a.src_ip);
    ip[16..20].copy_from_slice(&a.dst_ip);
    let sum: u32 = ip
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    let folded = (sum & 0xffff) + (sum >> 16);
    let csum = !(((folded & 0xffff) + (folded >> 16)) as u16);
    ip[10..12].copy_from_slice(&csum.to_be_bytes());
    f.extend_from_slice(&ip);
    let udp_len = ip_len - 20;
    f.extend_from_slice(&[0x30, 0x39, 0x30, 0x3a]); // ports 12345 -> 12346
    f.extend_from_slice(&udp_len.to_be_bytes());
    f.extend_from_slice(&[0, 0]); // no UDP checksum
    f.resize(a.size, 0x5a);
    f
}

fn open(iface: &str) -> io::Result<i32> {
    let name = std::ffi::CString::new(iface).map_err(|_| io::Error::other("bad interface name"))?;
    // SAFETY: if_nametoindex reads a NUL-terminated string we own.
    let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if ifindex == 0 {
        return Err(io::Error::other(format!("no interface {iface}")));
    }
    // SAFETY: socket() with constant arguments.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: sockaddr_ll is plain data; bind gets a pointer to it and its size.
    let rc = unsafe {
        let mut addr: libc::sockaddr_ll = std::mem::zeroed();
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_ifindex = ifindex as i32;
        libc::bind(
            fd,
            &addr as *const libc::sockaddr_ll as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_ll>() as u32,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fd)
}

fn main() {
    let a = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("blast: error: {e}");
            std::process::exit(2);
        }
    };
    let fd = match open(&a.iface) {
        Ok(fd) => fd,
        Err(e) => {
            eprintln!("blast: error: {}: {e}", a.iface);
            std::process::exit(1);
        }
    };
    let f = frame(&a);
    let mut iov: Vec<libc::iovec> = (0..BATCH)
        .map(|_| libc::iovec {
            iov_base: f.as_ptr() as *mut libc::c_void,
            iov_len: f.len(),
        })
        .collect();
    // SAFETY: mmsghdr is plain data; each points at one iovec of `iov`, which outlives the loop.
    let mut msgs: Vec<libc::mmsghdr> = iov
        .iter_mut()
        .map(|v| {
            let mut m: libc::mmsghdr = unsafe { std::mem::zeroed() };
            m.msg_hdr.msg_iov = v as *mut libc::iovec;
            m.msg_hdr.msg_iovlen = 1;
            m
        })
        .collect();
    let total = (a.pps * a.seconds).round() as u64;
    let start = Instant::now();
    let (mut sent, mut refused) = (0u64, 0u64);
    while sent < total {
        let due = ((start.elapsed().as_secs_f64() * a.pps) as u64).min(total);
        if due <= sent {
            let wait = (sent + 1) as f64 / a.pps - start.elapsed().as_secs_f64();
            if wait > 100e-6 {
                std::thread::sleep(Duration::from_secs_f64(wait - 50e-6));
            } else {
                std::hint::spin_loop();
            }
            continue;
        }
        let n = (due - sent).min(BATCH as u64) as u32;
        // SAFETY: msgs holds n valid mmsghdr entries pointing at live buffers.
        let rc = unsafe { libc::sendmmsg(fd, msgs.as_mut_ptr(), n, 0) };
        if rc < 0 {
            refused += u64::from(n);
            sent += u64::from(n);
        } else {
            sent += rc as u64;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{{\"sent\": {}, \"refused\": {refused}, \"seconds\": {secs:.6}, \"pps\": {:.1}}}",
        sent - refused,
        (sent - refused) as f64 / secs
    );
}

//! Shared helpers for the integration tests: programs from p4/ and packet builders.
#![allow(dead_code)]

use lanes_p4::Program;

pub fn program_text(name: &str) -> String {
    let path = format!("{}/../../p4/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A file from crates/p4/tests/data.
pub fn program_text_in_tests(name: &str) -> String {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub fn load(name: &str) -> Program {
    Program::load(&program_text(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

pub fn mac(last2: [u8; 2]) -> [u8; 6] {
    [0, 0, 0, 0, last2[0], last2[1]]
}

/// Independent RFC 1071 checksum over 16-bit words (not the crate's implementation).
pub fn internet_checksum(b: &[u8]) -> u16 {
    let mut sum = 0u32;
    let mut i = 0;
    while i < b.len() {
        let hi = u32::from(b[i]) << 8;
        let lo = if i + 1 < b.len() {
            u32::from(b[i + 1])
        } else {
            0
        };
        sum = sum.wrapping_add(hi | lo);
        i += 2;
    }
    while sum > 0xffff {
        sum = (sum >> 16) + (sum & 0xffff);
    }
    !(sum as u16)
}

/// Ethernet + IPv4 (valid checksum) + UDP + payload.
pub fn ipv4_udp(src: [u8; 4], dst: [u8; 4], ttl: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&mac([0xaa, 0x01]));
    f.extend_from_slice(&mac([0xbb, 0x02]));
    f.extend_from_slice(&[0x08, 0x00]);
    let total = 20 + 8 + payload.len();
    let mut ip = vec![
        0x45,
        0x00,
        (total >> 8) as u8,
        total as u8,
        0x12,
        0x34,
        0x40,
        0x00,
        ttl,
        17,
        0,
        0,
    ];
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&dst);
    let c = internet_checksum(&ip);
    ip[10] = (c >> 8) as u8;
    ip[11] = c as u8;
    f.extend_from_slice(&ip);
    let ulen = 8 + payload.len();
    f.extend_from_slice(&[0x30, 0x39, 0x13, 0x88, (ulen >> 8) as u8, ulen as u8, 0, 0]);
    f.extend_from_slice(payload);
    f
}

/// An ARP request frame (not IPv4).
pub fn arp() -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&[0xff; 6]);
    f.extend_from_slice(&mac([0xaa, 0x01]));
    f.extend_from_slice(&[0x08, 0x06]);
    f.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
    f.extend_from_slice(&[0u8; 20]);
    f
}

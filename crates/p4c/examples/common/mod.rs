//! Helpers shared by the examples that run public programs frame by frame.

use lanes_p4::{MatchKey, Program};

/// Installs one entry; a table or action the program lacks stops the example with its name.
pub fn entry(p: &mut Program, table: &str, keys: Vec<MatchKey>, action: &str, data: Vec<Vec<u8>>) {
    let t = p
        .table_id(table)
        .unwrap_or_else(|| panic!("no table {table}"));
    let a = p
        .action_id(t, action)
        .unwrap_or_else(|| panic!("no action {action} in {table}"));
    p.add_entry(t, keys, a, data, 0)
        .unwrap_or_else(|e| panic!("{table}: {e}"));
}

/// The Internet checksum (one's complement of the one's complement sum of 16-bit words).
pub fn csum(b: &[u8]) -> u16 {
    let mut s = 0u32;
    for c in b.chunks(2) {
        s += (u32::from(c[0]) << 8) | u32::from(*c.get(1).unwrap_or(&0));
    }
    while s > 0xffff {
        s = (s >> 16) + (s & 0xffff);
    }
    !(s as u16)
}

//! Completing a destination's column of the LFTs with up/down routes that carry no balancing
//! counters: switches that the balanced pass did not reach (outside the chosen root's sub-tree), and
//! destinations that are switches. Pass A (bottom-up) lets a switch go down to a child that already
//! routes downwards; pass B (top-down) lets the rest go up to any parent that has a route. Both keep
//! routes up*/down* without U-turns, so they add no channel-dependency cycles.

use crate::lft::NO_PATH;
use crate::topo::{Dir, Topo};

fn routes_down(t: &Topo, col: &[u8], s: u32) -> bool {
    let p = col[s as usize];
    p == 0 || matches!(t.dir(s, p), Dir::Down | Dir::Hca)
}

/// Fills NO_PATH entries of `col` (one entry per switch for one destination). `salt` spreads the
/// choice between equivalent neighbours across destinations.
pub fn fill_column(t: &Topo, col: &mut [u8], salt: usize) {
    for level in (0..t.nlevels).rev() {
        for &s in &t.by_level[level] {
            if col[s as usize] != NO_PATH {
                continue;
            }
            let groups = &t.down[s as usize];
            let n = groups.len();
            for k in 0..n {
                let g = &groups[(k + salt) % n];
                if col[g.remote as usize] != NO_PATH && routes_down(t, col, g.remote) {
                    col[s as usize] = g.ports[salt % g.ports.len()];
                    break;
                }
            }
        }
    }
    for level in 1..t.nlevels {
        for &s in &t.by_level[level] {
            if col[s as usize] != NO_PATH {
                continue;
            }
            let groups = &t.up[s as usize];
            let n = groups.len();
            for k in 0..n {
                let g = &groups[(k + salt) % n];
                if col[g.remote as usize] != NO_PATH {
                    col[s as usize] = g.ports[salt % g.ports.len()];
                    break;
                }
            }
        }
    }
}

//! Completing a destination's column of the LFTs with up/down routes that carry no balancing
//! counters: switches that the balanced pass did not reach (outside the chosen root's sub-tree), and
//! destinations that are switches. Pass A walks upwards from the destination: every ancestor
//! without a route goes down towards the child it was reached from. Pass B (top-down) lets the rest
//! go up to a parent that has a route. Both keep routes up*/down* without U-turns, so they add no
//! channel-dependency cycles.

use crate::lft::NO_PATH;
use crate::topo::{Dir, Topo};

/// Per-thread work space.
pub struct Scratch {
    queue: Vec<u32>,
    mark: Vec<u32>,
    round: u32,
}

impl Scratch {
    pub fn new(t: &Topo) -> Scratch {
        Scratch {
            queue: Vec::new(),
            mark: vec![0; t.num_switches()],
            round: 0,
        }
    }
}

fn routes_down(t: &Topo, col: &[u8], s: u32) -> bool {
    let p = col[s as usize];
    p == 0 || matches!(t.dir(s, p), Dir::Down | Dir::Hca)
}

/// Fills NO_PATH entries of `col` (one entry per switch for one destination reached through the
/// switch `origin`, its leaf or the switch itself). `salt` spreads the choice between equivalent
/// ports across destinations.
pub fn fill_column(t: &Topo, col: &mut [u8], origin: u32, salt: usize, sc: &mut Scratch) {
    sc.round = sc.round.wrapping_add(1);
    if sc.round == 0 {
        sc.mark.fill(0);
        sc.round = 1;
    }
    let round = sc.round;
    sc.queue.clear();
    sc.queue.push(origin);
    sc.mark[origin as usize] = round;
    let mut head = 0;
    while head < sc.queue.len() {
        let x = sc.queue[head];
        head += 1;
        for g in &t.up[x as usize] {
            let r = g.remote as usize;
            if sc.mark[r] == round {
                continue;
            }
            if col[r] == NO_PATH {
                col[r] = g.rports[salt % g.rports.len()];
            } else if !routes_down(t, col, g.remote) {
                continue;
            }
            sc.mark[r] = round;
            sc.queue.push(g.remote);
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

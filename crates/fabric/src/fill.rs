//! Completing a destination's column of the LFTs with up/down routes that carry no balancing
//! counters: switches that the balanced pass did not reach (outside the chosen root's sub-tree), and
//! destinations that are switches. Pass A walks upwards from the destination: every ancestor
//! without a route goes down towards the child it was reached from. Pass B (top-down) lets the rest
//! go up to a parent that has a route. Both keep routes up*/down* without U-turns, so they add no
//! channel-dependency cycles. Pass C (`repair_switch_lids`, on whole tables), for a switch's own
//! LID only: a leaf left without a route (its up/down paths to that switch crossed a failure) gets
//! the shortest path to a switch that reaches it, U-turns allowed. Only the leaf and the switches
//! on that path that had no working route change, so management traffic from the compute nodes
//! reaches every switch; the deadlock check (which includes switch LIDs) still judges the result.

use crate::lft::{Lfts, NO_PATH};
use crate::model::Fabric;
use crate::topo::{Dir, Topo, NONE};

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

/// Pass C (see the module comment). Returns the entries set.
pub fn repair_switch_lids(g: &Fabric, t: &Topo, lfts: &mut Lfts) -> usize {
    let by_guid = lfts.by_guid();
    let idx: Vec<Option<usize>> = t
        .sw_node
        .iter()
        .map(|&n| by_guid.get(&g.nodes[n as usize].guid).copied())
        .collect();
    let ns = t.num_switches();
    let mut set = 0;
    let mut prev: Vec<(u32, u8)> = vec![(NONE, 0); ns];
    let mut queue: Vec<u32> = Vec::new();
    for (x, &xn) in t.sw_node.iter().enumerate() {
        let lid = g.nodes[xn as usize].lid;
        if lid == 0 {
            continue;
        }
        let port = |l: &Lfts, s: u32| idx[s as usize].map_or(NO_PATH, |i| l.switches[i].port(lid));
        let reaches = |l: &Lfts, start: u32| {
            let mut y = start;
            for _ in 0..=ns {
                let p = port(l, y);
                if p == 0 {
                    return y as usize == x;
                }
                if p == NO_PATH || p as usize >= t.stride {
                    return false;
                }
                y = t.remote_sw[y as usize * t.stride + p as usize];
                if y == NONE {
                    return false;
                }
            }
            false // a loop
        };
        for &leaf in &t.leaves {
            if leaf as usize == x || reaches(lfts, leaf) {
                continue;
            }
            // Breadth first from the leaf to the nearest switch that reaches x.
            prev.fill((NONE, 0));
            prev[leaf as usize] = (leaf, 0);
            queue.clear();
            queue.push(leaf);
            let mut head = 0;
            let mut found = NONE;
            'bfs: while head < queue.len() {
                let y = queue[head];
                head += 1;
                let groups = t.up[y as usize].iter().chain(&t.down[y as usize]);
                for gr in groups {
                    let r = gr.remote;
                    if prev[r as usize].0 != NONE {
                        continue;
                    }
                    prev[r as usize] = (y, gr.ports[lid as usize % gr.ports.len()]);
                    if reaches(lfts, r) {
                        found = r;
                        break 'bfs;
                    }
                    queue.push(r);
                }
            }
            // Every switch on the way had no working route: setting theirs breaks none.
            let mut z = found;
            while z != NONE && z != leaf {
                let (y, p) = prev[z as usize];
                if let Some(i) = idx[y as usize] {
                    let ports = &mut lfts.switches[i].ports;
                    if ports.len() <= lid as usize {
                        ports.resize(lid as usize + 1, NO_PATH);
                    }
                    ports[lid as usize] = p;
                    set += 1;
                }
                z = y;
            }
        }
    }
    set
}

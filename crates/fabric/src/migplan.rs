//! VM placements and migration plans for the migration simulator (Paper V's simulations): where
//! the VMs start (uniform or random over the hypervisors) and which moves a pattern makes.
//! Plans are made on this placement model alone (which VM sits on which hypervisor); the
//! simulator then carries each move out on the fabric and its tables.
//!
//! Patterns (Paper V Table 4):
//! - random: a random VM moves to a random other hypervisor with a free VF (default 2 x nodes moves);
//! - consolidate: VMs packed onto the fewest hypervisors, from the left of the tree (hv-0, hv-1, ...);
//! - grouping: two tenants (the VMs split into two random halves [INF: the paper does not say how
//!   its two groups are drawn]) packed each onto neighbouring hypervisors, the second tenant's
//!   block starting on the hypervisor after the first's;
//! - to-uniform: every hypervisor ends with the same number of VMs (give or take one).
//!
//! Packing moves VMs from the right of the tree first (highest hypervisor index) into the
//! leftmost hypervisor that still lacks VMs of their group.

use crate::bail;
use crate::error::Result;
use crate::patterns::Rng;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Initial {
    Uniform,
    Random,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    Random,
    Consolidate,
    Grouping,
    ToUniform,
}

impl Pattern {
    pub fn parse(s: &str) -> Result<Pattern> {
        Ok(match s {
            "random" => Pattern::Random,
            "consolidate" => Pattern::Consolidate,
            "grouping" => Pattern::Grouping,
            "to-uniform" => Pattern::ToUniform,
            _ => {
                bail!("unknown migration pattern {s:?} (random, consolidate, grouping, to-uniform)")
            }
        })
    }
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Random => "random",
            Pattern::Consolidate => "consolidate",
            Pattern::Grouping => "grouping",
            Pattern::ToUniform => "to-uniform",
        }
    }
}

impl Initial {
    pub fn name(self) -> &'static str {
        match self {
            Initial::Uniform => "uniform",
            Initial::Random => "random",
        }
    }

    pub fn parse(s: &str) -> Result<Initial> {
        Ok(match s {
            "uniform" => Initial::Uniform,
            "random" => Initial::Random,
            _ => bail!("unknown initial distribution {s:?} (uniform, random)"),
        })
    }
}

/// Which hypervisor each VM sits on (VM index -> hypervisor index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub vfs: usize,
    pub on: Vec<usize>,
    pub count: Vec<usize>,
}

impl Placement {
    /// VMs per hypervisor at the start: `population` (0..1] of all VFs.
    pub fn initial(
        hypervisors: usize,
        vfs: usize,
        population: f64,
        how: Initial,
        rng: &mut Rng,
    ) -> Result<Vec<usize>> {
        if hypervisors == 0 || vfs == 0 {
            bail!("no hypervisors or no VFs");
        }
        if !(population > 0.0 && population <= 1.0) {
            bail!("population must be in (0, 1], got {population}");
        }
        let total = ((population * (hypervisors * vfs) as f64).round() as usize).max(1);
        let mut count = vec![0usize; hypervisors];
        match how {
            Initial::Uniform => {
                for (h, c) in count.iter_mut().enumerate() {
                    *c = total / hypervisors + usize::from(h < total % hypervisors);
                }
            }
            Initial::Random => {
                for _ in 0..total {
                    let free: Vec<usize> = (0..hypervisors).filter(|&h| count[h] < vfs).collect();
                    count[free[rng.below(free.len())]] += 1;
                }
            }
        }
        Ok(count)
    }

    /// VMs numbered hypervisor by hypervisor, as `vswitch::expand` names them.
    pub fn from_counts(vfs: usize, counts: &[usize]) -> Placement {
        let mut on = Vec::new();
        for (h, &c) in counts.iter().enumerate() {
            on.extend(std::iter::repeat_n(h, c));
        }
        Placement {
            vfs,
            on,
            count: counts.to_vec(),
        }
    }

    pub fn apply(&mut self, vm: usize, to: usize) {
        self.count[self.on[vm]] -= 1;
        self.count[to] += 1;
        self.on[vm] = to;
    }
}

/// The moves (VM index, destination hypervisor) of a pattern from placement `p`.
pub fn plan(
    p: &Placement,
    pattern: Pattern,
    moves: Option<usize>,
    rng: &mut Rng,
) -> Result<Vec<(usize, usize)>> {
    let h = p.count.len();
    let v = p.on.len();
    let mut p = p.clone();
    let mut out = Vec::new();
    if pattern == Pattern::Random {
        let n = moves.unwrap_or(2 * h);
        for _ in 0..n {
            let vm = rng.below(v);
            let free: Vec<usize> = (0..h)
                .filter(|&x| x != p.on[vm] && p.count[x] < p.vfs)
                .collect();
            if free.is_empty() {
                bail!("no hypervisor has a free VF");
            }
            let to = free[rng.below(free.len())];
            p.apply(vm, to);
            out.push((vm, to));
        }
        return Ok(out);
    }
    // Targets per group and hypervisor; every VM in group 0 except for grouping.
    let mut group = vec![0usize; v];
    let mut quota = vec![vec![0usize; h]; 2];
    let fill = |q: &mut [usize], start: usize, n: usize, vfs: usize| -> usize {
        let (mut left, mut x) = (n, start);
        while left > 0 && x < q.len() {
            q[x] = left.min(vfs);
            left -= q[x];
            x += 1;
        }
        x
    };
    match pattern {
        Pattern::Consolidate => {
            fill(&mut quota[0], 0, v, p.vfs);
        }
        Pattern::ToUniform => {
            for (x, q) in quota[0].iter_mut().enumerate() {
                *q = v / h + usize::from(x < v % h);
            }
        }
        Pattern::Grouping => {
            let mut ids: Vec<usize> = (0..v).collect();
            rng.shuffle(&mut ids);
            for &i in &ids[v / 2..] {
                group[i] = 1;
            }
            let a = v - v / 2;
            let next = fill(&mut quota[1], 0, a, p.vfs);
            fill(&mut quota[0], next, v / 2, p.vfs);
        }
        Pattern::Random => unreachable!(),
    }
    // VMs of each group per hypervisor (grouping: group 1 is packed first, from hv-0).
    let mut by = vec![vec![0usize; h]; 2];
    for (i, &x) in p.on.iter().enumerate() {
        by[group[i]][x] += 1;
    }
    let limit = 20 * v + 10;
    while out.len() <= limit {
        // A VM in surplus, rightmost hypervisor first.
        let surplus = (0..v)
            .filter(|&i| by[group[i]][p.on[i]] > quota[group[i]][p.on[i]])
            .max_by_key(|&i| (p.on[i], usize::MAX - i));
        let Some(vm) = surplus else {
            return Ok(out);
        };
        let g = group[vm];
        let want = (0..h).find(|&x| by[g][x] < quota[g][x] && p.count[x] < p.vfs);
        let (vm, to) = match want {
            Some(to) => (vm, to),
            None => {
                // Every hypervisor lacking this group's VMs is full: move one of the other
                // group's surplus VMs off it first, to where that group lacks VMs, else anywhere free.
                let Some(d) = (0..h).find(|&x| by[g][x] < quota[g][x]) else {
                    bail!("placement plan: no hypervisor lacks VMs of a group in surplus");
                };
                let other = 1 - g;
                let Some(u) = (0..v).find(|&i| p.on[i] == d && group[i] == other) else {
                    bail!("placement plan: a full hypervisor holds no VM to move");
                };
                let to = (0..h)
                    .find(|&x| by[other][x] < quota[other][x] && p.count[x] < p.vfs)
                    .or_else(|| {
                        (0..h).find(|&x| {
                            x != d && p.count[x] < p.vfs && quota[0][x] + quota[1][x] == 0
                        })
                    })
                    .or_else(|| (0..h).find(|&x| x != d && p.count[x] < p.vfs));
                let Some(to) = to else {
                    bail!("no hypervisor has a free VF");
                };
                (u, to)
            }
        };
        by[group[vm]][p.on[vm]] -= 1;
        by[group[vm]][to] += 1;
        p.apply(vm, to);
        out.push((vm, to));
    }
    bail!("placement plan did not settle after {limit} moves")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consolidation_packs_from_the_left_and_uniform_spreads() {
        let mut rng = Rng::new(1);
        let counts = Placement::initial(16, 4, 0.25, Initial::Uniform, &mut rng).unwrap();
        assert_eq!(counts, vec![1; 16]);
        let p = Placement::from_counts(4, &counts);
        let moves = plan(&p, Pattern::Consolidate, None, &mut rng).unwrap();
        // hv-0..hv-3 take the 12 VMs of hv-4..hv-15, rightmost first.
        assert_eq!(moves.len(), 12);
        assert_eq!(moves[0], (15, 0));
        let mut q = p.clone();
        for &(vm, to) in &moves {
            q.apply(vm, to);
        }
        assert_eq!(&q.count[..5], &[4, 4, 4, 4, 0]);
        // Random start, then to-uniform: 16 VMs end one per hypervisor.
        let counts = Placement::initial(16, 4, 0.25, Initial::Random, &mut rng).unwrap();
        assert_eq!(counts.iter().sum::<usize>(), 16);
        let mut q = Placement::from_counts(4, &counts);
        for (vm, to) in plan(&q.clone(), Pattern::ToUniform, None, &mut rng).unwrap() {
            q.apply(vm, to);
        }
        assert_eq!(q.count, vec![1; 16]);
    }

    #[test]
    fn grouping_isolates_two_tenants_on_neighbouring_hypervisors() {
        let mut rng = Rng::new(7);
        let counts = Placement::initial(16, 4, 0.5, Initial::Random, &mut rng).unwrap();
        let mut q = Placement::from_counts(4, &counts);
        let moves = plan(&q.clone(), Pattern::Grouping, None, &mut rng).unwrap();
        for (vm, to) in moves {
            assert!(q.count[to] < 4);
            q.apply(vm, to);
        }
        // 32 VMs, two tenants of 16: hv-0..hv-3 and hv-4..hv-7 full, the rest empty.
        assert_eq!(q.count, [vec![4; 8], vec![0; 8]].concat());
        let p = Placement::from_counts(4, &[4, 4]);
        let r = plan(&p, Pattern::Random, Some(3), &mut rng);
        assert!(r.unwrap_err().0.contains("free VF"));
    }
}

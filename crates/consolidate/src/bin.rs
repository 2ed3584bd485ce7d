//! One open bin of the packer: its summed demand, per-day peaks and busy periods, and the
//! bound and exact backlog of adding a VM.

use crate::train::Train;

/// One open bin: summed demand, per day its largest sample and the busy periods [start, end) of its
/// backlog, and the totals.
pub(crate) struct Bin {
    pub(crate) demand: Vec<f64>,
    pub(crate) dmax: Vec<f64>,
    pub(crate) busy: Vec<Vec<(usize, usize)>>,
    pub(crate) delay: f64,
    pub(crate) load: f64,
}

impl Bin {
    pub(crate) fn new(days: usize, t: usize) -> Self {
        Bin {
            demand: vec![0.0; days * t],
            dmax: vec![0.0; days],
            busy: vec![Vec::new(); days],
            delay: 0.0,
            load: 0.0,
        }
    }

    /// A day that stays idle with VM m: no backlog now and no sample over capacity even if the two
    /// peaks met (rounding is monotone, so fl(peak sum) <= cap implies every fl(a + b) <= cap).
    pub(crate) fn stays_idle(&self, train: &Train, m: usize, d: usize, cap: f64) -> bool {
        self.busy[d].is_empty() && self.dmax[d] + train.vmax[m * train.days + d] <= cap
    }

    /// Lower bound of the bin's delay with VM m added: inside a busy period [s0, e), work v(s) added
    /// at s raises the backlog at every sample s..e-1, so sum L grows by at least
    /// sum_s v(s) (e - s) = e (P(e) - P(s0)) - (R(e) - R(s0)). Stops once over `stop`.
    pub(crate) fn lower_bound(&self, train: &Train, m: usize, scale: f64, stop: f64) -> f64 {
        let mut extra = 0.0;
        for (d, periods) in self.busy.iter().enumerate() {
            let base = (m * train.days + d) * (train.t + 1);
            for &(a, e) in periods {
                let ef = e as f64;
                extra += ef * (train.p[base + e] - train.p[base + a])
                    - (train.r[base + e] - train.r[base + a]);
            }
            if self.delay + extra * scale > stop {
                break;
            }
        }
        self.delay + extra * scale
    }

    /// Sum of the backlog L(t) with VM m added (None once it passes `stop`); days that stay idle are
    /// skipped, the others run four at a time (independent queues: the CPU overlaps their chains).
    pub(crate) fn backlog_sum(&self, train: &Train, m: usize, cap: f64, stop: f64) -> Option<f64> {
        let t = train.t;
        let mut total = 0.0;
        let z: &[f64] = &train.zeros;
        let mut lanes: [(&[f64], &[f64]); LANES] = [(z, z); LANES];
        let mut n = 0;
        for d in 0..train.days {
            if self.stays_idle(train, m, d, cap) {
                continue;
            }
            lanes[n] = (&self.demand[d * t..(d + 1) * t], train.day(m, d));
            n += 1;
            if n == LANES {
                total += lindley_lanes(&lanes, cap);
                if total > stop {
                    return None;
                }
                n = 0;
            }
        }
        if n > 0 {
            lanes[n..].fill((z, z)); // idle padding: adds 0
            total += lindley_lanes(&lanes, cap);
        }
        (total <= stop).then_some(total)
    }

    /// Add VM m: new demand, peaks, busy periods and delay.
    pub(crate) fn add(&mut self, train: &Train, m: usize, cap: f64, scale: f64) {
        let t = train.t;
        let mut total = 0.0;
        for d in 0..train.days {
            let idle = self.stays_idle(train, m, d, cap);
            let dem = &mut self.demand[d * t..(d + 1) * t];
            let mut peak = 0.0f64;
            for (a, b) in dem.iter_mut().zip(train.day(m, d)) {
                *a += b;
                peak = peak.max(*a);
            }
            self.dmax[d] = peak;
            if idle {
                continue;
            }
            let periods = &mut self.busy[d];
            periods.clear();
            let mut q = 0.0f64;
            let mut start: Option<usize> = None;
            for (i, a) in dem.iter().enumerate() {
                q = (q + a - cap).max(0.0);
                total += q;
                match (q > 0.0, start) {
                    (true, None) => start = Some(i),
                    (false, Some(s)) => {
                        periods.push((s, i));
                        start = None;
                    }
                    _ => {}
                }
            }
            if let Some(s) = start {
                periods.push((s, t));
            }
        }
        self.load += train.means[m];
        self.delay = total * scale;
    }
}

const LANES: usize = 4;

/// Sum over samples of the backlog of LANES independent days (demand a + extra b at capacity cap).
fn lindley_lanes(lanes: &[(&[f64], &[f64]); LANES], cap: f64) -> f64 {
    let n = lanes[0].0.len();
    for (a, b) in lanes {
        assert!(a.len() == n && b.len() == n); // lets the compiler drop bounds checks below
    }
    let mut q = [0.0f64; LANES];
    let mut sum = [0.0f64; LANES];
    for i in 0..n {
        for k in 0..LANES {
            q[k] = (q[k] + (lanes[k].0[i] + lanes[k].1[i]) - cap).max(0.0);
            sum[k] += q[k];
        }
    }
    sum.iter().sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::tests::spikes;

    #[test]
    fn bin_delay_and_busy_periods_follow_the_queue() {
        let t = spikes(1);
        let mut bin = Bin::new(1, 4);
        bin.add(&t, 0, 100.0, 1.0 / 100.0);
        assert_eq!(bin.delay, 0.0);
        assert!(bin.busy[0].is_empty());
        // Adding C: 200 % at sample 0 on one core leaves a backlog of 100 for one sample.
        assert_eq!(bin.backlog_sum(&t, 2, 100.0, f64::INFINITY), Some(100.0));
        assert_eq!(bin.backlog_sum(&t, 2, 100.0, 50.0), None); // stops once over
        bin.add(&t, 2, 100.0, 1.0 / 100.0);
        assert_eq!(bin.busy[0], vec![(0, 1)]);
        assert!((bin.delay - 1.0).abs() < 1e-12);
        // B's spike at sample 1 falls after the busy period [0, 1): the bound adds nothing, while the
        // exact backlog (100 queued at 0, then 100 more arriving at 1) doubles.
        let lb = bin.lower_bound(&t, 1, 1.0 / 100.0, f64::INFINITY);
        let exact = bin.backlog_sum(&t, 1, 100.0, f64::INFINITY).unwrap() / 100.0;
        assert!(
            (lb - 1.0).abs() < 1e-12 && (exact - 2.0).abs() < 1e-12,
            "{lb} {exact}"
        );
        // A VM with work inside the busy period: v(0) = 100 raises the backlog by 100 at sample 0.
        let lb_c = bin.lower_bound(&t, 2, 1.0 / 100.0, f64::INFINITY);
        assert!((lb_c - 2.0).abs() < 1e-12, "{lb_c}");
    }
}

//! Delay-based VM packing (Paper VI of the InfiniBand cloud studies), the hot loop of
//! `lanes consolidate cv`.
//!
//! The Python package (`lanes.consolidate.packers`) holds the same algorithm in numpy as the
//! reference; this is a plain-loop version of it, tested against that reference from Python.
//!
//! Units as in `lanes.consolidate.delay`: utilisation in percent of one core per sample, the bin
//! capacity `cap` in percent, the backlog L(t) = max(L(t-1) + u(t) - cap, 0) in percent (queue
//! empty at the start of every day), the total delay Q = dt^2 / cap * sum_t L(t) in minutes.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The training series of all VMs, per-day maxima and prefix sums used by the shortcuts.
struct Train {
    /// series[m * n + i]: VM m, sample i of the days laid end to end (n = days * t).
    series: Vec<f64>,
    /// vmax[m * days + d]: VM m's largest sample on day d.
    vmax: Vec<f64>,
    /// p[(m * days + d) * (t + 1) + i] = sum of VM m's samples 0..i of day d.
    p: Vec<f64>,
    /// r[...] like p but each sample weighted by its index within the day.
    r: Vec<f64>,
    means: Vec<f64>,
    order: Vec<usize>,
    /// One day of zeros (padding for the day lanes).
    zeros: Vec<f64>,
    days: usize,
    t: usize,
    dt_min: f64,
}

impl Train {
    fn new(
        series: Vec<f64>,
        means: Vec<f64>,
        order: Vec<usize>,
        days: usize,
        t: usize,
        dt_min: f64,
    ) -> Self {
        let rows = series.len() / t;
        let mut p = vec![0.0; rows * (t + 1)];
        let mut r = vec![0.0; rows * (t + 1)];
        let mut vmax = vec![0.0f64; rows];
        for (k, day) in series.chunks_exact(t).enumerate() {
            let base = k * (t + 1);
            for (i, &u) in day.iter().enumerate() {
                p[base + i + 1] = p[base + i] + u;
                r[base + i + 1] = r[base + i] + i as f64 * u;
                vmax[k] = vmax[k].max(u);
            }
        }
        Train {
            zeros: vec![0.0; t],
            series,
            vmax,
            p,
            r,
            means,
            order,
            days,
            t,
            dt_min,
        }
    }

    fn day(&self, m: usize, d: usize) -> &[f64] {
        let start = (m * self.days + d) * self.t;
        &self.series[start..start + self.t]
    }
}

/// One open bin: summed demand, per day its largest sample and the busy periods [start, end) of its
/// backlog, and the totals.
struct Bin {
    demand: Vec<f64>,
    dmax: Vec<f64>,
    busy: Vec<Vec<(usize, usize)>>,
    delay: f64,
    load: f64,
}

#[derive(Clone, Copy, PartialEq)]
enum Choice {
    First,
    Fullest,
    LeastAdded,
}

impl Bin {
    fn new(days: usize, t: usize) -> Self {
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
    fn stays_idle(&self, train: &Train, m: usize, d: usize, cap: f64) -> bool {
        self.busy[d].is_empty() && self.dmax[d] + train.vmax[m * train.days + d] <= cap
    }

    /// Lower bound of the bin's delay with VM m added: inside a busy period [s0, e), work v(s) added
    /// at s raises the backlog at every sample s..e-1, so sum L grows by at least
    /// sum_s v(s) (e - s) = e (P(e) - P(s0)) - (R(e) - R(s0)). Stops once over `stop`.
    fn lower_bound(&self, train: &Train, m: usize, scale: f64, stop: f64) -> f64 {
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
    fn backlog_sum(&self, train: &Train, m: usize, cap: f64, stop: f64) -> Option<f64> {
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
    fn add(&mut self, train: &Train, m: usize, cap: f64, scale: f64) {
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

/// Round to 9 decimals, so that equal added delays tie despite float noise (as the numpy packer).
fn round9(x: f64) -> f64 {
    (x * 1e9).round() / 1e9
}

/// Bin of each VM for one packing: capacity `cap` (percent, already times the threshold), accepted
/// total delay `limit` (minutes over all training days).
fn pack(train: &Train, cap: f64, limit: f64, choice: Choice) -> Vec<i64> {
    let scale = train.dt_min * train.dt_min / cap;
    // The bound may exceed the exact value by rounding; it only prunes, so err on the loose side.
    let slack = limit + 1e-7 * limit.max(1.0);
    let stop = limit / scale;
    let mut bins: Vec<Bin> = Vec::new();
    let mut assign = vec![0i64; train.means.len()];
    for &m in &train.order {
        let mut chosen: Option<usize> = None;
        let mut best_key = (f64::INFINITY, f64::INFINITY);
        for (b, bin) in bins.iter().enumerate() {
            if bin.lower_bound(train, m, scale, slack) > slack {
                continue;
            }
            let Some(sum) = bin.backlog_sum(train, m, cap, stop) else {
                continue;
            };
            let q = sum * scale;
            if q > limit {
                continue;
            }
            let key = match choice {
                Choice::First => {
                    chosen = Some(b);
                    break;
                }
                Choice::Fullest => (-bin.load, 0.0),
                Choice::LeastAdded => (round9(q - bin.delay), -bin.load),
            };
            if key < best_key {
                best_key = key;
                chosen = Some(b);
            }
        }
        let b = match chosen {
            Some(b) => b,
            None => {
                bins.push(Bin::new(train.days, train.t));
                bins.len() - 1
            }
        };
        bins[b].add(train, m, cap, scale);
        assign[m] = b as i64;
    }
    assign
}

/// Delay-based packings of one training set (Paper VI, Sec. V-B).
///
/// `series`: float64 bytes (native order) of the (vms, days, samples) training utilisation;
/// `order`: the VMs in packing order; `means`: their average utilisation (for best fit);
/// `packings`: (capacity percent already times the threshold, accepted total delay in minutes over
/// the training days, "first" | "fullest" | "least-added"). Returns the bin of each VM per packing.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn consolidate_pack_delay(
    py: Python<'_>,
    series: &[u8],
    vms: usize,
    days: usize,
    samples: usize,
    order: Vec<usize>,
    means: Vec<f64>,
    dt_min: f64,
    packings: Vec<(f64, f64, String)>,
) -> PyResult<Vec<Vec<i64>>> {
    let n = vms * days * samples;
    if days == 0 || samples == 0 || series.len() != 8 * n {
        return Err(PyValueError::new_err(format!(
            "series: {} bytes, expected 8 x {vms} x {days} x {samples}",
            series.len()
        )));
    }
    if means.len() != vms || order.len() != vms || order.iter().any(|&m| m >= vms) {
        return Err(PyValueError::new_err("order and means must list every VM"));
    }
    if !dt_min.is_finite() || dt_min <= 0.0 {
        return Err(PyValueError::new_err("dt_min must be positive"));
    }
    let mut jobs = Vec::with_capacity(packings.len());
    for (cap, limit, choice) in packings {
        let c = match choice.as_str() {
            "first" => Choice::First,
            "fullest" => Choice::Fullest,
            "least-added" => Choice::LeastAdded,
            other => return Err(PyValueError::new_err(format!("unknown choice {other:?}"))),
        };
        if !cap.is_finite() || cap <= 0.0 || limit.is_nan() || limit < 0.0 {
            return Err(PyValueError::new_err(
                "capacity must be positive and the limit >= 0",
            ));
        }
        jobs.push((cap, limit, c));
    }
    Ok(py.allow_threads(|| {
        let series: Vec<f64> = series
            .chunks_exact(8)
            .map(|c| {
                let mut a = [0u8; 8];
                a.copy_from_slice(c);
                f64::from_ne_bytes(a)
            })
            .collect();
        let train = Train::new(series, means, order, days, samples, dt_min);
        jobs.iter()
            .map(|&(cap, limit, c)| pack(&train, cap, limit, c))
            .collect()
    }))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(consolidate_pack_delay, m)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three VMs of one training day, averages equal: A and C spike together, B at another time.
    fn spikes(days: usize) -> Train {
        let day = |v: [f64; 4]| v.to_vec();
        let mut series = Vec::new();
        for v in [
            [100.0, 0.0, 0.0, 0.0],
            [0.0, 100.0, 0.0, 0.0],
            [100.0, 0.0, 0.0, 0.0],
        ] {
            for _ in 0..days {
                series.extend(day(v));
            }
        }
        Train::new(series, vec![25.0; 3], vec![0, 1, 2], days, 4, 1.0)
    }

    #[test]
    fn coinciding_spikes_go_apart_unless_the_limit_takes_them() {
        // Stacked, A + C queue 100 %-minutes for two minutes on one core: Q = 2 minutes.
        let t = spikes(1);
        assert_eq!(pack(&t, 100.0, 1.99, Choice::First), vec![0, 0, 1]);
        assert_eq!(pack(&t, 100.0, 2.0, Choice::First), vec![0, 0, 0]);
        // Two days of the same pattern: the limit is the total over both.
        let t2 = spikes(2);
        assert_eq!(pack(&t2, 100.0, 3.99, Choice::First), vec![0, 0, 1]);
        assert_eq!(pack(&t2, 100.0, 4.0, Choice::Fullest), vec![0, 0, 0]);
        // At 50 % of a core any single spike queues work: each VM alone.
        assert_eq!(pack(&t, 50.0, 0.1, Choice::LeastAdded), vec![0, 1, 2]);
    }

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

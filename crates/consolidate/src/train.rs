//! The training series of all VMs, with per-day maxima and the prefix sums the bounds use.

/// The training series of all VMs, per-day maxima and prefix sums used by the shortcuts.
pub(crate) struct Train {
    /// series[m * n + i]: VM m, sample i of the days laid end to end (n = days * t).
    pub(crate) series: Vec<f64>,
    /// vmax[m * days + d]: VM m's largest sample on day d.
    pub(crate) vmax: Vec<f64>,
    /// p[(m * days + d) * (t + 1) + i] = sum of VM m's samples 0..i of day d.
    pub(crate) p: Vec<f64>,
    /// r[...] like p but each sample weighted by its index within the day.
    pub(crate) r: Vec<f64>,
    pub(crate) means: Vec<f64>,
    pub(crate) order: Vec<usize>,
    /// One day of zeros (padding for the day lanes).
    pub(crate) zeros: Vec<f64>,
    pub(crate) days: usize,
    pub(crate) t: usize,
    pub(crate) dt_min: f64,
}

impl Train {
    pub(crate) fn new(
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

    pub(crate) fn day(&self, m: usize, d: usize) -> &[f64] {
        let start = (m * self.days + d) * self.t;
        &self.series[start..start + self.t]
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Three VMs of one training day, averages equal: A and C spike together, B at another time.
    pub(crate) fn spikes(days: usize) -> Train {
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
}

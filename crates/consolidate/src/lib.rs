//! Delay-based VM packing (Paper VI of the InfiniBand cloud studies), the hot loop of
//! `lanes consolidate cv`.
//!
//! The Python package (`lanes.consolidate.packers`) holds the same algorithm in numpy as the
//! reference; this is a plain-loop version of it, tested against that reference from Python and
//! on small cases here.
//!
//! Units as in `lanes.consolidate.delay`: utilisation in percent of one core per sample, the bin
//! capacity `cap` in percent, the backlog L(t) = max(L(t-1) + u(t) - cap, 0) in percent (queue
//! empty at the start of every day), the total delay Q = dt^2 / cap * sum_t L(t) in minutes.

#![forbid(unsafe_code)]

mod bin;
mod train;

use bin::Bin;
use train::Train;

/// How a VM picks among the open bins that can take it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// The first bin, in opening order.
    First,
    /// The bin with the most load (best fit).
    Fullest,
    /// The bin whose delay grows least (ties: the fullest).
    LeastAdded,
}

impl std::str::FromStr for Choice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "first" => Ok(Choice::First),
            "fullest" => Ok(Choice::Fullest),
            "least-added" => Ok(Choice::LeastAdded),
            other => Err(format!(
                "unknown choice {other:?} (first, fullest or least-added)"
            )),
        }
    }
}

/// One packing to make: capacity in percent (already times the threshold), accepted total delay
/// in minutes over the training days, and the choice rule.
#[derive(Debug, Clone, Copy)]
pub struct Packing {
    pub cap: f64,
    pub limit: f64,
    pub choice: Choice,
}

/// The training utilisation of `vms` VMs over `days` days of `samples` samples each, laid out
/// (vm, day, sample), with the packing order, each VM's mean and the sample spacing in minutes.
pub struct Training {
    pub series: Vec<f64>,
    pub vms: usize,
    pub days: usize,
    pub samples: usize,
    pub order: Vec<usize>,
    pub means: Vec<f64>,
    pub dt_min: f64,
}

/// Delay-based packings of one training set (Paper VI, Sec. V-B): the bin of each VM, per packing.
/// Inputs that do not describe a training set are refused with the reason.
pub fn pack_delay(training: Training, packings: &[Packing]) -> Result<Vec<Vec<i64>>, String> {
    let Training {
        series,
        vms,
        days,
        samples,
        order,
        means,
        dt_min,
    } = training;
    if days == 0 || samples == 0 || series.len() != vms * days * samples {
        return Err(format!(
            "series: {} values, expected {vms} x {days} x {samples}",
            series.len()
        ));
    }
    if means.len() != vms || order.len() != vms || order.iter().any(|&m| m >= vms) {
        return Err("order and means must list every VM".into());
    }
    if !dt_min.is_finite() || dt_min <= 0.0 {
        return Err("dt_min must be positive".into());
    }
    if packings
        .iter()
        .any(|p| !p.cap.is_finite() || p.cap <= 0.0 || p.limit.is_nan() || p.limit < 0.0)
    {
        return Err("capacity must be positive and the limit >= 0".into());
    }
    let train = Train::new(series, means, order, days, samples, dt_min);
    Ok(packings
        .iter()
        .map(|p| pack(&train, p.cap, p.limit, p.choice))
        .collect())
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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::train::tests::spikes;

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
    fn malformed_training_sets_are_refused() {
        let t = |series: Vec<f64>, order: Vec<usize>| Training {
            series,
            vms: 2,
            days: 1,
            samples: 2,
            order,
            means: vec![1.0, 1.0],
            dt_min: 1.0,
        };
        let p = [Packing {
            cap: 100.0,
            limit: 1.0,
            choice: Choice::First,
        }];
        assert!(pack_delay(t(vec![0.0; 3], vec![0, 1]), &p).is_err());
        assert!(pack_delay(t(vec![0.0; 4], vec![0, 2]), &p).is_err());
        assert_eq!(
            pack_delay(t(vec![0.0; 4], vec![1, 0]), &p).unwrap(),
            vec![vec![0, 0]]
        );
        assert!("best".parse::<Choice>().is_err());
    }
}

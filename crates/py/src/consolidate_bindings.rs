//! Binding of the delay-based VM packer (lanes-consolidate) for `lanes consolidate cv`.

use lanes_consolidate::{pack_delay, Choice, Packing, Training};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

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
    if !series.len().is_multiple_of(8) {
        return Err(PyValueError::new_err(format!(
            "series: {} bytes, not whole float64 values",
            series.len()
        )));
    }
    let packings = packings
        .into_iter()
        .map(|(cap, limit, choice)| {
            Ok(Packing {
                cap,
                limit,
                choice: choice.parse::<Choice>()?,
            })
        })
        .collect::<Result<Vec<_>, String>>()
        .map_err(PyValueError::new_err)?;
    let series: Vec<f64> = series
        .chunks_exact(8)
        .map(|c| f64::from_ne_bytes(c.try_into().expect("8 bytes")))
        .collect();
    let training = Training {
        series,
        vms,
        days,
        samples,
        order,
        means,
        dt_min,
    };
    py.allow_threads(|| pack_delay(training, &packings))
        .map_err(PyValueError::new_err)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(consolidate_pack_delay, m)?)?;
    Ok(())
}

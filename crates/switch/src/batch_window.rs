//! How far ahead one turn of the event loop sends: the frames due within a port's batch window
//! leave together with the one due now, so a saturated port costs one wake-up per window, not
//! one per frame. On a VM a wake-up of the data plane thread costs 17-42 us of its CPU
//! (bench/RESULTS.md), more than a frame's whole way through the pipeline.

/// Full frames a window spans at its port's line rate, when the window follows the port.
pub const WINDOW_FRAMES: u64 = 4;
/// The shortest window a port gets: a wake-up per window is the loop's CPU cost.
pub const MIN_WINDOW_NS: u64 = 250_000;
/// The longest: a frame read only at the next turn waits up to a window (wake.rs).
pub const MAX_WINDOW_NS: u64 = 500_000;
const FULL_FRAME_BITS: f64 = 1514.0 * 8.0;

/// The batch window of every port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BatchWindow {
    /// The same window at every port (`--batch-us`); 0 sends each frame at its own time.
    Fixed(u64),
    /// Each port's own: [`WINDOW_FRAMES`] full frames at its line rate, within
    /// [`MIN_WINDOW_NS`]..=[`MAX_WINDOW_NS`], so a window costs a frame the same share of its
    /// port's line time at every rate (a 1 Gb/s port beside a 100 Mb/s one no longer shortens
    /// the slow port's window to the fast one's).
    #[default]
    PerPort,
}

impl BatchWindow {
    /// The window of a port at `rate_bps`.
    pub fn for_rate(self, rate_bps: f64) -> u64 {
        match self {
            BatchWindow::Fixed(ns) => ns,
            BatchWindow::PerPort if rate_bps > 0.0 => {
                let ns = WINDOW_FRAMES as f64 * FULL_FRAME_BITS / rate_bps * 1e9;
                (ns as u64).clamp(MIN_WINDOW_NS, MAX_WINDOW_NS)
            }
            BatchWindow::PerPort => MIN_WINDOW_NS,
        }
    }

    /// The shortest window any port can have.
    pub fn shortest(self) -> u64 {
        match self {
            BatchWindow::Fixed(ns) => ns,
            BatchWindow::PerPort => MIN_WINDOW_NS,
        }
    }

    /// The longest window any port can have.
    pub fn longest(self) -> u64 {
        match self {
            BatchWindow::Fixed(ns) => ns,
            BatchWindow::PerPort => MAX_WINDOW_NS,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_window_is_four_full_frames_at_its_rate_within_the_bounds() {
        let w = BatchWindow::PerPort;
        // four 121.12-us frames at 100 Mb/s
        assert_eq!(w.for_rate(100e6), 484_480);
        // 242 us at 200 Mb/s and 48 us at 1 Gb/s: the floor
        assert_eq!(w.for_rate(200e6), MIN_WINDOW_NS);
        assert_eq!(w.for_rate(1e9), MIN_WINDOW_NS);
        // 4.8 ms at 10 Mb/s: the cap
        assert_eq!(w.for_rate(10e6), MAX_WINDOW_NS);
        assert_eq!(w.for_rate(0.0), MIN_WINDOW_NS);
        assert_eq!((w.shortest(), w.longest()), (MIN_WINDOW_NS, MAX_WINDOW_NS));
    }

    #[test]
    fn a_fixed_window_is_the_same_at_every_rate() {
        let w = BatchWindow::Fixed(100_000);
        assert_eq!(w.for_rate(10e6), 100_000);
        assert_eq!(w.for_rate(1e9), 100_000);
        assert_eq!((w.shortest(), w.longest()), (100_000, 100_000));
        assert_eq!(BatchWindow::Fixed(0).for_rate(1e6), 0);
    }
}

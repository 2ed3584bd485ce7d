//! The top strict class and the loop's wake-ups: a frame of that class leaves before every
//! other class, so within a few frame times, while a loop that batches departures would
//! otherwise send it only at its next turn, up to a batch window later.

use lanes_tm::TmPort;

use super::Dataplane;

/// Packets of the top strict class queued at most for it to be worth an early wake-up (an
/// arrival under [`Dataplane::set_wake_for_top_class`], or one left queued after a turn).
/// Deeper, the class is held by its rate, not by the loop, and waking for it gains nothing.
pub const TOP_CLASS_WAKE_DEPTH: u32 = 8;

/// Whether `tm` has a top strict class holding `want` packets (1..=TOP_CLASS_WAKE_DEPTH).
#[inline]
fn top_class_depth_within(tm: &TmPort<u32>, want: std::ops::RangeInclusive<u32>) -> bool {
    tm.scheduler().has_strict()
        && tm
            .queue_len(tm.num_queues() - 1)
            .is_some_and(|n| want.contains(&n))
}

/// Whether queue `qid` is `tm`'s top strict class and holds at most [`TOP_CLASS_WAKE_DEPTH`]
/// packets.
#[inline]
pub(super) fn near_top_of_top_class(tm: &TmPort<u32>, qid: usize) -> bool {
    qid >= tm.num_queues() - 1 && top_class_depth_within(tm, 0..=TOP_CLASS_WAKE_DEPTH)
}

impl Dataplane {
    /// Whether, after a turn, some port's top strict class still holds a packet (at most
    /// [`TOP_CLASS_WAKE_DEPTH`]), one the turn could not send yet (it came behind another of its
    /// class). The loop wakes a window before the next departure for it, as for a leading
    /// arrival; sleeping to the departure itself sent it up to a window late.
    pub fn top_class_waiting(&self) -> bool {
        self.ports
            .iter()
            .any(|p| top_class_depth_within(&p.tm, 1..=TOP_CLASS_WAKE_DEPTH))
    }
}

//! The one scheduling mechanism every port runs, and each [`Scheduler`] as a setting of it.
//!
//! As Linux's sch_ets: some strict bands above, DRR bands below, and fifo, strict priority and
//! DRR are only settings of the split (port.rs's Algorithm says how a port serves them).

use crate::config::Scheduler;

/// What the highest strict queue does when its rate holds it and no other queue may send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WhenHeld {
    /// It waits for its token bucket (strict, rlsp-drr, and drr, which has no strict queue).
    Wait,
    /// It sends, uncharged: capacity no other queue wanted (rlsp-drr-borrow).
    Borrow,
    /// It sends, charged as any departure (fifo: a rate never holds its one queue back, and the
    /// bucket still counts what it sends, so a change back to a scheduler that holds the rate
    /// finds it spent).
    Send,
}

/// A scheduler as a setting of the strict/DRR split of a port's queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Split {
    /// The highest queue an arrival may go to: a priority above it is clamped to it. The top
    /// queue, or 0 under fifo, whose one queue so takes every packet.
    pub top: usize,
    /// Queues at or above it are strict, the ones below share by DRR.
    pub strict_from: usize,
    /// What a strict queue held by its rate does when nothing else may send.
    pub when_held: WhenHeld,
}

impl Split {
    /// `scheduler` on a port of `n` queues (n >= 1).
    pub fn of(scheduler: Scheduler, n: usize) -> Split {
        let (top, strict_from, when_held) = match scheduler {
            Scheduler::Fifo => (0, 0, WhenHeld::Send),
            Scheduler::Strict => (n - 1, 0, WhenHeld::Wait),
            Scheduler::Drr => (n - 1, n, WhenHeld::Wait),
            Scheduler::RlspDrr => (n - 1, n - 1, WhenHeld::Wait),
            Scheduler::RlspDrrBorrow => (n - 1, n - 1, WhenHeld::Borrow),
        };
        Split {
            top,
            strict_from,
            when_held,
        }
    }

    /// Mask of the queues arrivals may go to.
    pub fn fed_mask(self) -> u32 {
        low_mask(self.top + 1)
    }
}

/// Mask of queue indices below `n`.
pub(crate) fn low_mask(n: usize) -> u32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1u32 << n) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_scheduler_is_a_setting_of_the_split() {
        let of = |s| Split::of(s, 8);
        let split = |top, strict_from, when_held| Split {
            top,
            strict_from,
            when_held,
        };
        assert_eq!(of(Scheduler::Fifo), split(0, 0, WhenHeld::Send));
        assert_eq!(of(Scheduler::Strict), split(7, 0, WhenHeld::Wait));
        assert_eq!(of(Scheduler::Drr), split(7, 8, WhenHeld::Wait));
        assert_eq!(of(Scheduler::RlspDrr), split(7, 7, WhenHeld::Wait));
        assert_eq!(of(Scheduler::RlspDrrBorrow), split(7, 7, WhenHeld::Borrow));
        assert_eq!(of(Scheduler::Fifo).fed_mask(), 1);
        assert_eq!(Split::of(Scheduler::Drr, 32).fed_mask(), u32::MAX);
    }
}

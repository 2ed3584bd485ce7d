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
    /// The DRR queues (below `strict_from`) as a mask; the others are strict.
    pub drr_mask: u32,
    /// The queues whose backlog lets the port send as soon as it is free: the DRR queues, and
    /// every queue when a held strict queue sends anyway (borrow, fifo).
    pub ready_mask: u32,
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
        let drr_mask = low_mask(strict_from);
        Split {
            top,
            strict_from,
            when_held,
            drr_mask,
            ready_mask: if when_held == WhenHeld::Wait {
                drr_mask
            } else {
                u32::MAX
            },
        }
    }

    /// Mask of the queues arrivals may go to.
    pub fn fed_mask(self) -> u32 {
        low_mask(self.top + 1)
    }
}

/// Mask of queue indices below `n`.
fn low_mask(n: usize) -> u32 {
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
        let of = |s| {
            let x = Split::of(s, 8);
            (x.top, x.strict_from, x.when_held, x.drr_mask, x.ready_mask)
        };
        let all = u32::MAX;
        use WhenHeld::*;
        assert_eq!(of(Scheduler::Fifo), (0, 0, Send, 0, all));
        assert_eq!(of(Scheduler::Strict), (7, 0, Wait, 0, 0));
        assert_eq!(of(Scheduler::Drr), (7, 8, Wait, 0xff, 0xff));
        assert_eq!(of(Scheduler::RlspDrr), (7, 7, Wait, 0x7f, 0x7f));
        assert_eq!(of(Scheduler::RlspDrrBorrow), (7, 7, Borrow, 0x7f, all));
        assert_eq!(Split::of(Scheduler::Fifo, 8).fed_mask(), 1);
        assert_eq!(Split::of(Scheduler::Drr, 32).fed_mask(), u32::MAX);
    }
}

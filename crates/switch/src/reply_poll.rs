//! Whether the event loop should look at the receive rings for an answer instead of sleeping,
//! without I/O: the loop (switch.rs) tells it what it sent and took, tests drive it with numbers.
//!
//! On a virtual machine every sleep of the data plane thread costs a wake-up of tens of
//! microseconds when the next frame comes. In a ping-pong through the switch (MPI's small
//! messages, a request and its response) the next frame is the answer of the host the switch
//! has just sent to, and it comes back in tens of microseconds: looking at the rings until then
//! saves the wake-up. Looking after every frame (`--poll-us`) costs a core whenever traffic is
//! sparse, so this looks only where it paid before:
//!
//! Algorithm: per port, remember when the loop last sent there and, at the first frame from
//! that port after it, how long the port took to answer. A port that answered within the
//! longest look (`max_ns`) is looked at after the next frame sent to it, for twice its last
//! answer time (at most `max_ns`); one that took longer is not, until it answers quickly again
//! (learnt while sleeping: the loop still sees when the answer came). Only when nothing is
//! queued anywhere: with a departure due the loop wakes for it anyway, and a saturated port
//! (the CPU targets) never looks.

/// Default longest look, in ns: an answer through one switch on the project's 2-vCPU VM comes
/// back in about 30-60 us (bench/RESULTS.md, "Answers looked for").
pub const DEFAULT_REPLY_POLL_NS: u64 = 100_000;

/// Per receiving port: when the loop last sent there and how long the port took to answer.
#[derive(Clone, Debug)]
pub struct ReplyPoll {
    max_ns: u64,
    /// When the loop last sent to the port and has not taken a frame from it since.
    sent_at: Vec<Option<u64>>,
    /// How long the port took to answer its last frame, if within `max_ns`.
    answer_ns: Vec<Option<u64>>,
}

impl ReplyPoll {
    /// For `ports` ports, looking at most `max_ns` for an answer (0: never).
    pub fn new(ports: usize, max_ns: u64) -> Self {
        ReplyPoll {
            max_ns,
            sent_at: vec![None; ports],
            answer_ns: vec![None; ports],
        }
    }

    /// The loop sent frames to port `i` at `now`.
    pub fn note_sent(&mut self, i: usize, now: u64) {
        self.sent_at[i] = Some(now);
    }

    /// The loop took a frame from port `i` at `now` (the first of a turn is enough).
    pub fn note_taken(&mut self, i: usize, now: u64) {
        if let Some(sent) = self.sent_at[i].take() {
            let took = now.saturating_sub(sent);
            self.answer_ns[i] = (took <= self.max_ns).then_some(took);
        }
    }

    /// Until when the loop should look at the rings at `now` for an answer (None: sleep).
    /// `next_departure` is the next frame due: with one, nothing is looked for.
    pub fn poll_until(&self, now: u64, next_departure: Option<u64>) -> Option<u64> {
        if next_departure.is_some() || self.max_ns == 0 {
            return None;
        }
        self.sent_at
            .iter()
            .zip(&self.answer_ns)
            .filter_map(|(sent, answer)| {
                Some(sent.as_ref()? + (2 * answer.as_ref()?).min(self.max_ns))
            })
            .max()
            .filter(|&end| end > now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_that_answered_quickly_is_looked_at_for_twice_its_answer_time() {
        let mut p = ReplyPoll::new(2, 100_000);
        p.note_sent(1, 0);
        assert_eq!(p.poll_until(1_000, None), None, "no answer seen yet: sleep");
        p.note_taken(1, 30_000);
        p.note_sent(1, 200_000);
        assert_eq!(p.poll_until(201_000, None), Some(260_000));
        assert_eq!(p.poll_until(260_000, None), None, "looked long enough");
        assert_eq!(
            p.poll_until(201_000, Some(500_000)),
            None,
            "a departure is due: the loop wakes for it anyway"
        );
    }

    #[test]
    fn the_look_is_capped_and_a_slow_answer_stops_it_until_a_quick_one() {
        let mut p = ReplyPoll::new(1, 100_000);
        p.note_sent(0, 0);
        p.note_taken(0, 80_000);
        p.note_sent(0, 1_000_000);
        assert_eq!(
            p.poll_until(1_000_001, None),
            Some(1_100_000),
            "capped at the longest look"
        );
        p.note_taken(0, 1_900_000);
        p.note_sent(0, 2_000_000);
        assert_eq!(p.poll_until(2_000_001, None), None, "answered late: sleep");
        p.note_taken(0, 2_040_000);
        p.note_sent(0, 3_000_000);
        assert_eq!(
            p.poll_until(3_000_001, None),
            Some(3_080_000),
            "quick again: look"
        );
    }

    #[test]
    fn a_frame_without_a_send_before_it_teaches_nothing_and_zero_turns_it_off() {
        let mut p = ReplyPoll::new(1, 100_000);
        p.note_taken(0, 10_000);
        p.note_sent(0, 20_000);
        assert_eq!(p.poll_until(20_001, None), None);
        let mut off = ReplyPoll::new(1, 0);
        off.note_sent(0, 0);
        off.note_taken(0, 0);
        off.note_sent(0, 10);
        assert_eq!(off.poll_until(11, None), None);
    }
}

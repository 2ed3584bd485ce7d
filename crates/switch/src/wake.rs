//! When the data plane thread sleeps and which arrivals may wake it, without I/O: the event
//! loop (switch.rs) asks this, and tests drive it in virtual time.
//!
//! A frame queued behind others at its egress port cannot leave before that port's next
//! departure, and the loop is awake then anyway: waking for its arrival would cost a wake-up and
//! gain nothing. A frame that leads its port (nothing queued there, or it is the only packet of
//! the highest strict class) leaves as soon as the port is free, and the loop sends what is due
//! within its batch window at once: its arrival should wake the loop however close another
//! departure is. The loop cannot see where a frame goes before it runs ingress, so it judges
//! each receiving port by its last frames: a port whose frames wait behind others is not
//! listened to while a departure is near (they are read at that departure), one whose frames
//! lead always is.

/// While a frame is due within this long plus the batch window (a turn sends the window's frames
/// early, so the next departure is that much farther off), only listened ports' arrivals and
/// control wake the loop; farther off, every arrival does. It bounds how long an arrival the
/// policy misjudged waits.
pub const NEAR_NS: u64 = 200_000;

/// Frames in a row from one receiving port that waited behind others before the loop stops
/// listening to it while a departure is near. One leading frame starts listening again.
const BUSY_STREAK: u8 = 4;

/// How the loop is to wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sleep {
    /// Longest wait in ns (None: until something wakes it; Some(0): only look).
    pub timeout_ns: Option<u64>,
    /// Whether every receiving port's arrivals wake it, or only the listened ones'.
    pub all_ports: bool,
}

/// Which receiving ports the loop listens to while a departure is near, and when it wakes for
/// a departure. It wakes when the next frame is due and sends what is due within the batch
/// window after it, so a busy port costs one wake-up per window; but after a turn that took a
/// leading frame and could not send it yet, it wakes a window before the next departure: that
/// frame leaves at most the window before its port frees (the frames already sent then fill the
/// port's line time up to there), never a window after it.
#[derive(Clone, Debug)]
pub struct WakePolicy {
    near_ns: u64,
    batch_ns: u64,
    listened: Vec<bool>,
    busy_streak: Vec<u8>,
    leading_waiting: bool,
    /// When the loop is to wake for a leading frame left queued (a window before its departure).
    early_wake: Option<u64>,
    /// How long the loop keeps looking at the rings after its last frame before it sleeps.
    poll_ns: u64,
    last_frame_ns: Option<u64>,
}

impl WakePolicy {
    /// A policy for `ports` receiving ports, all listened to until their traffic says
    /// otherwise; a departure within `NEAR_NS + batch_ns` counts as near.
    pub fn new(ports: usize, batch_ns: u64) -> Self {
        WakePolicy {
            near_ns: NEAR_NS + batch_ns,
            batch_ns,
            listened: vec![true; ports],
            busy_streak: vec![0; ports],
            leading_waiting: false,
            early_wake: None,
            poll_ns: 0,
            last_frame_ns: None,
        }
    }

    /// Ports' batch windows differ (`BatchWindow::PerPort`): a departure within `NEAR_NS` plus
    /// the longest counts as near (after a turn of the longest window the next departure is that
    /// far off; judged by a shorter one, every arrival would wake the loop). The early wake-up
    /// follows the window of the port that sends next ([`WakePolicy::set_window`]).
    pub fn with_longest_window(mut self, longest_ns: u64) -> Self {
        self.near_ns = NEAR_NS + longest_ns.max(self.batch_ns);
        self
    }

    /// The batch window of the port whose departure is next, before [`WakePolicy::sleep`]: a
    /// leading frame taken is to leave a whole window of its port early, as the frames sent
    /// ahead of it in the last turn did (woken only the shortest window early, it waits for
    /// them: at 100 Mb/s beside 1 Gb/s ports up to 355 us, in virtual time).
    pub fn set_window(&mut self, ns: u64) {
        self.batch_ns = ns;
    }

    /// Keep looking at the receive rings for `poll_ns` after the last frame taken or sent
    /// before sleeping (0: never). A reply that comes back within it is taken without a
    /// wake-up, which on a VM costs tens of microseconds; it costs a core while it looks.
    pub fn with_poll(mut self, poll_ns: u64) -> Self {
        self.poll_ns = poll_ns;
        self
    }

    /// The loop took or sent a frame at `now`.
    pub fn note_activity(&mut self, now: u64) {
        self.last_frame_ns = Some(now);
    }

    /// Until when the loop should look at the rings instead of sleeping, at `now`: the end of
    /// the poll time after the last frame, but no later than the next departure (the loop is
    /// due then anyway). None: sleep.
    pub fn poll_until(&self, now: u64, next_departure: Option<u64>) -> Option<u64> {
        let end = self.last_frame_ns?.checked_add(self.poll_ns)?;
        let end = next_departure.map_or(end, |d| d.min(end));
        (self.poll_ns > 0 && end > now).then_some(end)
    }

    /// How to wait at `now`, given the next departure and whether receive rings still hold
    /// frames the last turn had no room to take. Called once per turn, before the wait.
    pub fn sleep(&mut self, now: u64, next_departure: Option<u64>, more_rx: bool) -> Sleep {
        // A leading frame left queued: wake a window before the departure it waits for. The early
        // wake stays due until it comes, even if other arrivals wake the loop before it: a
        // one-shot flag spent on such a wake-up left the frame to wait a whole window more
        // (a chained ping-pong, whose answers arrive within a window, paid that every time).
        let fresh = std::mem::take(&mut self.leading_waiting);
        if let (true, Some(d)) = (fresh, next_departure) {
            let at = d.saturating_sub(self.batch_ns);
            self.early_wake = Some(self.early_wake.map_or(at, |e| e.min(at)));
        }
        let early = match self.early_wake {
            Some(at) if now < at => self.batch_ns,
            // due within the window already: send at once (taken just now) or sent this turn
            Some(_) if fresh => {
                self.early_wake = None;
                self.batch_ns
            }
            _ => {
                self.early_wake = None;
                0
            }
        };
        if more_rx {
            return Sleep {
                timeout_ns: Some(0),
                all_ports: true,
            };
        }
        match next_departure.map(|d| d.saturating_sub(early).saturating_sub(now)) {
            Some(t) if t > 0 && t <= self.near_ns => Sleep {
                timeout_ns: Some(t),
                all_ports: false,
            },
            timeout_ns => Sleep {
                timeout_ns,
                all_ports: true,
            },
        }
    }

    /// After a turn, a leading frame it took is still queued (`Dataplane::leading_left_queued`)
    /// or a frame of a port's top strict class is (`Dataplane::top_class_waiting`): wake a
    /// window before the next departure, not at the departure itself. A leading frame the turn
    /// sent needs nothing more.
    pub fn note_leading_waiting(&mut self) {
        self.leading_waiting = true;
    }

    /// Whether receiving port `i`'s arrivals wake the loop while a departure is near.
    pub fn listened(&self, i: usize) -> bool {
        self.listened[i]
    }

    /// A frame from receiving port `i` leads its port's queues (`leads`) or not (queued behind
    /// others, or dropped): whether the port's next arrivals are worth a wake-up. Returns the
    /// port's new listened state if it changed.
    pub fn note_frame(&mut self, i: usize, leads: bool) -> Option<bool> {
        let was = self.listened[i];
        if leads {
            self.busy_streak[i] = 0;
            self.listened[i] = true;
        } else {
            self.busy_streak[i] = self.busy_streak[i].saturating_add(1);
            if self.busy_streak[i] >= BUSY_STREAK {
                self.listened[i] = false;
            }
        }
        (self.listened[i] != was).then_some(self.listened[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_near_departure_listens_to_listened_ports_only() {
        let mut p = WakePolicy::new(2, 100_000);
        let s = p.sleep(1_000, Some(101_000), false);
        assert_eq!(s.timeout_ns, Some(100_000));
        assert!(!s.all_ports);
        let far = p.sleep(1_000, Some(400_000), false);
        assert!(far.all_ports);
        assert_eq!(p.sleep(1_000, None, false).timeout_ns, None);
        assert_eq!(p.sleep(1_000, Some(101_000), true).timeout_ns, Some(0));
    }

    #[test]
    fn after_a_leading_frame_left_queued_the_loop_wakes_a_window_early_even_if_woken_before() {
        let mut p = WakePolicy::new(1, 100_000);
        p.note_leading_waiting();
        assert_eq!(
            p.sleep(1_000, Some(201_000), false).timeout_ns,
            Some(100_000)
        );
        // another arrival woke the loop first: the early wake is still due at 101_000
        assert_eq!(
            p.sleep(50_000, Some(201_000), false).timeout_ns,
            Some(51_000)
        );
        // it came (the frame left then): the next sleep is to the next departure itself
        assert_eq!(
            p.sleep(101_000, Some(201_000), false).timeout_ns,
            Some(100_000)
        );
        p.note_leading_waiting();
        let due = p.sleep(1_000, Some(90_000), false);
        assert_eq!(due.timeout_ns, Some(0), "due within the window: send now");
    }

    #[test]
    fn a_top_class_frame_left_queued_wakes_the_loop_a_window_early() {
        let mut p = WakePolicy::new(1, 100_000);
        assert_eq!(
            p.sleep(1_000, Some(301_000), false).timeout_ns,
            Some(300_000)
        );
        p.note_leading_waiting();
        assert_eq!(
            p.sleep(1_000, Some(301_000), false).timeout_ns,
            Some(200_000)
        );
    }

    #[test]
    fn a_leading_frame_the_turn_sent_leaves_the_next_wake_at_the_departure() {
        let mut p = WakePolicy::new(1, 100_000);
        p.note_frame(0, true);
        assert_eq!(
            p.sleep(1_000, Some(301_000), false).timeout_ns,
            Some(300_000)
        );
    }

    #[test]
    fn the_loop_polls_for_the_poll_time_after_its_last_frame_and_not_past_a_departure() {
        let mut p = WakePolicy::new(1, 0).with_poll(50_000);
        assert_eq!(p.poll_until(1_000, None), None, "no frame yet: sleep");
        p.note_activity(10_000);
        assert_eq!(p.poll_until(20_000, None), Some(60_000));
        assert_eq!(p.poll_until(20_000, Some(30_000)), Some(30_000));
        assert_eq!(
            p.poll_until(60_000, None),
            None,
            "quiet for the poll time: sleep"
        );
        let mut off = WakePolicy::new(1, 0);
        off.note_activity(10_000);
        assert_eq!(off.poll_until(10_001, None), None, "poll time 0: never");
    }

    #[test]
    fn a_port_whose_frames_wait_is_dropped_after_a_streak_and_one_leading_frame_restores_it() {
        let mut p = WakePolicy::new(1, 0);
        for _ in 0..BUSY_STREAK - 1 {
            assert_eq!(p.note_frame(0, false), None);
        }
        assert_eq!(p.note_frame(0, false), Some(false));
        assert!(!p.listened(0));
        assert_eq!(p.note_frame(0, true), Some(true));
        assert!(p.listened(0));
    }
}

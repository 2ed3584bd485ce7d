//! Leading frames the loop took, and whether one is still queued after the turn. A frame that
//! leads its port wakes the loop on arrival; the turn sends it at once if the frames sent ahead
//! leave it room within the batch window. Only one the turn could not send needs the loop
//! back a window before its departure: waking early after every leading frame cost a dense high
//! class a second turn per frame (a 200 Mb/s port half full of high frames: one wake-up per
//! frame for the arrival and one more about a frame time later, which sent one low frame).

use super::Dataplane;

impl Dataplane {
    /// Whether a queue that received a leading frame since the last call still holds packets
    /// (the frame, or others behind it, after the turn's departures). Forgets those frames.
    pub fn leading_left_queued(&mut self) -> bool {
        let mut left = false;
        for p in self.ports.iter_mut().filter(|p| p.leading_taken != 0) {
            let taken = std::mem::take(&mut p.leading_taken);
            left |= (0..32u32)
                .filter(|q| taken & (1 << q) != 0)
                .any(|q| p.tm.queue_len(q as usize).is_some_and(|n| n > 0));
        }
        left
    }
}

//! The active list of deficit round robin: a fixed ring of queue indices, O(1) per operation.

use crate::MAX_QUEUES;

pub(crate) struct ActiveList {
    ring: [u8; MAX_QUEUES],
    head: usize,
    len: usize,
    /// The front queue has not yet received its quantum in this round.
    pub front_fresh: bool,
}

impl ActiveList {
    pub fn new() -> Self {
        ActiveList {
            ring: [0; MAX_QUEUES],
            head: 0,
            len: 0,
            front_fresh: true,
        }
    }

    pub fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
        self.front_fresh = true;
    }

    pub fn front(&self) -> Option<usize> {
        (self.len > 0).then(|| usize::from(self.ring[self.head]))
    }

    pub fn push_back(&mut self, q: usize) {
        debug_assert!(self.len < MAX_QUEUES);
        self.ring[(self.head + self.len) % MAX_QUEUES] = q as u8;
        self.len += 1;
    }

    pub fn pop_front(&mut self) {
        debug_assert!(self.len > 0);
        self.head = (self.head + 1) % MAX_QUEUES;
        self.len -= 1;
        self.front_fresh = true;
    }

    /// The front queue's turn is over: it goes to the back of the round.
    pub fn rotate(&mut self) {
        let q = self.ring[self.head];
        self.pop_front();
        self.push_back(usize::from(q));
    }
}

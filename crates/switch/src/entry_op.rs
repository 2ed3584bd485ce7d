//! What a P4Runtime-style write does to an entity kept by id (a clone session, a multicast
//! group): each refuses an insert of one that exists and a change of one that does not.

/// The three updates of a P4Runtime write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryOp {
    /// Add one that must not exist yet (ALREADY_EXISTS otherwise).
    Insert,
    /// Replace one that must exist (NOT_FOUND otherwise).
    Modify,
    /// Remove one that must exist (NOT_FOUND otherwise).
    Delete,
}

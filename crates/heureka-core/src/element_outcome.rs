//! What one element of a peer's replication batch did, and the status code that says so in
//! the batch's answer: the one mapping both ends use, the handler that answers a batch and the
//! dispatcher that reads the answers back, so the two cannot drift apart.
//!
//! A Java peer's batch (`peerreplication/batch`) answers each element with the code its own
//! endpoint would give; a Heureka peer's stamped batch answers with what the sender must do
//! next. Both speak these codes, and the wire carries the bare number.

use crate::stamped_copy::{StampedCopy, StampedRenewal};

/// One element's outcome, as the receiver answers it and the sender reads it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElementOutcome {
    /// 200 (any 2xx read back): applied, or nothing to do, both copies holding the same writes.
    Done,
    /// 404: the receiver lacks the instance, or writes the sender holds: send your copy (a Java
    /// peer's answer to a heartbeat or a cancel of an instance it does not hold).
    SendYours,
    /// 409: the receiver holds writes the sender lacks, and sends its copy with the answer:
    /// take it (a cancel among them).
    TakeOurs,
    /// 400: refused, the rest of the batch going through: unreadable (stamped), a time too far
    /// ahead of the receiver's clock, or over `heureka.limits.*`. Senders do not retry it.
    Refused,
    /// 403: a new instance while the receiver holds `heureka.limits.max-instances`.
    Full,
    /// 500: failed, as Eureka fails an element it cannot read or apply.
    Failed,
}

impl ElementOutcome {
    /// The status code this outcome is answered with.
    pub fn status(self) -> u16 {
        match self {
            ElementOutcome::Done => 200,
            ElementOutcome::SendYours => 404,
            ElementOutcome::TakeOurs => 409,
            ElementOutcome::Refused => 400,
            ElementOutcome::Full => 403,
            ElementOutcome::Failed => 500,
        }
    }

    /// The outcome a peer's answer names; `None` for a code no receiver answers an element
    /// with (the sender logs it as refused).
    pub fn from_status(status: u16) -> Option<ElementOutcome> {
        match status {
            200..=299 => Some(ElementOutcome::Done),
            404 => Some(ElementOutcome::SendYours),
            409 => Some(ElementOutcome::TakeOurs),
            400 => Some(ElementOutcome::Refused),
            403 => Some(ElementOutcome::Full),
            500 => Some(ElementOutcome::Failed),
            _ => None,
        }
    }
}

impl StampedRenewal {
    /// The answer to a peer's stamped heartbeat: its outcome, with our copy on a 409.
    pub fn into_answer(self) -> (ElementOutcome, Option<StampedCopy>) {
        match self {
            StampedRenewal::Renewed => (ElementOutcome::Done, None),
            StampedRenewal::SendYours => (ElementOutcome::SendYours, None),
            StampedRenewal::TakeOurs(ours) => (ElementOutcome::TakeOurs, Some(*ours)),
        }
    }
}

#[cfg(test)]
mod tests;

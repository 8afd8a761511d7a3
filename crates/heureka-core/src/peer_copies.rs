//! Two servers' copies of one instance: which is newer, and what taking a peer's copy does to
//! our status override. Anti-entropy (the server's `replication/anti_entropy.rs`) compares
//! digests with these rules, and `Registry::adopt_peer_copy` and `Registry::repair_from_peer`
//! (`adopt.rs`) adopt with them, so that a change to how peers agree (say, causal order
//! instead of timestamps) is made here and nowhere else.

use crate::instance_digest::InstanceDigest;
use crate::model::{InstanceStatus, Millis};

/// Whether `a` holds the later version of the instance: the greater `lastDirtyTimestamp`, as
/// register decides, then the later change (`lastUpdatedTimestamp`, each server's own clock:
/// clocks that disagree by more than the time between two conflicting writes can pick the
/// older copy).
pub fn is_newer(a: &InstanceDigest, b: &InstanceDigest) -> bool {
    (a.last_dirty_timestamp, a.last_updated_timestamp)
        > (b.last_dirty_timestamp, b.last_updated_timestamp)
}

/// Whether two copies agree on everything a repair would carry: status, override and the
/// client's version. Renewals and this server's change times are left out.
pub fn same_state(a: &InstanceDigest, b: &InstanceDigest) -> bool {
    a.status == b.status
        && a.overridden_status == b.overridden_status
        && a.last_dirty_timestamp == b.last_dirty_timestamp
}

/// Whether a live copy was changed after `at` (a removal's time), or, where its renewals can
/// be trusted (`renewals_count`), renewed after it: such a copy outlives the removal.
pub fn touched_since(copy: &InstanceDigest, at: Millis, renewals_count: bool) -> bool {
    copy.last_updated_timestamp > at || (renewals_count && copy.last_renewal_timestamp > at)
}

/// What a peer's copy without an override says about ours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerOverrideAbsence {
    /// Nothing: ours stays. A heartbeat's 409 answer, where the peer may simply not have heard
    /// of our override yet (Eureka's `syncWhenTimestampDiffers`).
    KeepsOurs,
    /// That there is none: ours goes. Anti-entropy's repair, which takes the peer's newer
    /// state as a whole.
    RemovesOurs,
}

/// What adopting a peer's copy does to the status override in force here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverrideAdoption {
    /// The peer's override is stored (again, if it is ours too), so the register that follows
    /// honours it.
    Take(InstanceStatus),
    /// Ours is removed, the instance taking the peer's status.
    Remove,
    /// Ours, or the absence of one, stays.
    Keep,
}

/// The override rule of adoption: the peer's override wins when it has one; when it has none,
/// `absence` says whether ours goes. `UNKNOWN` means no override, on either side.
pub fn adopted_override(
    theirs: InstanceStatus,
    ours: InstanceStatus,
    absence: PeerOverrideAbsence,
) -> OverrideAdoption {
    match theirs {
        InstanceStatus::Unknown
            if ours != InstanceStatus::Unknown && absence == PeerOverrideAbsence::RemovesOurs =>
        {
            OverrideAdoption::Remove
        }
        InstanceStatus::Unknown => OverrideAdoption::Keep,
        theirs => OverrideAdoption::Take(theirs),
    }
}

#[cfg(test)]
mod tests;

//! One instance as a registry digest lists it (`digest.rs`): what anti-entropy compares between
//! two servers to tell who is newer (`peer_copies.rs`, `anti_entropy.rs`), without the
//! instance itself.

use crate::merge::PartStamps;
use crate::model::{InstanceStatus, Millis};

/// One instance as a digest lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstanceDigest {
    /// Upper-cased, as the registry keys it.
    pub app: String,
    pub id: String,
    pub status: InstanceStatus,
    /// `UNKNOWN` when no override is in force.
    pub overridden_status: InstanceStatus,
    /// The client's version of the instance's data, the timestamp register and renew compare.
    pub last_dirty_timestamp: Millis,
    /// When this server last changed the instance (for a tombstone: when it removed it).
    pub last_updated_timestamp: Millis,
    /// The lease's last renewal, as readers see it in `leaseInfo.lastRenewalTimestamp`.
    pub last_renewal_timestamp: Millis,
    /// A tombstone: the instance was cancelled or evicted and has not registered again. Its
    /// other fields are those of the instance as it was removed.
    pub removed: bool,
    /// The stamps of the writes to its parts (`merge.rs`), as `Registry::stamped_copy` (`stamped.rs`)
    /// has them: a lease's, or for a tombstone those its removal left (a cancel's stamp included).
    /// `None` when unknown: a peer's digest without them (an older Heureka, or a Java peer's
    /// registry read as a digest).
    pub stamps: Option<PartStamps>,
}

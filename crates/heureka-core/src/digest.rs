//! The registry digest: one small record per instance, for anti-entropy between Heureka peers.
//!
//! Replication is best effort (a batch can be dropped, a peer can restart), so peers
//! periodically compare digests and repair what differs. A digest carries what a comparison
//! needs to decide who is newer (status, override, the three timestamps, and the stamps of the
//! instance's parts that Heureka's causal replication merges by, `merge.rs`), not the instance
//! itself. Besides every lease it lists *tombstones*: instances whose latest delta-queue item
//! is a removal. They let a peer tell "you removed it" from "you never had it", for as long as
//! the delta queue remembers the removal (`retention-time-in-m-s-in-delta-queue`).
//!
//! This is Heureka's own exchange; Java peers are compared through their full `GET /apps`.

use crate::delta::DeltaEntry;
use crate::lease::Lease;
use crate::merge::PartStamps;
use crate::model::{InstanceStatus, Millis};
use crate::registry::Registry;

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
    /// The stamps of the writes to its parts (`merge.rs`), as [`Registry::stamped_copy`] has
    /// them: a lease's, or for a tombstone those its removal left (a cancel's stamp included).
    /// `None` when unknown: a peer's digest without them (an older Heureka, or a Java peer's
    /// registry read as a digest), or a tombstone the delta queue remembers but whose stamps
    /// this server no longer keeps (`tombstones.rs`).
    pub stamps: Option<PartStamps>,
}

impl Registry {
    /// Every lease (expired-not-evicted ones included, as in the full registry) and every
    /// tombstone still in the delta queue, sorted by app, then id.
    pub fn digest(&self) -> Vec<InstanceDigest> {
        let live = self
            .apps
            .values()
            .flat_map(|leases| leases.values())
            .map(|lease| instance_digest(lease, false, Some(lease.holder.stamps)));
        let tombstones = self
            .recently_changed
            .latest()
            // Every register queues a live item, so a removal is never the latest item of a
            // lease; checked anyway, so that a tombstone can never contradict a lease.
            .filter(|item| !self.is_registered(&item.app, &item.id))
            .filter_map(|item| match &item.entry {
                DeltaEntry::Deleted(lease) => {
                    // The removed lease's holder lacks the cancel's stamp; the tombstone has it.
                    let stamps = self
                        .tombstones
                        .get(&item.app, &item.id)
                        .map(|tombstone| tombstone.parts.stamps);
                    Some(instance_digest(lease, true, stamps))
                }
                DeltaEntry::Live => None,
            });
        let mut digest: Vec<InstanceDigest> = live.chain(tombstones).collect();
        digest.sort_unstable_by(|a, b| (&a.app, &a.id).cmp(&(&b.app, &b.id)));
        digest
    }

    /// Whether a lease exists for `app` (already upper-cased) and `id`, expired or not.
    fn is_registered(&self, app: &str, id: &str) -> bool {
        self.apps
            .get(app)
            .is_some_and(|leases| leases.contains_key(id))
    }
}

fn instance_digest(lease: &Lease, removed: bool, stamps: Option<PartStamps>) -> InstanceDigest {
    let holder = &lease.holder;
    InstanceDigest {
        app: holder.app.to_string(),
        id: holder.id().to_owned(),
        status: holder.status,
        overridden_status: holder.overridden_status,
        last_dirty_timestamp: holder.last_dirty_timestamp,
        last_updated_timestamp: holder.last_updated_timestamp,
        last_renewal_timestamp: lease.lease_info().last_renewal_timestamp,
        removed,
        stamps,
    }
}

#[cfg(test)]
mod tests;

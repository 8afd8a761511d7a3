//! The registry digest: one small record per instance, for anti-entropy between Heureka peers.
//!
//! Replication is best effort (a batch can be dropped, a peer can restart), so peers
//! periodically compare digests and repair what differs. A digest carries what a comparison
//! needs to decide who is newer (status, override, the three timestamps, and the stamps of the
//! instance's parts that Heureka's causal replication merges by, `merge.rs`), not the instance
//! itself. Besides every lease it lists *tombstones*: removed instances the registry still keeps
//! (`tombstones.rs`, for `heureka.replication.tombstone-retention-ms`). They let a peer tell
//! "you removed it" from "you never had it".
//!
//! This is Heureka's own exchange; Java peers are compared through their full `GET /apps`.

use crate::instance_digest::InstanceDigest;
use crate::lease::Lease;
use crate::model::InstanceStatus;
use crate::registry::Registry;
use crate::tombstones::{Removal, Tombstone};

impl Registry {
    /// Every lease (expired-not-evicted ones included, as in the full registry) and every
    /// tombstone still kept (`tombstones.rs`), sorted by app, then id.
    pub fn digest(&self) -> Vec<InstanceDigest> {
        let live = self
            .apps
            .values()
            .flat_map(|leases| leases.values())
            .map(lease_digest);
        let tombstones = self
            .tombstones
            .iter()
            // A registration removes its tombstone; checked anyway, so that a tombstone can
            // never contradict a lease.
            .filter(|((app, id), _)| !self.is_registered(app, id))
            .map(|((app, id), tombstone)| tombstone_digest(app, id, tombstone));
        let mut digest: Vec<InstanceDigest> = live.chain(tombstones).collect();
        digest.sort_unstable_by(|a, b| (&a.app, &a.id).cmp(&(&b.app, &b.id)));
        digest
    }
}

fn lease_digest(lease: &Lease) -> InstanceDigest {
    let holder = &lease.holder;
    InstanceDigest {
        app: holder.app.to_string(),
        id: holder.id().to_owned(),
        status: holder.status,
        overridden_status: holder.overridden_status,
        last_dirty_timestamp: holder.last_dirty_timestamp,
        last_updated_timestamp: holder.last_updated_timestamp,
        // A restored lease not renewed since is no renewal a peer should adopt (`persisted.rs`).
        last_renewal_timestamp: match lease.is_restored_unrenewed() {
            true => 0,
            false => lease.lease_info().last_renewal_timestamp,
        },
        removed: false,
        stamps: Some(holder.stamps),
    }
}

/// A removed instance as it was when it went; for an eviction, renewed last when its lease
/// did, for a cancel, at the cancel.
fn tombstone_digest(app: &str, id: &str, tombstone: &Tombstone) -> InstanceDigest {
    let parts = &tombstone.parts;
    let registration = parts.registration.as_ref();
    InstanceDigest {
        app: app.to_owned(),
        id: id.to_owned(),
        status: parts.status(),
        overridden_status: parts.overridden.unwrap_or(InstanceStatus::Unknown),
        last_dirty_timestamp: registration.map_or(0, |r| r.last_dirty_timestamp),
        last_updated_timestamp: tombstone.at,
        last_renewal_timestamp: match tombstone.removal {
            Removal::Evicted { last_renewal } => last_renewal,
            Removal::Cancelled => tombstone.at,
        },
        removed: true,
        stamps: Some(parts.stamps),
    }
}

#[cfg(test)]
mod tests;

//! What a node keeps of its registry on disk (the server's `persistence.rs`,
//! `heureka.persistence.*`), and putting it back when the node starts again.
//!
//! A kept instance is its stamped copy (the five parts and their stamps, as replication sends
//! them) and what its lease or its removal held besides. Keeping the stamps is what makes a
//! restart safe in a cluster: what a node restores is merged with its peers' copies by the
//! same rules as any copy (`merge.rs`), so a node that was down while an instance was
//! cancelled or its override removed elsewhere cannot bring either back.
//!
//! Heartbeats are not kept (writing each would cost a disk write per heartbeat): a restored
//! lease counts as renewed at the restore, and lives at least a renewal interval and a margin
//! (`RESTORE_MARGIN_MS`, `lease.rs`), long enough for a live instance to heartbeat again.
//! Until one of its heartbeats arrives (from the client or a peer) a restored lease is no
//! evidence that the instance lives: it revives nothing elsewhere (`stamped.rs`, `digest.rs`),
//! since the node may have been down long enough for its peers to forget a cancel.
//!
//! Restoring records no change: no delta item, nothing to replicate, no event. Clients that
//! held the registry before the restart hold the same one after it (the same `apps__hashcode`),
//! so an empty delta is the truth for them.

use crate::lease::{parts_of, Lease};
use crate::model::Millis;
use crate::registry::{app_key, Registry};
use crate::stamped_copy::StampedCopy;
use crate::stored::{Name, StoredInstance};
use crate::tombstones::{Removal, Tombstone};

/// One instance as a node keeps it on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeptInstance {
    /// The parts and their stamps; `leased` is whether a lease was held.
    pub copy: StampedCopy,
    pub kept: Kept,
}

/// What a kept instance held besides its parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kept {
    /// A lease, with the timestamps readers see that a restore does not reset.
    Lease {
        registration_timestamp: Millis,
        service_up_timestamp: Millis,
    },
    /// A removal, and when this node made it (for the tombstone's retention).
    Removed { removal: Removal, at: Millis },
}

/// What restoring one kept instance did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restored {
    /// A lease, renewed as of the restore.
    Lease,
    /// A removal, kept as a tombstone for what is left of its retention.
    Tombstone,
    /// A removal older than the tombstone retention: forgotten.
    Expired,
    /// Not taken, and why (a record the registry would not accept from a peer either).
    Refused(&'static str),
}

impl Registry {
    /// What this node keeps of an instance: its lease (expired or not) or its tombstone;
    /// `None` when it holds neither any more.
    pub fn kept(&self, app: &str, id: &str) -> Option<KeptInstance> {
        let app = app_key(app);
        if let Some(lease) = self.lease(&app, id) {
            let info = lease.lease_info();
            return Some(KeptInstance {
                copy: StampedCopy {
                    app: app.into_owned(),
                    id: id.to_owned(),
                    parts: parts_of(lease),
                    leased: true,
                },
                kept: Kept::Lease {
                    registration_timestamp: info.registration_timestamp,
                    service_up_timestamp: info.service_up_timestamp,
                },
            });
        }
        let tombstone = self.tombstones.get(&app, id)?;
        Some(KeptInstance {
            copy: StampedCopy {
                app: app.into_owned(),
                id: id.to_owned(),
                parts: tombstone.parts.clone(),
                leased: false,
            },
            kept: Kept::Removed {
                removal: tombstone.removal,
                at: tombstone.at,
            },
        })
    }

    /// Everything this node would keep: every lease and every tombstone (a rebuilt store's
    /// contents).
    pub fn kept_all(&self) -> Vec<KeptInstance> {
        let leases = self.apps.iter().flat_map(|(app, leases)| {
            leases
                .iter()
                .map(move |(id, _)| (app.as_ref(), id.as_ref()))
        });
        let removed = self
            .tombstones
            .iter()
            .map(|((app, id), _)| (app.as_str(), id.as_str()));
        leases
            .chain(removed)
            .filter_map(|(app, id)| self.kept(app, id))
            .collect()
    }

    /// Puts a kept instance back, before the node serves anything: call it on a registry
    /// that holds nothing of the instance yet (a later record of the same instance replaces
    /// an earlier one). Records no change (see the module's comment).
    pub fn restore(&mut self, kept: KeptInstance, now: Millis) -> Restored {
        let KeptInstance { copy, kept } = kept;
        if self.clock.observe(copy.parts.stamps.latest(), now).is_err() {
            return Restored::Refused("stamped more than 5 minutes ahead of this clock");
        }
        if !self.policy.limits.admits_copy(&copy) {
            return Restored::Refused("over this node's limits (heureka.limits.*)");
        }
        let app = app_key(&copy.app).into_owned();
        match kept {
            Kept::Removed { removal, at } => {
                if now - at > self.policy.tombstone_retention_ms {
                    return Restored::Expired;
                }
                let tombstone = Tombstone {
                    parts: copy.parts,
                    removal,
                    at,
                };
                self.tombstones.insert(&app, &copy.id, tombstone);
                Restored::Tombstone
            }
            Kept::Lease {
                registration_timestamp,
                service_up_timestamp,
            } => {
                if !copy.parts.is_live() {
                    return Restored::Refused("a lease without a live registration");
                }
                let parts = copy.parts;
                let limits = &self.policy.limits;
                let holder = StoredInstance::from_live_parts(&app, &parts, limits, &mut self.names);
                if let Some(status) = parts.overridden {
                    self.overrides.insert(&copy.id, status, now);
                }
                let status = holder.status;
                let lease = Lease::restored(
                    holder,
                    self.policy.lease_expiry,
                    (registration_timestamp, service_up_timestamp),
                    now,
                );
                let holder_app = Name::clone(&lease.holder.app);
                let leases = self.leases_of(&app, holder_app);
                let before = leases
                    .remove_entry(copy.id.as_str())
                    .map(|(_, old)| old.holder.status);
                leases.insert(Name::from(copy.id.as_str()), lease);
                self.tombstones.remove(&app, &copy.id);
                self.statuses.changed(before, Some(status));
                let names = &mut self.names;
                self.versions
                    .app_changed(&app, before.is_some(), true, || names.intern(&app));
                Restored::Lease
            }
        }
    }
}

#[cfg(test)]
mod tests;

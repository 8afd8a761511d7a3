//! Replication between Heureka servers: stamped copies of instances, and what receiving one
//! does here (the copies themselves are `stamped_copy.rs`'s types).
//!
//! A Heureka peer sends, with every replicated write, its whole copy of the instance's parts
//! and their stamps ([`StampedCopy`]); the receiver merges it part by part (`merge.rs`), so
//! delivery order, repetition and loss do not matter, and a copy older than a write this
//! server already holds (a late batch, a paused peer's memory) changes nothing. A heartbeat
//! carries only the stamps, and its answer tells the sender which side is behind.
//!
//! What is merged is a peer's write: it is recorded with `Origin::Peer` and never replicated
//! again (the one-hop rule), and it stamps nothing new. Java peers exchange no stamps; their
//! writes go through the ordinary `register`/`cancel`/… calls, which stamp them on arrival.

use crate::change::{ChangeKind, Left};
use crate::health::Health;
use crate::hlc::{Stamp, TooFarAhead};
use crate::lease::{parts_of, Lease};
use crate::merge::{PartStamps, Parts};
use crate::model::{ActionType, Instance, InstanceStatus, Millis};
use crate::origin::Origin;
use crate::registry::{app_key, Registry};
use crate::stamped_copy::{Merged, StampedCopy, StampedRenewal};
use crate::status_rules::as_override;
use crate::stored::{Name, StoredInstance};
use crate::tombstones::{Removal, Tombstone};

impl Registry {
    /// This server's copy of an instance: its lease's parts, or what its removal left. It is
    /// `leased` only while its lease is unexpired at `now`: an expired lease that
    /// self-preservation keeps is no evidence that the instance lives, and must not revive it
    /// elsewhere.
    pub fn stamped_copy(&self, app: &str, id: &str, now: Millis) -> Option<StampedCopy> {
        let app = app_key(app);
        let (parts, leased) = match self.lease(&app, id) {
            // A restored lease not renewed since proves nothing either (`persisted.rs`).
            Some(lease) => (
                parts_of(lease),
                !lease.is_expired(now, 0) && !lease.is_restored_unrenewed(),
            ),
            None => (self.tombstones.get(&app, id)?.parts.clone(), false),
        };
        Some(StampedCopy {
            app: app.into_owned(),
            id: id.to_owned(),
            parts,
            leased,
        })
    }

    /// The stamps of our copy of an instance (lease or tombstone), without building the copy.
    pub fn stamps_of(&self, app: &str, id: &str) -> Option<PartStamps> {
        let app = app_key(app);
        match self.lease(&app, id) {
            Some(lease) => Some(lease.holder.stamps),
            None => Some(self.tombstones.get(&app, id)?.parts.stamps),
        }
    }

    /// What a heartbeat to a Heureka peer carries: our copy's stamps and status, without the
    /// document (cheap: no instance is rebuilt). `None` unless we hold a lease.
    pub fn stamped_heartbeat(&self, app: &str, id: &str) -> Option<StampedCopy> {
        let app = app_key(app);
        let lease = self.lease(&app, id)?;
        let holder = &lease.holder;
        Some(StampedCopy {
            app: app.into_owned(),
            id: id.to_owned(),
            parts: Parts {
                registration: None,
                own_status: holder.own_status,
                overridden: as_override(holder.overridden_status),
                health: holder.health,
                stamps: holder.stamps,
            },
            leased: true,
        })
    }

    /// Merges a peer's copy into ours (`merge.rs`). An instance the peer holds a lease for
    /// and whose merged parts are live gets a lease here too, even when the parts were
    /// already equal: this server may have evicted it while the peer kept renewing it.
    ///
    /// Refuses a copy stamped too far ahead of our clock (`hlc.rs`), changing nothing. A copy
    /// over the limits (`limits.rs`) changes nothing either: the request paths refuse it before
    /// it gets here, and a copy a peer's answer or anti-entropy brings is not taken. Nor is a
    /// copy that would add a lease beyond `max-instances` ([`Registry::room_for_peer_copy`]);
    /// a removal or an update of an instance held here always is.
    pub fn merge_copy(&mut self, copy: StampedCopy, now: Millis) -> Result<Merged, TooFarAhead> {
        self.clock.observe(copy.parts.stamps.latest(), now)?;
        let app = app_key(&copy.app).into_owned();
        let id = copy.id.as_str();
        let lease = self.lease(&app, id);
        let held = lease.is_some();
        if !self.policy.limits.admits_copy(&copy) {
            return Ok(Merged {
                changed: false,
                leased: held,
            });
        }
        if lease.is_some_and(|lease| !copy.parts.stamps.has_newer_part_than(&lease.holder.stamps)) {
            // Nothing newer than what we hold (the common case of a repeated or crossed copy):
            // no instance is rebuilt.
            return Ok(Merged {
                changed: false,
                leased: true,
            });
        }
        let (mut parts, removal) = match lease {
            Some(lease) => (parts_of(lease), None),
            None => match self.tombstones.get(&app, id) {
                Some(tombstone) => (tombstone.parts.clone(), Some(tombstone.removal)),
                None => (Parts::default(), None),
            },
        };
        let changed = parts.merge(&copy.parts);
        let revive = copy.leased && !held && parts.is_live();
        if revive && !self.room_for_peer_copy(&app, id) {
            return Ok(Merged {
                changed: false,
                leased: false,
            });
        }
        if !changed && !revive {
            return Ok(Merged {
                changed: false,
                leased: held,
            });
        }
        let leased = match (parts.is_live(), held || revive) {
            (true, true) => {
                self.install(&app, id, parts, now);
                true
            }
            (true, false) | (false, false) => {
                // Live parts without a lease here are an eviction's (ours, or the peer's): a
                // peer renewing the instance later brings it back (anti-entropy).
                let removal = removal.unwrap_or(match parts.is_live() {
                    true => Removal::Evicted { last_renewal: 0 },
                    false => Removal::Cancelled,
                });
                let tombstone = Tombstone {
                    parts,
                    removal,
                    at: now,
                };
                self.tombstones.insert(&app, id, tombstone);
                false
            }
            (false, true) => {
                self.remove_lease(ChangeKind::Cancelled, &app, id, Origin::Peer, now);
                let tombstone = Tombstone {
                    parts,
                    removal: Removal::Cancelled,
                    at: now,
                };
                self.tombstones.insert(&app, id, tombstone);
                false
            }
        };
        Ok(Merged {
            changed: true,
            leased,
        })
    }

    /// A peer's heartbeat carrying its stamps: renews our lease, if we hold one, and says
    /// which side is behind.
    pub fn renew_stamped(
        &mut self,
        app: &str,
        id: &str,
        theirs: &PartStamps,
        now: Millis,
    ) -> Result<StampedRenewal, TooFarAhead> {
        self.clock.observe(theirs.latest(), now)?;
        let app = app_key(app);
        let ours = match self.apps.get_mut(app.as_ref()).and_then(|l| l.get_mut(id)) {
            Some(lease) => {
                lease.renew(now);
                Some(lease.holder.stamps)
            }
            None => None,
        };
        let Some(ours) = ours else {
            // A removal we hold that the sender has not seen: it should take it.
            let removed_here = self
                .tombstones
                .get(&app, id)
                .is_some_and(|t| t.parts.stamps.has_newer_part_than(theirs));
            return Ok(match removed_here {
                true => {
                    let ours = self.stamped_copy(&app, id, now).expect("a tombstone");
                    StampedRenewal::TakeOurs(Box::new(ours))
                }
                false => StampedRenewal::SendYours,
            });
        };
        self.renewals.count_renew();
        let before = self.lease_status(&app, id);
        let left = Left::Registered { before };
        self.record(ChangeKind::Renewed, &app, id, Origin::Peer, left, now);
        Ok(if theirs.has_newer_part_than(&ours) {
            StampedRenewal::SendYours
        } else if ours.has_newer_part_than(theirs) {
            let ours = self.stamped_copy(&app, id, now).expect("a lease");
            StampedRenewal::TakeOurs(Box::new(ours))
        } else {
            StampedRenewal::Renewed
        })
    }

    /// A later renewal a Heureka peer holds of an instance we hold the same writes of (its
    /// digest's `lastRenewalTimestamp`): our lease counts from it, so that an instance that
    /// heartbeats to another server is not evicted here while our copies of its heartbeats
    /// are delayed or lost. Not a heartbeat: self-preservation counts none, and nothing is
    /// recorded (readers see lease times as they were, as with any renewal).
    pub fn adopt_renewal(&mut self, app: &str, id: &str, theirs: Millis, now: Millis) {
        let app = app_key(app);
        if let Some(lease) = self.apps.get_mut(app.as_ref()).and_then(|l| l.get_mut(id)) {
            lease.adopt_renewal(theirs, now);
        }
    }

    /// An instance from the start-up sync (a peer's `GET /apps`), whose history is unknown:
    /// added with [`Stamp::SYNCED`] stamps, older than any write, so that the first stamped
    /// copy of any write replaces it, and only when this server holds nothing of it. Returns
    /// whether it was added.
    pub fn register_synced(&mut self, instance: Instance, now: Millis) -> bool {
        let app = app_key(&instance.app).into_owned();
        let id = instance.id().to_owned();
        if self.is_registered(&app, &id) || self.tombstones.get(&app, &id).is_some() {
            return false;
        }
        if !self.room_for_peer_copy(&app, &id) {
            return false;
        }
        let overridden = as_override(instance.overridden_status);
        let stamps = PartStamps {
            registration: Stamp::SYNCED,
            status: Stamp::SYNCED,
            overridden: if overridden.is_some() {
                Stamp::SYNCED
            } else {
                Stamp::ZERO
            },
            removed: Stamp::ZERO,
            health: Stamp::ZERO,
        };
        let parts = Parts {
            own_status: instance.status,
            overridden,
            health: Health::Passing,
            registration: Some(instance),
            stamps,
        };
        self.install(&app, &id, parts, now);
        true
    }

    fn lease_status(&self, app: &str, id: &str) -> Option<InstanceStatus> {
        Some(self.lease(app, id)?.holder.status)
    }

    /// Puts merged, live parts in a lease: the one we hold (its renewals kept), or a new one.
    fn install(&mut self, app: &str, id: &str, parts: Parts, now: Millis) {
        let limits = &self.policy.limits;
        let mut holder = StoredInstance::from_live_parts(app, &parts, limits, &mut self.names);
        holder.action_type = Some(ActionType::Modified);
        holder.last_updated_timestamp = now;
        match parts.overridden {
            Some(status) => self.overrides.insert(id, status, now),
            None => {
                self.overrides.remove(id, now);
            }
        }
        self.tombstones.remove(app, id);
        let existing = self
            .apps
            .get_mut(app)
            .and_then(|leases| leases.remove_entry(id));
        let before = existing.as_ref().map(|(_, lease)| lease.holder.status);
        let override_before = existing
            .as_ref()
            .map(|(_, lease)| as_override(lease.holder.overridden_status));
        let registered_before = existing
            .as_ref()
            .map(|(_, lease)| lease.holder.stamps.registration);
        let health_before = existing.as_ref().map(|(_, lease)| lease.holder.health);
        let (key, lease) = match existing {
            Some((key, mut lease)) => {
                lease.replace_holder(holder);
                (key, lease)
            }
            None => {
                holder.action_type = Some(ActionType::Added);
                self.renewals.client_registered(&self.policy);
                (
                    Name::from(id),
                    Lease::new(holder, self.policy.lease_expiry, now),
                )
            }
        };
        let mut lease = lease;
        if lease.holder.status == InstanceStatus::Up {
            lease.service_up(now);
        }
        let kind = match (override_before, parts.overridden) {
            (Some(before), after) if before != after && after.is_some() => {
                ChangeKind::StatusOverridden
            }
            (Some(Some(_)), None) => ChangeKind::StatusOverrideRemoved,
            // Only the verdict is new: said as such, so that events and logs name it.
            _ if registered_before == Some(parts.stamps.registration)
                && health_before.is_some_and(|before| before != parts.health) =>
            {
                ChangeKind::HealthChanged
            }
            _ => ChangeKind::Registered,
        };
        let holder_app = Name::clone(&lease.holder.app);
        self.leases_of(app, holder_app).insert(key, lease);
        let left = Left::Registered { before };
        self.record(kind, app, id, Origin::Peer, left, now);
    }
}

#[cfg(test)]
mod tests;

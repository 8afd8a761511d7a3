//! Register (§6.3): a client's registration, or a peer's copy of one, and the room a new
//! instance needs (`heureka.limits.max-instances`). Eureka's `AbstractInstanceRegistry.register`:
//! the newer `lastDirtyTimestamp` wins, the override in force is kept, an evicted instance comes
//! back with the override it had, and a takeover of a live instance's endpoint is reported.

use std::borrow::Cow;

use crate::change::{ChangeKind, Left};
use crate::health::Health;
use crate::invalid_registration::InvalidRegistration;
use crate::lease::Lease;
use crate::merge::status_of;
use crate::model::{ActionType, Instance, InstanceStatus, Millis};
use crate::origin::Origin;
use crate::registry::{app_key, Registry};
use crate::status_rules::as_override;
use crate::stored::{Name, StoredInstance};
use crate::takeover::{takeover, Takeover};

/// Which parts of an instance a registration writes (`merge.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stamping {
    /// A client's registration, or a Java peer's copy of one: the document and the status.
    Registration,
    /// A metadata update: the document only.
    Document,
}

impl Registry {
    /// Whether registering `app/id` now would stay within `max-instances`: a re-register
    /// always does, a new instance only while the registry holds fewer. Call under the same
    /// write as the register it guards.
    pub fn check_room(&self, app: &str, id: &str) -> Result<(), InvalidRegistration> {
        let held = self.is_registered(&app_key(app), id);
        let max = self.policy.limits.max_instances;
        if held || self.registry_size() < max {
            Ok(())
        } else {
            Err(InvalidRegistration::RegistryFull { max })
        }
    }

    /// Whether a peer's copy may add `app/id` here: the same room a client's registration
    /// needs ([`Registry::check_room`]), so that no path, anti-entropy's repairs and the
    /// start-up sync included, grows the registry beyond `max-instances`. An instance held
    /// already always has room: its updates, overrides and removals are never refused. A
    /// refusal is counted for the caller to report ([`Registry::take_copies_refused_for_room`]);
    /// the copy is taken by a later exchange once room is made.
    pub(crate) fn room_for_peer_copy(&mut self, app: &str, id: &str) -> bool {
        let room = self.check_room(app, id).is_ok();
        if !room {
            self.copies_refused_for_room += 1;
        }
        room
    }

    /// How many peers' copies of new instances were refused for want of room
    /// (`max-instances`) since the last call: the server logs them as it logs a client's
    /// refused registration.
    pub fn take_copies_refused_for_room(&mut self) -> u64 {
        std::mem::take(&mut self.copies_refused_for_room)
    }

    /// Register or re-register (§6.3). The instance has been validated by the caller.
    pub fn register(&mut self, instance: Instance, origin: Origin, now: Millis) {
        let stamping = Stamping::Registration;
        self.register_as(ChangeKind::Registered, instance, origin, stamping, now);
    }

    /// Register, recorded as `kind` (a metadata update is a register in Eureka), stamping the
    /// parts `stamping` says.
    pub(crate) fn register_as(
        &mut self,
        kind: ChangeKind,
        instance: Instance,
        origin: Origin,
        stamping: Stamping,
        now: Millis,
    ) {
        let mut incoming = instance;
        if let Cow::Owned(upper_case) = app_key(&incoming.app) {
            incoming.app = upper_case;
        }
        // Whatever path the instance came by, no longer lease is stored; the entry points
        // warn about a shortened one (`validate_registration`).
        let _ = self.policy.limits.lease_terms(&mut incoming.lease_info);
        let app = incoming.app.clone();

        let existing = self
            .apps
            .get_mut(app.as_str())
            .and_then(|leases| leases.remove_entry(incoming.id()));
        let taken_over = match (&existing, origin, kind) {
            (Some((_, lease)), Origin::Client, ChangeKind::Registered) => {
                takeover(lease, &incoming, now)
            }
            _ => None,
        };
        // The id's shared copy survives a re-register, so its delta-queue item keeps sharing it.
        let (key, existing) = match existing {
            Some((key, lease)) => (key, Some(lease)),
            None => (Name::from(incoming.id()), None),
        };
        let id = Name::clone(&key);
        if existing.is_none() {
            self.renewals.client_registered(&self.policy);
        }
        let existing_status = existing.as_ref().map(|lease| lease.holder.status);
        let service_up = existing.as_ref().map(Lease::service_up_timestamp);
        let delta_seq = existing.as_ref().and_then(|lease| lease.delta_seq);
        // What is known of the instance's parts: its lease, or what its removal left.
        let removed = match existing {
            Some(_) => None,
            None => self.tombstones.remove(&app, &id),
        };
        let (prior_stamps, prior_own, prior_override, prior_health) = match (&existing, &removed) {
            (Some(lease), _) => (
                lease.holder.stamps,
                lease.holder.own_status,
                as_override(lease.holder.overridden_status),
                lease.holder.health,
            ),
            (None, Some(tombstone)) => (
                tombstone.parts.stamps,
                tombstone.parts.own_status,
                tombstone.parts.overridden,
                tombstone.parts.health,
            ),
            (None, None) => (
                Default::default(),
                InstanceStatus::Unknown,
                None,
                Health::Passing,
            ),
        };
        if let (Some(kept), None) = (prior_override, &existing) {
            // An evicted instance comes back with the override it had (`tombstones.rs`).
            if self.overrides.get(&id, now).is_none() {
                self.overrides.insert(&id, kept, now);
            }
        }
        // A register carrying older data than we hold keeps our instance: strictly newer
        // wins, so on equal timestamps the incoming copy replaces ours.
        let at = self.clock.tick(now);
        let mut holder = match existing {
            Some(lease) if lease.holder.last_dirty_timestamp > incoming.last_dirty_timestamp => {
                *lease.holder
            }
            _ => {
                let own = incoming.status;
                let mut holder = StoredInstance::new(incoming, &mut self.names);
                holder.stamps = prior_stamps;
                holder.stamps.registration = at;
                // A registration does not clear a verdict: only the checks do (`health.rs`).
                holder.health = prior_health;
                holder.own_status = prior_own;
                if stamping == Stamping::Registration {
                    holder.own_status = own;
                    holder.stamps.status = at;
                }
                holder
            }
        };

        // The override in force is the one held here; an override the instance carries (a
        // Java peer's register) seeds it when there is none, as in Eureka.
        let mut overridden = prior_override;
        if let (None, Some(carried)) = (overridden, as_override(holder.overridden_status)) {
            overridden = Some(carried);
            holder.stamps.overridden = at;
        }
        if let Some(status) = overridden {
            self.overrides.insert(&id, status, now);
        }
        holder.overridden_status = overridden.unwrap_or(InstanceStatus::Unknown);
        holder.status = status_of(holder.own_status, overridden, holder.health, &holder.stamps);
        holder.action_type = Some(ActionType::Added);
        holder.last_updated_timestamp = now;

        let mut lease = Lease::new(holder, self.policy.lease_expiry, now);
        lease.delta_seq = delta_seq;
        if let Some(service_up) = service_up {
            lease.inherit_service_up(service_up);
        }
        if lease.holder.status == InstanceStatus::Up {
            lease.service_up(now);
        }
        let holder_app = Name::clone(&lease.holder.app);
        self.leases_of(&app, holder_app).insert(key, lease);
        let left = Left::Registered {
            before: existing_status,
        };
        self.record(kind, &app, &id, origin, left, now);
        if let Some(taken_over) = taken_over {
            self.mark_takeover(taken_over);
        }
    }

    /// Whether a client registering `instance` now would take over a live instance at
    /// another endpoint (`takeover.rs`): what a server refusing takeovers asks before it
    /// registers.
    pub fn takeover_by(&self, instance: &Instance, now: Millis) -> Option<Takeover> {
        let lease = self.lease(&app_key(&instance.app), instance.id())?;
        takeover(lease, instance, now)
    }
}

#[cfg(test)]
mod tests;

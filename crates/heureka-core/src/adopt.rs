//! Adopting a Java peer's copy of an instance: Eureka's answer to a replicated heartbeat's 409
//! (`syncWhenTimestampDiffers`) and anti-entropy's repair. Which copy is newer and which
//! override to keep are `peer_copies.rs`'s rules; the adopted copy is registered as a peer's
//! write, never replicated back.

use crate::change::{ChangeKind, Left};
use crate::merge::status_of;
use crate::model::{Instance, InstanceStatus, Millis};
use crate::origin::Origin;
use crate::overrides::mark_modified;
use crate::peer_copies::{adopted_override, OverrideAdoption, PeerOverrideAbsence};
use crate::registry::{app_key, Registry};
use crate::status_rules::as_override;

impl Registry {
    /// Takes a peer's copy of an instance as ours: Eureka's answer to a replicated heartbeat's
    /// 409 (`syncWhenTimestampDiffers`). The peer's override, when it has one, is stored
    /// first, so the register that follows honours it; ours stays when it has none
    /// (`PeerOverrideAbsence::KeepsOurs`). The write is a peer's, so it is never replicated
    /// back.
    pub fn adopt_peer_copy(&mut self, instance: Instance, now: Millis) {
        self.adopt(instance, PeerOverrideAbsence::KeepsOurs, now);
    }

    /// Anti-entropy's repair: takes a peer's newer copy as ours, its override or the absence of
    /// one included (`PeerOverrideAbsence::RemovesOurs`). A peer's write, never replicated back.
    pub fn repair_from_peer(&mut self, instance: Instance, now: Millis) {
        self.adopt(instance, PeerOverrideAbsence::RemovesOurs, now);
    }

    /// Adoption, with the override rule of `peer_copies.rs`.
    fn adopt(&mut self, instance: Instance, absence: PeerOverrideAbsence, now: Millis) {
        if self.policy.limits.check_instance(&instance).is_err() {
            // A copy no request could have registered here is not taken from a peer either.
            return;
        }
        if !self.room_for_peer_copy(&instance.app, instance.id()) {
            return;
        }
        // The stored copy carries the override in force (the map's entry), without a scan of
        // every override per adopted instance. Looked up only when a removal could follow.
        let ours = match (instance.overridden_status, absence) {
            (InstanceStatus::Unknown, PeerOverrideAbsence::RemovesOurs) => self
                .instance(&instance.app, instance.id(), now)
                .map_or(InstanceStatus::Unknown, |ours| ours.overridden_status),
            _ => InstanceStatus::Unknown,
        };
        match adopted_override(instance.overridden_status, ours, absence) {
            OverrideAdoption::Take(theirs) => {
                let (app, id) = (
                    app_key(&instance.app).into_owned(),
                    instance.id().to_owned(),
                );
                self.register(instance, Origin::Peer, now);
                self.take_override(&app, &id, theirs, now);
                return;
            }
            OverrideAdoption::Remove => {
                let (app, id) = (instance.app.to_uppercase(), instance.id().to_owned());
                self.delete_status_override(
                    &app,
                    &id,
                    Some(instance.status),
                    Some(instance.last_dirty_timestamp),
                    Origin::Peer,
                    now,
                );
            }
            OverrideAdoption::Keep => {}
        }
        self.register(instance, Origin::Peer, now);
    }

    /// Sets the override a Java peer's adopted copy carries, as a write arriving now.
    fn take_override(&mut self, app: &str, id: &str, status: InstanceStatus, now: Millis) {
        let Some(lease) = self.apps.get_mut(app).and_then(|l| l.get_mut(id)) else {
            return;
        };
        if as_override(lease.holder.overridden_status) == Some(status) {
            return;
        }
        self.overrides.insert(id, status, now);
        let holder = &mut lease.holder;
        let before = Some(holder.status);
        holder.overridden_status = status;
        holder.stamps.overridden = self.clock.tick(now);
        holder.status = status_of(
            holder.own_status,
            Some(status),
            holder.health,
            &holder.stamps,
        );
        mark_modified(holder, None, now);
        let kind = ChangeKind::StatusOverridden;
        let left = Left::Registered { before };
        self.record(kind, app, id, Origin::Peer, left, now);
    }
}

#[cfg(test)]
mod tests;

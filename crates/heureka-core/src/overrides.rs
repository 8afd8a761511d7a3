//! Status overrides (§6.7): Eureka's `statusUpdate` and `deleteStatusOverride`, an operator's
//! override set on an instance or removed from it, and the live overrides listed for
//! `/serverinfo/statusoverrides`. Which status an override gives is `status_rules.rs`'s rule.

use crate::change::{ChangeKind, Left};
use crate::health::with_health;
use crate::model::{ActionType, InstanceStatus, Millis};
use crate::origin::Origin;
use crate::registry::{app_key, visible_lease_mut, Registry};
use crate::status_rules::as_override;
use crate::stored::StoredInstance;

impl Registry {
    /// `statusUpdate` (§6.7). False when unknown (404) — including expired-not-evicted leases.
    pub fn set_status_override(
        &mut self,
        app: &str,
        id: &str,
        status: InstanceStatus,
        last_dirty_timestamp: Option<Millis>,
        origin: Origin,
        now: Millis,
    ) -> bool {
        let app = app_key(app);
        let expiration_enabled = self.lease_expiration_enabled();
        let Some(lease) = visible_lease_mut(&mut self.apps, &app, id, now, expiration_enabled)
        else {
            return false;
        };
        // Eureka renews here but does not count it towards renewsLastMin.
        lease.renew(now);
        if lease.holder.status == status {
            if as_override(lease.holder.overridden_status) == Some(status) {
                // In force already, but this write is the operator's latest: a removal made
                // elsewhere and not yet seen here must not outlive it (`merge.rs`).
                lease.holder.stamps.overridden = self.clock.tick(now);
                let (kind, before) = (ChangeKind::Restamped, Some(status));
                self.record(kind, &app, id, origin, Left::Registered { before }, now);
            }
            // Otherwise nothing is recorded, not even an override: setting UP on an UP
            // instance is a no-op, as in Eureka.
            return true;
        }
        let before = Some(lease.holder.status);
        if status == InstanceStatus::Up {
            lease.service_up(now);
        }
        self.overrides.insert(id, status, now);
        let holder = &mut lease.holder;
        holder.overridden_status = status;
        holder.status = status;
        holder.stamps.overridden = self.clock.tick(now);
        mark_modified(holder, last_dirty_timestamp, now);
        let left = Left::Registered { before };
        self.record(ChangeKind::StatusOverridden, &app, id, origin, left, now);
        true
    }

    /// `deleteStatusOverride` (§6.7). `new_status` None means UNKNOWN.
    ///
    /// With UNKNOWN (what real clients send) the next heartbeat gets 404 and the client
    /// re-registers with its real status.
    pub fn delete_status_override(
        &mut self,
        app: &str,
        id: &str,
        new_status: Option<InstanceStatus>,
        last_dirty_timestamp: Option<Millis>,
        origin: Origin,
        now: Millis,
    ) -> bool {
        let app = app_key(app);
        let expiration_enabled = self.lease_expiration_enabled();
        let Some(lease) = visible_lease_mut(&mut self.apps, &app, id, now, expiration_enabled)
        else {
            return false;
        };
        lease.renew(now);
        let held = self.overrides.remove(id, now).is_some();
        if !held && as_override(lease.holder.overridden_status).is_none() {
            // Nothing to remove here, which Eureka answers with a no-op. The removal is still
            // the operator's latest write: an override set elsewhere and not yet seen here must
            // not outlive it (`merge.rs`). The instance's own status is left as it is.
            lease.holder.stamps.overridden = self.clock.tick(now);
            let before = Some(lease.holder.status);
            let kind = ChangeKind::Restamped;
            self.record(kind, &app, id, origin, Left::Registered { before }, now);
            return true;
        }
        let holder = &mut lease.holder;
        let before = Some(holder.status);
        holder.overridden_status = InstanceStatus::Unknown;
        // The removal sets the instance's own status too (`Parts::remove_override`), which a
        // failing health check still reads as DOWN.
        holder.own_status = new_status.unwrap_or(InstanceStatus::Unknown);
        holder.status = with_health(holder.own_status, None, holder.health);
        let at = self.clock.tick(now);
        holder.stamps.overridden = at;
        holder.stamps.status = at;
        mark_modified(holder, last_dirty_timestamp, now);
        let left = Left::Registered { before };
        self.record(
            ChangeKind::StatusOverrideRemoved,
            &app,
            id,
            origin,
            left,
            now,
        );
        true
    }

    /// The live status overrides by instance id, for `/serverinfo/statusoverrides`.
    pub fn status_overrides(&self, now: Millis) -> Vec<(String, InstanceStatus)> {
        self.overrides.snapshot(now)
    }
}

/// The bookkeeping of an effective status change: adopt a newer dirty timestamp, MODIFIED.
pub(crate) fn mark_modified(
    holder: &mut StoredInstance,
    last_dirty_timestamp: Option<Millis>,
    now: Millis,
) {
    if let Some(incoming) = last_dirty_timestamp {
        if incoming > holder.last_dirty_timestamp {
            holder.last_dirty_timestamp = incoming;
        }
    }
    holder.action_type = Some(ActionType::Modified);
    holder.last_updated_timestamp = now;
}

#[cfg(test)]
mod tests;

//! Renew (§6.4): a heartbeat, and the `lastDirtyTimestamp` rules of §3.9 that tell the client
//! to register again or, for a peer, send it our newer copy. Eureka's `InstanceResource.renewLease`
//! and `AbstractInstanceRegistry.renew`, the overridden-status rules applied on the way.

use crate::change::{ChangeKind, Left, Read};
use crate::lease::decorate;
use crate::model::{ActionType, InstanceStatus, Millis};
use crate::origin::Origin;
use crate::outcomes::RenewOutcome;
use crate::registry::{app_key, Registry};
use crate::status_rules::{effective_status, StatusInput};

impl Registry {
    /// Heartbeat (§6.4 + the lastDirtyTimestamp rules of §3.9).
    ///
    /// The lease is renewed before the dirty-timestamp comparison, so it is renewed even when
    /// the outcome asks for a re-register or a conflict (Eureka's `InstanceResource.renewLease`).
    pub fn renew(
        &mut self,
        app: &str,
        id: &str,
        last_dirty_timestamp: Option<Millis>,
        overridden_status: Option<InstanceStatus>,
        origin: Origin,
        now: Millis,
    ) -> RenewOutcome {
        let app = app_key(app);
        let Some((id_name, lease)) = self
            .apps
            .get_mut(app.as_ref())
            .and_then(|leases| leases.get_key_value_mut(id))
        else {
            return RenewOutcome::NotFound;
        };
        let stored_status = lease.holder.status;
        let input = StatusInput {
            own: stored_status,
            existing: Some(stored_status),
            origin,
        };
        let overrides = &mut self.overrides;
        let (status, _) = effective_status(input, || overrides.get(id, now));
        if status == InstanceStatus::Unknown {
            // A deleted override leaves UNKNOWN behind; 404 makes the client re-register.
            return RenewOutcome::NotFound;
        }
        if status != stored_status {
            // Eureka flips the status silently (no delta item, no cache invalidation), which
            // clients only notice through the hash. We record it as a MODIFIED change.
            lease.holder.status = status;
            lease.holder.action_type = Some(ActionType::Modified);
            lease.holder.last_updated_timestamp = now;
            if status == InstanceStatus::Up {
                lease.service_up(now);
            }
        }
        let mut kind = if status != stored_status {
            ChangeKind::StatusChanged
        } else {
            ChangeKind::Renewed
        };
        self.renewals.count_renew();
        lease.renew(now);

        let stored_dirty = lease.holder.last_dirty_timestamp;
        let outcome = match last_dirty_timestamp {
            Some(incoming) if incoming > stored_dirty => {
                let peer_override =
                    overridden_status.filter(|status| *status != InstanceStatus::Unknown);
                if let (Origin::Peer, Some(overridden)) = (origin, peer_override) {
                    // Eureka's `storeOverriddenStatusIfRequired`: the peer knows an override we
                    // do not; keep it so the re-register that follows honours it.
                    if self.overrides.get(id, now) != Some(overridden) {
                        self.overrides.insert(id, overridden, now);
                        lease.holder.overridden_status = overridden;
                        lease.holder.stamps.overridden = self.clock.tick(now);
                        kind = ChangeKind::StatusOverridden;
                    }
                }
                RenewOutcome::ClientNewer
            }
            Some(incoming) if incoming < stored_dirty && origin == Origin::Peer => {
                RenewOutcome::RegistryNewer(Box::new(decorate(
                    lease,
                    self.own_instance_id.as_deref(),
                )))
            }
            _ => RenewOutcome::Renewed,
        };
        let left = Left::Read {
            before: Some(stored_status),
            read: Read::of(id_name, lease),
        };
        self.record(kind, &app, id, origin, left, now);
        outcome
    }
}

#[cfg(test)]
mod tests;

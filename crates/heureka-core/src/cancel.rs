//! Cancel (§6.5): a client's deregistration or a peer's copy of one, and Eureka's
//! `internalCancel`, which eviction shares: the lease goes, its override with it, and a
//! tombstone stays (`tombstones.rs`).

use crate::change::{ChangeKind, Left};
use crate::lease::{parts_of, Lease};
use crate::model::{ActionType, Millis};
use crate::origin::Origin;
use crate::registry::{app_key, Registry};
use crate::tombstones::{Removal, Tombstone};

impl Registry {
    /// Cancel (§6.5). False when there was no such lease.
    pub fn cancel(&mut self, app: &str, id: &str, origin: Origin, now: Millis) -> bool {
        // Cancels from clients and peers are applied alike; only replication differs.
        self.remove_lease(ChangeKind::Cancelled, &app_key(app), id, origin, now)
    }

    /// Eureka's `internalCancel`, shared by cancel and eviction. `app` is already upper-cased.
    pub(crate) fn remove_lease(
        &mut self,
        kind: ChangeKind,
        app: &str,
        id: &str,
        origin: Origin,
        now: Millis,
    ) -> bool {
        // The override goes even when there is no lease, as in Eureka.
        self.overrides.remove(id, now);
        let Some((key, mut lease)) = self
            .apps
            .get_mut(app)
            .and_then(|leases| leases.remove_entry(id))
        else {
            return false;
        };
        lease.cancel(now);
        lease.holder.action_type = Some(ActionType::Deleted);
        lease.holder.last_updated_timestamp = now;
        let tombstone = self.tombstone_of(kind, &lease, now);
        self.tombstones.insert(app, id, tombstone);
        self.renewals.client_cancelled(&self.policy);
        self.record(kind, app, id, origin, Left::Removed(key, lease), now);
        true
    }

    /// What a removal leaves of `lease`: a cancel is a write, stamped now, after which the
    /// document no longer matters (dropped, so that tombstones stay small); an eviction
    /// stamps nothing and keeps everything, for the instance to come back as it was.
    fn tombstone_of(&mut self, kind: ChangeKind, lease: &Lease, now: Millis) -> Tombstone {
        let mut parts = parts_of(lease);
        let removal = if kind == ChangeKind::Evicted {
            let last_renewal = lease.lease_info().last_renewal_timestamp;
            Removal::Evicted { last_renewal }
        } else {
            parts.cancel(self.clock.tick(now));
            parts.registration = None;
            Removal::Cancelled
        };
        Tombstone {
            parts,
            removal,
            at: now,
        }
    }
}

#[cfg(test)]
mod tests;

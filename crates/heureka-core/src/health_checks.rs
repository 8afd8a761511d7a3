//! The server's health checks, as operations on the registry: writing a check's verdict on an
//! instance (stamped and replicated like any write), and the instances a check should probe.
//! How a verdict weighs against the instance's own status and the operator's override is
//! `health.rs`'s rule.

use crate::change::{ChangeKind, Left};
use crate::health::{with_health, Health, HealthSubject, HealthWrite};
use crate::merge::status_of;
use crate::model::{ActionType, InstanceStatus, Millis};
use crate::origin::Origin;
use crate::registry::{app_key, visible_lease_mut, Registry};
use crate::status_rules::as_override;

impl Registry {
    /// Writes a health check's verdict on an instance: stamps the health part, re-derives the
    /// status readers see, and records a `HealthChanged` change that replicates like any
    /// other. Writing the verdict an instance already carries changes nothing.
    ///
    /// Recovery restores the status the other rules give: the instance's own status under
    /// its override (`merge::status_of`), so an OUT_OF_SERVICE set while it was failing stays.
    pub fn set_health(
        &mut self,
        app: &str,
        id: &str,
        health: Health,
        origin: Origin,
        now: Millis,
    ) -> HealthWrite {
        let app = app_key(app);
        let expiration_enabled = self.lease_expiration_enabled();
        let Some(lease) = visible_lease_mut(&mut self.apps, &app, id, now, expiration_enabled)
        else {
            return HealthWrite::NotFound;
        };
        let holder = &mut lease.holder;
        if holder.health == health {
            return HealthWrite::Unchanged;
        }
        let before = holder.status;
        holder.health = health;
        holder.stamps.health = self.clock.tick(now);
        let overridden = as_override(holder.overridden_status);
        let status = match health {
            Health::Failing => with_health(before, overridden, health),
            // Back to what the parts give without the verdict; only a DOWN the verdict made
            // is lifted, so a status the order-dependent rules chose otherwise stays.
            Health::Passing if before == InstanceStatus::Down => {
                status_of(holder.own_status, overridden, health, &holder.stamps)
            }
            Health::Passing => before,
        };
        if status != before {
            holder.status = status;
            holder.last_updated_timestamp = now;
            holder.action_type = Some(ActionType::Modified);
            if status == InstanceStatus::Up {
                lease.service_up(now);
            }
        }
        let before = Some(before);
        let left = Left::Registered { before };
        self.record(ChangeKind::HealthChanged, &app, id, origin, left, now);
        HealthWrite::Written { status }
    }

    /// The instances the server's health checks should look at now: every unexpired lease
    /// for which `take(app, id)` says yes (the caller's share of a cluster), with what a probe
    /// needs, and their metadata under `keys`. Leases that have expired are left to eviction.
    pub fn health_subjects(
        &self,
        now: Millis,
        keys: &[&str],
        mut take: impl FnMut(&str, &str) -> bool,
    ) -> Vec<HealthSubject> {
        let mut subjects = Vec::new();
        for (app, leases) in &self.apps {
            for (id, lease) in leases.iter() {
                if lease.is_expired(now, 0) || !take(app, id) {
                    continue;
                }
                subjects.push(lease.holder.health_subject(app, id, keys));
            }
        }
        subjects
    }

    /// Every instance whose verdict is failing, as `(app, id)`: a scan that allocates only
    /// for those.
    pub fn failing_instances(&self) -> Vec<(String, String)> {
        let mut failing = Vec::new();
        for (app, leases) in &self.apps {
            for (id, lease) in leases.iter() {
                if lease.holder.health == Health::Failing {
                    failing.push((app.to_string(), id.to_string()));
                }
            }
        }
        failing
    }

    /// The verdict an instance carries; `None` when it is not registered.
    pub fn health_of(&self, app: &str, id: &str) -> Option<Health> {
        Some(self.lease(&app_key(app), id)?.holder.health)
    }
}

#[cfg(test)]
mod tests;

//! The server's own health checks, as far as the registry is concerned: the verdict a check
//! left on an instance, and how it weighs against what the instance and the operator said.
//!
//! A Heureka server may probe each instance's `healthCheckUrl` (the server's
//! `health_checks/`). What reaches the registry is only the verdict, written when it flips
//! ([`Registry::set_health`]), stamped and replicated like any other part of an instance
//! (`merge.rs`), so every server derives the same status from it. The precedence, strongest
//! first:
//!
//! 1. the instance's own DOWN, STARTING or UNKNOWN (it knows it is not ready);
//! 2. the operator's override (an OUT_OF_SERVICE stays through any verdict, and an UP
//!    override pins the instance UP whatever the checks say);
//! 3. the health check's verdict (failing: DOWN);
//! 4. the instance's own UP.
//!
//! Rules 1, 2 and 4 are Eureka's (`status_rules.rs`, `merge::status_of`); the verdict only
//! ever turns an UP that the instance itself reported into DOWN, so when the checks recover
//! the instance is back to what it would be without them.

use crate::change::{ChangeKind, Left};
use crate::model::{InstanceStatus, Millis, Port};
use crate::policy::Origin;
use crate::registry::{app_key, as_override, Registry};

/// What the last health check that changed its mind said of an instance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Health {
    /// Never checked, or passing: the instance's status is what the other rules make it.
    #[default]
    Passing,
    /// Failing: an UP the instance reported reads as DOWN.
    Failing,
}

impl Health {
    /// The wire name: `PASSING` or `FAILING`.
    pub fn as_str(self) -> &'static str {
        match self {
            Health::Passing => "PASSING",
            Health::Failing => "FAILING",
        }
    }

    /// Reads a wire name, `None` for anything else.
    pub fn from_name(name: &str) -> Option<Health> {
        match name {
            "PASSING" => Some(Health::Passing),
            "FAILING" => Some(Health::Failing),
            _ => None,
        }
    }
}

/// Rule 3 over the status rules 1, 2 and 4 gave: a failing verdict turns UP into DOWN, unless
/// that UP is the operator's override.
pub fn with_health(
    status: InstanceStatus,
    overridden: Option<InstanceStatus>,
    health: Health,
) -> InstanceStatus {
    let pinned_up = overridden == Some(InstanceStatus::Up);
    if health == Health::Failing && status == InstanceStatus::Up && !pinned_up {
        InstanceStatus::Down
    } else {
        status
    }
}

/// What a health check needs of one instance (`Registry::health_subjects`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HealthSubject {
    pub app: String,
    pub id: String,
    pub host_name: String,
    pub ip_addr: String,
    pub port: Port,
    pub secure_port: Port,
    pub health_check_url: Option<String>,
    pub secure_health_check_url: Option<String>,
    /// The instance's metadata entries among the keys the caller asked for.
    pub metadata: Vec<(String, String)>,
    /// The status readers see now, and the verdict behind it.
    pub status: InstanceStatus,
    pub health: Health,
}

/// What writing a verdict did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HealthWrite {
    /// No such instance (or its lease has expired while leases expire).
    NotFound,
    /// The instance already carried this verdict; nothing was written.
    Unchanged,
    /// The verdict was written; `status` is what readers see now.
    Written { status: InstanceStatus },
}

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
        let Some(lease) = self
            .apps
            .get_mut(app.as_ref())
            .and_then(|leases| leases.get_mut(id))
            .filter(|lease| crate::registry::is_visible(lease, now, expiration_enabled))
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
                crate::merge::status_of(holder.own_status, overridden, health, &holder.stamps)
            }
            Health::Passing => before,
        };
        if status != before {
            holder.status = status;
            holder.last_updated_timestamp = now;
            holder.action_type = Some(crate::model::ActionType::Modified);
            if status == InstanceStatus::Up {
                lease.service_up(now);
            }
        }
        let before = Some(before);
        self.record(
            ChangeKind::HealthChanged,
            &app,
            id,
            origin,
            Left::Registered { before },
            now,
        );
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
                    failing.push((app.clone(), id.to_string()));
                }
            }
        }
        failing
    }

    /// The verdict an instance carries; `None` when it is not registered.
    pub fn health_of(&self, app: &str, id: &str) -> Option<Health> {
        let lease = self.apps.get(app_key(app).as_ref())?.get(id)?;
        Some(lease.holder.health)
    }
}

#[cfg(test)]
mod tests;

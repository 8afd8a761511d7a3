//! The server's own health checks, as far as the registry is concerned: the verdict a check
//! left on an instance, and how it weighs against what the instance and the operator said.
//!
//! A Heureka server may probe each instance's `healthCheckUrl` (the server's
//! `health_checks/`). What reaches the registry is only the verdict, written when it flips
//! (`Registry::set_health`, in this crate's `health_checks.rs`), stamped and replicated like
//! any other part of an instance (`merge.rs`), so every server derives the same status from it.
//! The precedence, strongest first:
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

use crate::model::{InstanceStatus, Port};

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

#[cfg(test)]
mod tests;

//! Status overrides: which status an instance really gets on register and renew (§6.6), and
//! the operator's override map that feeds those rules.
//!
//! Eureka spreads this over `registry/rule/*.java` and a rule chain built in
//! `PeerAwareInstanceRegistryImpl`; here it is one ordered function. The AWS-only
//! `AsgEnabledRule` is not implemented: Heureka has no ASG state.

use crate::maps::HashMap;
use crate::model::{InstanceStatus, Millis};
use crate::origin::Origin;

/// Which rule of §6.6 decided a status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StatusRule {
    /// The instance says DOWN, STARTING or UNKNOWN: trust it.
    DownOrStarting,
    /// An operator override exists.
    OverrideExists,
    /// The server already holds the instance UP or OUT_OF_SERVICE, and this is not a replica.
    LeaseExists,
    /// Nothing else matched: the instance's own status.
    AlwaysMatch,
}

/// The inputs of the rule chain.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StatusInput {
    /// The status the instance itself carries (the incoming one on register, the stored one
    /// on renew).
    pub(crate) own: InstanceStatus,
    /// The status of the lease already in the registry, if any.
    pub(crate) existing: Option<InstanceStatus>,
    pub(crate) origin: Origin,
}

/// Eureka's `getOverriddenInstanceStatus`: the first matching rule wins.
///
/// The override map is read lazily, only when rule 1 does not match, because reading it
/// refreshes the entry's idle timer (a DOWN instance's override is not kept alive by its
/// heartbeats in Eureka either).
pub(crate) fn effective_status(
    input: StatusInput,
    read_override: impl FnOnce() -> Option<InstanceStatus>,
) -> (InstanceStatus, StatusRule) {
    use InstanceStatus::{OutOfService, Up};
    if !matches!(input.own, Up | OutOfService) {
        return (input.own, StatusRule::DownOrStarting);
    }
    if let Some(overridden) = read_override() {
        return (overridden, StatusRule::OverrideExists);
    }
    // `LeaseExistsRule`: on a client write the server "has its way" with UP/OUT_OF_SERVICE,
    // so a client re-registering UP cannot lift an OUT_OF_SERVICE it does not know about.
    if input.origin == Origin::Client {
        if let Some(existing @ (Up | OutOfService)) = input.existing {
            return (existing, StatusRule::LeaseExists);
        }
    }
    (input.own, StatusRule::AlwaysMatch)
}

/// An `overriddenStatus` field as an override: UNKNOWN means none.
pub(crate) fn as_override(status: InstanceStatus) -> Option<InstanceStatus> {
    Some(status).filter(|status| *status != InstanceStatus::Unknown)
}

/// How long an override survives without being read or written: Eureka's
/// `overriddenInstanceStatusMap` is a Guava cache with `expireAfterAccess(1 hour)`.
pub(crate) const OVERRIDE_IDLE_EXPIRY_MS: Millis = 3_600_000;

/// Eureka's `overriddenInstanceStatusMap`. Keyed by instance id alone, not by app, as in Java.
#[derive(Debug, Default)]
pub(crate) struct OverrideMap {
    entries: HashMap<String, OverrideEntry>,
}

#[derive(Clone, Copy, Debug)]
struct OverrideEntry {
    status: InstanceStatus,
    last_access: Millis,
}

impl OverrideMap {
    /// Reads an entry, refreshing its idle timer; an idle-expired entry reads as absent.
    pub(crate) fn get(&mut self, id: &str, now: Millis) -> Option<InstanceStatus> {
        let entry = self.entries.get_mut(id)?;
        if is_idle_expired(entry, now) {
            self.entries.remove(id);
            return None;
        }
        entry.last_access = now;
        Some(entry.status)
    }

    pub(crate) fn insert(&mut self, id: &str, status: InstanceStatus, now: Millis) {
        let entry = OverrideEntry {
            status,
            last_access: now,
        };
        self.entries.insert(id.to_owned(), entry);
    }

    /// Removes an entry; returns it unless it had already idled out.
    pub(crate) fn remove(&mut self, id: &str, now: Millis) -> Option<InstanceStatus> {
        let entry = self.entries.remove(id)?;
        (!is_idle_expired(&entry, now)).then_some(entry.status)
    }

    /// Drops idle-expired entries, so ids that are never touched again do not pile up.
    pub(crate) fn purge_idle(&mut self, now: Millis) {
        self.entries.retain(|_, entry| !is_idle_expired(entry, now));
    }

    /// All live overrides, for `/serverinfo/statusoverrides`.
    pub(crate) fn snapshot(&self, now: Millis) -> Vec<(String, InstanceStatus)> {
        let mut all: Vec<_> = self
            .entries
            .iter()
            .filter(|(_, entry)| !is_idle_expired(entry, now))
            .map(|(id, entry)| (id.clone(), entry.status))
            .collect();
        all.sort();
        all
    }
}

fn is_idle_expired(entry: &OverrideEntry, now: Millis) -> bool {
    now - entry.last_access > OVERRIDE_IDLE_EXPIRY_MS
}

#[cfg(test)]
mod tests;

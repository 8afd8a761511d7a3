//! How two Heureka servers' copies of one instance merge: part by part, the later write wins.
//!
//! An instance is five parts that different writes change, each carrying the [`Stamp`] of the
//! write that last set it:
//!
//! - the **registration** (the document a client registered, metadata included; a metadata
//!   update rewrites it),
//! - the instance's **own status** (what its client registered, or what an operator's
//!   override removal set it to),
//! - the operator's **override** (set, or removed: a removal is a write too),
//! - its **removal** (the last cancel),
//! - the **health** verdict of the server checking it (`health.rs`; never set while health
//!   checks are off).
//!
//! Merging takes, for each part, the copy with the later stamp. That is commutative,
//! associative and idempotent, so any order of delivery, any repetition and any loss repaired
//! later end in the same state: the state of the latest writes. What a reader sees is derived
//! from the merged parts alone ([`Parts::is_live`], [`Parts::status`]), never from the order
//! in which they arrived; a local event (a lease expiring, a repair re-sending a copy) stamps
//! nothing, so it never makes a copy look newer than the writes it holds.
//!
//! Java servers exchange no stamps; `peer_copies.rs` keeps Eureka's rules for them.

use crate::health::{with_health, Health};
use crate::hlc::Stamp;
use crate::model::{Instance, InstanceStatus};
use crate::origin::Origin;
use crate::status_rules::{effective_status, StatusInput};

/// The stamp of the last write to each part of an instance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartStamps {
    pub registration: Stamp,
    pub status: Stamp,
    pub overridden: Stamp,
    /// The last cancel; [`Stamp::ZERO`] when there was none.
    pub removed: Stamp,
    /// The last health verdict that changed; [`Stamp::ZERO`] when none ever did.
    pub health: Stamp,
}

impl PartStamps {
    /// The latest of the five.
    pub fn latest(&self) -> Stamp {
        self.registration
            .max(self.status)
            .max(self.overridden)
            .max(self.removed)
            .max(self.health)
    }

    /// Whether any part of `self` is later than the same part of `other`.
    pub fn has_newer_part_than(&self, other: &PartStamps) -> bool {
        self.registration > other.registration
            || self.status > other.status
            || self.overridden > other.overridden
            || self.removed > other.removed
            || self.health > other.health
    }
}

/// What a server holds of one instance's parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parts {
    /// The registration document; `None` when only other parts are known here (a status
    /// override replicated for an instance this server never saw registered). Its `status`,
    /// `overriddenStatus` and server-set fields are not part of it: see [`Parts::status`].
    pub registration: Option<Instance>,
    pub own_status: InstanceStatus,
    /// The override in force; `None` when there is none (never set, or removed).
    pub overridden: Option<InstanceStatus>,
    /// The health checks' verdict (`health.rs`).
    pub health: Health,
    pub stamps: PartStamps,
}

impl Default for Parts {
    /// Nothing known: no registration, own status UNKNOWN, no override, passing, every stamp
    /// ZERO.
    fn default() -> Parts {
        Parts {
            registration: None,
            own_status: InstanceStatus::Unknown,
            overridden: None,
            health: Health::Passing,
            stamps: PartStamps::default(),
        }
    }
}

impl Parts {
    /// Whether the instance is registered: a registration later than its last cancel.
    pub fn is_live(&self) -> bool {
        self.registration.is_some() && self.stamps.registration > self.stamps.removed
    }

    /// The status readers see, from the parts alone: see [`status_of`].
    pub fn status(&self) -> InstanceStatus {
        status_of(self.own_status, self.overridden, self.health, &self.stamps)
    }

    /// Merges `theirs` into `self`, part by part; returns whether anything here changed.
    ///
    /// On equal stamps `self` is kept: distinct writes never share a stamp (see `hlc.rs`), so
    /// equal stamps mean the same write, except [`Stamp::SYNCED`] (copies from the start-up
    /// sync, of unknown history, which any real write replaces) and [`Stamp::ZERO`] (nothing).
    pub fn merge(&mut self, theirs: &Parts) -> bool {
        let before = (self.stamps, self.registration.is_some());
        let ours = &mut self.stamps;
        // The same registration, whose document only they still hold (a cancel's tombstone
        // drops it): taken only if the instance is live, where a reader would see it.
        let registration_missing = self.registration.is_none() && theirs.registration.is_some();
        let live_after = theirs.stamps.registration > ours.removed.max(theirs.stamps.removed);
        if theirs.stamps.registration > ours.registration
            || (theirs.stamps.registration == ours.registration
                && registration_missing
                && live_after)
        {
            self.registration.clone_from(&theirs.registration);
            ours.registration = theirs.stamps.registration;
        }
        if theirs.stamps.status > ours.status {
            self.own_status = theirs.own_status;
            ours.status = theirs.stamps.status;
        }
        if theirs.stamps.overridden > ours.overridden {
            self.overridden = theirs.overridden;
            ours.overridden = theirs.stamps.overridden;
        }
        if theirs.stamps.health > ours.health {
            self.health = theirs.health;
            ours.health = theirs.stamps.health;
        }
        ours.removed = ours.removed.max(theirs.stamps.removed);
        before != (self.stamps, self.registration.is_some())
    }

    // --- The writes, each stamping the parts it sets and no other. ---

    /// A client's (re-)registration, or a metadata update (Eureka's is a re-register):
    /// the document, and with it the status the client reports.
    pub fn register(&mut self, registration: Instance, own_status: InstanceStatus, at: Stamp) {
        self.registration = Some(registration);
        self.stamps.registration = at;
        self.own_status = own_status;
        self.stamps.status = at;
    }

    /// A metadata update: the document only; the status stays the client's.
    pub fn update_registration(&mut self, registration: Instance, at: Stamp) {
        self.registration = Some(registration);
        self.stamps.registration = at;
    }

    /// An operator's override (`PUT …/status`).
    pub fn set_override(&mut self, status: InstanceStatus, at: Stamp) {
        self.overridden = Some(status);
        self.stamps.overridden = at;
    }

    /// An operator's override removal (`DELETE …/status`), which also sets the instance's own
    /// status: to `value` when given, else UNKNOWN, so the next heartbeat gets 404 and the
    /// client registers again with its real status.
    pub fn remove_override(&mut self, value: Option<InstanceStatus>, at: Stamp) {
        self.overridden = None;
        self.stamps.overridden = at;
        self.own_status = value.unwrap_or(InstanceStatus::Unknown);
        self.stamps.status = at;
    }

    /// A health check's verdict, when it changes (`Registry::set_health`).
    pub fn set_health(&mut self, health: Health, at: Stamp) {
        self.health = health;
        self.stamps.health = at;
    }

    /// A cancel: the instance is removed, and its override with it (as Eureka's cancel
    /// drops the override); only a registration made later brings it back.
    pub fn cancel(&mut self, at: Stamp) {
        self.stamps.removed = at;
        self.overridden = None;
        self.stamps.overridden = at;
    }
}

/// The status readers see, as Eureka's rules give it, from the own status, the override and
/// which of the two was written last, and then the health verdict (`health.rs`, rule 3):
///
/// - an override set after the instance last reported its status is the status (Eureka's
///   `statusUpdate` sets it outright, whatever the instance said);
/// - otherwise the rules of a register apply: the instance's own DOWN, STARTING or UNKNOWN,
///   else the override, else its own status.
///
/// Eureka's `LeaseExistsRule` (a client re-registering UP keeps an OUT_OF_SERVICE the server
/// holds without an override) depends on the order writes arrived in, not on what they were;
/// it is left out, so that every server derives the same status from the same parts.
pub(crate) fn status_of(
    own: InstanceStatus,
    overridden: Option<InstanceStatus>,
    health: Health,
    stamps: &PartStamps,
) -> InstanceStatus {
    let status = match overridden {
        Some(status) if stamps.overridden > stamps.status => status,
        _ => {
            let input = StatusInput {
                own,
                existing: None,
                origin: Origin::Peer,
            };
            effective_status(input, || overridden).0
        }
    };
    with_health(status, overridden, health)
}

#[cfg(test)]
mod tests;

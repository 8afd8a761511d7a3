//! Leases: how long an instance stays registered without a heartbeat.
//!
//! A lease wraps the stored instance (its "holder", in Eureka's `Lease<InstanceInfo>` terms) and
//! the four timestamps readers see in `leaseInfo`. This is the one place where expiry is
//! defined, including Eureka's double-duration bug.

use crate::merge::Parts;
use crate::model::{Instance, LeaseInfo, Millis};
use crate::status_rules::as_override;
use crate::stored::StoredInstance;

/// The least time a restored lease lives beyond the instance's renewal interval: room for a
/// heartbeat that was due during the restart and is late (`persisted.rs`).
pub const RESTORE_MARGIN_MS: Millis = 10_000;

/// How a lease's expiry is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseExpiry {
    /// Expires `durationInSecs` after the last renewal, as Eureka documents it.
    Documented,
    /// Eureka's won't-fix bug: a renewed lease expires 2 × duration after the last renewal.
    LegacyDoubleDuration,
}

/// One registered instance and the timestamps of its lease (Eureka's `Lease`).
///
/// In the order written, what a renewal reads and writes first (`lease_map.rs` says why).
#[derive(Clone, Debug)]
#[repr(C)]
pub(crate) struct Lease {
    /// The stored instance. Its `leaseInfo` timestamps are stale; readers get them from the
    /// lease through [`Lease::decorated`]. Boxed: the lease maps keep their entries inline in
    /// tables an eighth to a half empty, and an empty slot should cost a pointer, not an
    /// instance.
    pub(crate) holder: Box<StoredInstance>,
    /// Eureka's `lastUpdateTimestamp`; see [`Lease::renew`] for what it means per mode.
    last_update_timestamp: Millis,
    expiry: LeaseExpiry,
    /// Restored from disk and not renewed since (`persisted.rs`): no evidence yet that the
    /// instance lives.
    restored_unrenewed: bool,
    duration_ms: Millis,
    registration_timestamp: Millis,
    eviction_timestamp: Millis,
    service_up_timestamp: Millis,
    /// The sequence number of the instance's latest delta-queue item, so that the next one can
    /// replace it without an index over the whole registry (see `delta.rs`). Carried from
    /// lease to lease across re-registers; it may name an item the purge has since dropped.
    pub(crate) delta_seq: Option<u64>,
}

impl Lease {
    /// A fresh lease, as every (re-)register creates one. The duration comes from the
    /// holder's `leaseInfo.durationInSecs`, 90 s when that is 0.
    pub(crate) fn new(holder: StoredInstance, expiry: LeaseExpiry, now: Millis) -> Lease {
        let duration_ms = Millis::from(effective_duration_secs(&holder.lease_info)) * 1000;
        Lease {
            holder: Box::new(holder),
            registration_timestamp: now,
            last_update_timestamp: now,
            eviction_timestamp: 0,
            service_up_timestamp: 0,
            duration_ms,
            expiry,
            delta_seq: None,
            restored_unrenewed: false,
        }
    }

    /// A lease restored from disk at `now` (`persisted.rs`): its registration and service-up
    /// times as they were, renewed as of the restore, and living at least the holder's renewal
    /// interval plus [`RESTORE_MARGIN_MS`] (a lease shorter than that would lapse before a
    /// live instance's next heartbeat).
    pub(crate) fn restored(
        holder: StoredInstance,
        expiry: LeaseExpiry,
        (registration_timestamp, service_up_timestamp): (Millis, Millis),
        now: Millis,
    ) -> Lease {
        let interval_ms = Millis::from(nonzero_or(
            holder.lease_info.renewal_interval_in_secs,
            LeaseInfo::DEFAULT_RENEWAL_INTERVAL_SECS,
        )) * 1000;
        let mut lease = Lease::new(holder, expiry, now);
        lease.registration_timestamp = registration_timestamp;
        lease.service_up_timestamp = service_up_timestamp;
        let shortfall = (interval_ms + RESTORE_MARGIN_MS - lease.duration_ms).max(0);
        lease.renew(now + shortfall);
        lease.restored_unrenewed = true;
        lease
    }

    /// Whether the lease was restored from disk and no heartbeat has renewed it since.
    pub(crate) fn is_restored_unrenewed(&self) -> bool {
        self.restored_unrenewed
    }

    /// Puts a new holder in this lease, keeping its timestamps: a peer's copy merged into an
    /// instance this server already holds changes what it says, not when it was renewed.
    pub(crate) fn replace_holder(&mut self, holder: StoredInstance) {
        self.duration_ms = Millis::from(effective_duration_secs(&holder.lease_info)) * 1000;
        *self.holder = holder;
    }

    /// A heartbeat (also used by status updates).
    ///
    /// Eureka's `Lease.renew` stores `now + duration`, and `isExpired` adds `duration` again, so
    /// a renewed lease lives twice as long as documented. Its own comment calls this wrong and
    /// keeps it for compatibility; `LegacyDoubleDuration` reproduces it, `Documented` does not.
    pub(crate) fn renew(&mut self, now: Millis) {
        self.restored_unrenewed = false;
        self.last_update_timestamp = match self.expiry {
            LeaseExpiry::Documented => now,
            LeaseExpiry::LegacyDoubleDuration => now + self.duration_ms,
        };
    }

    /// Takes a peer's later renewal of this instance (its `lastRenewalTimestamp`, which means
    /// what ours means: both servers run the same expiry mode), never beyond what a renewal
    /// made `now` would give. An earlier one changes nothing.
    pub(crate) fn adopt_renewal(&mut self, theirs: Millis, now: Millis) {
        let latest = match self.expiry {
            LeaseExpiry::Documented => now,
            LeaseExpiry::LegacyDoubleDuration => now + self.duration_ms,
        };
        if theirs > self.last_update_timestamp {
            // A peer renewed it later than we did: the instance lives.
            self.restored_unrenewed = false;
        }
        self.last_update_timestamp = self.last_update_timestamp.max(theirs.min(latest));
    }

    /// Marks the lease cancelled; the first cancel time sticks.
    pub(crate) fn cancel(&mut self, now: Millis) {
        if self.eviction_timestamp <= 0 {
            self.eviction_timestamp = now;
        }
    }

    /// Records when the instance first came up; later calls keep the first time.
    pub(crate) fn service_up(&mut self, now: Millis) {
        if self.service_up_timestamp == 0 {
            self.service_up_timestamp = now;
        }
    }

    pub(crate) fn service_up_timestamp(&self) -> Millis {
        self.service_up_timestamp
    }

    /// Carries `serviceUpTimestamp` over from the lease this one replaces (§6.3 step 3), so a
    /// re-register does not look like a fresh start.
    pub(crate) fn inherit_service_up(&mut self, service_up_timestamp: Millis) {
        self.service_up_timestamp = service_up_timestamp;
    }

    /// Eureka's `isExpired(additionalLeaseMs)`: cancelled, or silent for longer than the
    /// duration plus `additional_ms` (the eviction task's clock-drift compensation).
    pub(crate) fn is_expired(&self, now: Millis, additional_ms: Millis) -> bool {
        self.eviction_timestamp > 0
            || now > self.last_update_timestamp + self.duration_ms + additional_ms
    }

    /// A copy of the holder as readers see it: `leaseInfo` timestamps from this lease,
    /// durations from the client's lease terms with Eureka's defaults (Eureka's
    /// `decorateInstanceInfo`).
    pub(crate) fn decorated(&self) -> Instance {
        let mut instance = self.holder.to_instance();
        instance.lease_info = self.lease_info();
        instance
    }

    /// The `leaseInfo` a reader sees for this lease.
    pub(crate) fn lease_info(&self) -> LeaseInfo {
        let terms = &self.holder.lease_info;
        LeaseInfo {
            renewal_interval_in_secs: nonzero_or(
                terms.renewal_interval_in_secs,
                LeaseInfo::DEFAULT_RENEWAL_INTERVAL_SECS,
            ),
            duration_in_secs: effective_duration_secs(terms),
            registration_timestamp: self.registration_timestamp,
            last_renewal_timestamp: self.last_update_timestamp,
            eviction_timestamp: self.eviction_timestamp,
            service_up_timestamp: self.service_up_timestamp,
        }
    }
}

/// A lease as reads see it: missing, or expired while lease expiration is enabled, reads as
/// absent (Eureka's `getInstanceByAppAndId`). Expired leases stay visible during
/// self-preservation, since they are not going to be evicted.
pub(crate) fn is_visible(lease: &Lease, now: Millis, expiration_enabled: bool) -> bool {
    !(expiration_enabled && lease.is_expired(now, 0))
}

/// Eureka's `decorateInstanceInfo`.
pub(crate) fn decorate(lease: &Lease, own_instance_id: Option<&str>) -> Instance {
    let mut instance = lease.decorated();
    instance.is_coordinating_discovery_server = own_instance_id == Some(instance.id());
    instance
}

/// A lease's parts, as `merge.rs` compares them.
pub(crate) fn parts_of(lease: &Lease) -> Parts {
    let holder = &lease.holder;
    Parts {
        registration: Some(holder.to_instance()),
        own_status: holder.own_status,
        overridden: as_override(holder.overridden_status),
        health: holder.health,
        stamps: holder.stamps,
    }
}

fn effective_duration_secs(terms: &LeaseInfo) -> u32 {
    nonzero_or(terms.duration_in_secs, LeaseInfo::DEFAULT_DURATION_SECS)
}

fn nonzero_or(value: u32, default: u32) -> u32 {
    if value == 0 {
        default
    } else {
        value
    }
}

#[cfg(test)]
mod tests;

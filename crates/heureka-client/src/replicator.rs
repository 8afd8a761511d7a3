//! The instance's own info and how changes to it reach the server, as Java's
//! `InstanceInfoReplicator` does it (§8.5): a change (status, health, metadata) marks the info
//! dirty with a new `lastDirtyTimestamp`; a replication round, periodic or on demand and
//! rate-limited, consults the health check and re-registers the instance if it is dirty.

use std::collections::BTreeMap;
use std::time::Duration;

use heureka_core::{Instance, InstanceStatus, Millis};
use tokio::time::Instant;

use crate::health::registered_status;

/// What the client registers and why.
#[derive(Debug)]
pub(crate) struct OwnInstance {
    /// The registered document; its `status` is [`registered_status`] of the two below.
    pub(crate) instance: Instance,
    /// What the application said about itself (`set_status`), `UP` unless told otherwise.
    reported: InstanceStatus,
    /// The health check's last answer, if there is a health check and it has answered.
    health: Option<InstanceStatus>,
    /// The `lastDirtyTimestamp` of a change not yet registered.
    dirty_since: Option<Millis>,
}

/// A status transition of the registered instance.
pub(crate) type StatusChange = (InstanceStatus, InstanceStatus);

impl OwnInstance {
    pub(crate) fn new(instance: Instance, reported: InstanceStatus) -> OwnInstance {
        let mut own = OwnInstance {
            instance,
            reported,
            health: None,
            dirty_since: None,
        };
        own.instance.status = reported;
        own
    }

    pub(crate) fn set_reported(
        &mut self,
        status: InstanceStatus,
        now: Millis,
    ) -> Option<StatusChange> {
        self.reported = status;
        self.rederive(now)
    }

    pub(crate) fn set_health(
        &mut self,
        status: InstanceStatus,
        now: Millis,
    ) -> Option<StatusChange> {
        self.health = Some(status);
        self.rederive(now)
    }

    pub(crate) fn merge_metadata(&mut self, entries: BTreeMap<String, String>, now: Millis) {
        self.instance.metadata.extend(entries);
        self.mark_dirty(now);
    }

    /// Marks the info changed: a new `lastDirtyTimestamp`, strictly later than the last, so
    /// that the server takes the next registration (it keeps a copy whose timestamp is newer)
    /// and a heartbeat carrying it is answered 404, which re-registers, should the registration
    /// itself be lost.
    pub(crate) fn mark_dirty(&mut self, now: Millis) {
        let stamp = now.max(self.instance.last_dirty_timestamp + 1);
        self.instance.last_dirty_timestamp = stamp;
        self.dirty_since = Some(stamp);
    }

    /// The `lastDirtyTimestamp` to register, if a change is waiting.
    pub(crate) fn dirty_since(&self) -> Option<Millis> {
        self.dirty_since
    }

    /// A registration made with the info as of `stamp` succeeded; the info is clean unless it
    /// changed again meanwhile.
    pub(crate) fn registered(&mut self, stamp: Millis) {
        if self.dirty_since.is_some_and(|dirty| dirty <= stamp) {
            self.dirty_since = None;
        }
    }

    fn rederive(&mut self, now: Millis) -> Option<StatusChange> {
        let old = self.instance.status;
        let new = registered_status(self.reported, self.health);
        if old == new {
            return None;
        }
        self.instance.status = new;
        self.mark_dirty(now);
        Some((old, new))
    }
}

/// The on-demand update's token bucket (Java's `RateLimiter` as the replicator uses it): a burst
/// of `burst`, refilled at `60 × burst / interval` per minute, 4 with the defaults.
#[derive(Debug)]
pub(crate) struct RateLimiter {
    burst: f64,
    per_second: f64,
    tokens: f64,
    refilled_at: Instant,
}

/// Java's burst size for on-demand updates, fixed in `DiscoveryClient`.
pub(crate) const ON_DEMAND_BURST: u32 = 2;

impl RateLimiter {
    pub(crate) fn new(burst: u32, replication_interval: Duration, now: Instant) -> RateLimiter {
        let interval_secs = replication_interval.as_secs().max(1);
        // Integer division, as Java computes the allowed rate.
        let per_minute = (60 * u64::from(burst) / interval_secs) as f64;
        RateLimiter {
            burst: f64::from(burst),
            per_second: per_minute / 60.0,
            tokens: f64::from(burst),
            refilled_at: now,
        }
    }

    /// Takes a token if one is there.
    pub(crate) fn try_acquire(&mut self, now: Instant) -> bool {
        let elapsed = now
            .saturating_duration_since(self.refilled_at)
            .as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.per_second).min(self.burst);
        self.refilled_at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn own() -> OwnInstance {
        let mut instance = Instance::new("BILLING", "b1", "host", "10.0.0.1", 0);
        instance.last_dirty_timestamp = 1_000;
        OwnInstance::new(instance, InstanceStatus::Up)
    }

    #[test]
    fn a_status_change_marks_the_info_dirty_with_a_later_timestamp() {
        let mut own = own();
        let change = own.set_reported(InstanceStatus::Down, 1_000);
        assert_eq!(change, Some((InstanceStatus::Up, InstanceStatus::Down)));
        assert_eq!(own.dirty_since(), Some(1_001));
        assert_eq!(own.instance.last_dirty_timestamp, 1_001);
    }

    #[test]
    fn an_unchanged_status_is_not_a_change() {
        let mut own = own();
        assert_eq!(own.set_health(InstanceStatus::Up, 2_000), None);
        assert_eq!(own.dirty_since(), None);
    }

    #[test]
    fn a_change_made_during_a_registration_keeps_the_info_dirty() {
        let mut own = own();
        own.set_reported(InstanceStatus::Down, 2_000);
        let sent = own.dirty_since().unwrap();
        own.merge_metadata(BTreeMap::from([("k".into(), "v".into())]), 3_000);
        own.registered(sent);
        assert_eq!(own.dirty_since(), Some(3_000));
        own.registered(3_000);
        assert_eq!(own.dirty_since(), None);
    }

    #[test]
    fn the_on_demand_limiter_allows_a_burst_of_two_then_four_a_minute() {
        let start = Instant::now();
        let mut limiter = RateLimiter::new(ON_DEMAND_BURST, Duration::from_secs(30), start);
        assert!(limiter.try_acquire(start));
        assert!(limiter.try_acquire(start));
        assert!(!limiter.try_acquire(start));
        // Four a minute: one token every 15 s.
        assert!(!limiter.try_acquire(start + Duration::from_secs(14)));
        assert!(limiter.try_acquire(start + Duration::from_secs(15)));
        assert!(!limiter.try_acquire(start + Duration::from_secs(15)));
    }

    #[test]
    fn an_idle_limiter_refills_only_up_to_the_burst() {
        let start = Instant::now();
        let mut limiter = RateLimiter::new(ON_DEMAND_BURST, Duration::from_secs(30), start);
        let later = start + Duration::from_secs(3600);
        assert!(limiter.try_acquire(later));
        assert!(limiter.try_acquire(later));
        assert!(!limiter.try_acquire(later));
    }
}

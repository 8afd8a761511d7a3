//! Lease expiry, in both modes, and the timestamps readers see.

use crate::lease::{Lease, LeaseExpiry};
use crate::model::{Instance, LeaseInfo};
use crate::stored::{Interner, StoredInstance};
use crate::test_util::instance;

fn stored(instance: Instance) -> StoredInstance {
    StoredInstance::new(instance, &mut Interner::default())
}

const DURATION: i64 = 90_000;

fn lease(expiry: LeaseExpiry) -> Lease {
    Lease::new(stored(instance("app", "a1")), expiry, 0)
}

/// A lease that started at 0 and was renewed at 30 s.
fn renewed_at_30s(expiry: LeaseExpiry) -> Lease {
    let mut lease = lease(expiry);
    lease.renew(30_000);
    lease
}

/// A documented lease that started at 0 and was cancelled at 10.
fn cancelled_at_10() -> Lease {
    let mut lease = lease(LeaseExpiry::Documented);
    lease.cancel(10);
    lease
}

/// `lease` is alive at `last_alive` and expired a millisecond later.
fn assert_alive_until(lease: &Lease, last_alive: i64, compensation: i64) {
    assert!(!lease.is_expired(last_alive, compensation));
    assert!(lease.is_expired(last_alive + 1, compensation));
}

#[test]
fn never_renewed_lease_expires_after_duration() {
    for expiry in [LeaseExpiry::Documented, LeaseExpiry::LegacyDoubleDuration] {
        let lease = lease(expiry);
        assert!(!lease.is_expired(DURATION, 0), "{expiry:?}");
        assert!(lease.is_expired(DURATION + 1, 0), "{expiry:?}");
    }
}

#[test]
fn renewed_lease_expires_after_duration() {
    assert_alive_until(
        &renewed_at_30s(LeaseExpiry::Documented),
        30_000 + DURATION,
        0,
    );
}

#[test]
fn legacy_expiry_waits_twice_the_duration() {
    let lease = renewed_at_30s(LeaseExpiry::LegacyDoubleDuration);
    assert_alive_until(&lease, 30_000 + 2 * DURATION, 0);
}

#[test]
fn compensation_delays_expiry() {
    let lease = lease(LeaseExpiry::Documented);
    assert!(!lease.is_expired(DURATION + 5_000, 5_000));
    assert!(lease.is_expired(DURATION + 5_001, 5_000));
}

#[test]
fn cancelled_lease_is_expired_at_once() {
    assert!(cancelled_at_10().is_expired(11, 0));
}

#[test]
fn cancel_keeps_the_first_eviction_time() {
    let mut lease = cancelled_at_10();
    lease.cancel(20);
    assert_eq!(lease.lease_info().eviction_timestamp, 10);
}

#[test]
fn client_duration_sets_the_lease_length() {
    let mut holder = instance("app", "a1");
    holder.lease_info.duration_in_secs = 10;
    let lease = Lease::new(stored(holder), LeaseExpiry::Documented, 0);
    assert!(lease.is_expired(10_001, 0));
}

#[test]
fn zero_durations_fall_back_to_eureka_defaults() {
    let mut holder = instance("app", "a1");
    holder.lease_info.duration_in_secs = 0;
    holder.lease_info.renewal_interval_in_secs = 0;
    let lease = Lease::new(stored(holder), LeaseExpiry::Documented, 0);
    assert!(!lease.is_expired(DURATION, 0));
    let LeaseInfo {
        renewal_interval_in_secs,
        duration_in_secs,
        ..
    } = lease.lease_info();
    assert_eq!((renewal_interval_in_secs, duration_in_secs), (30, 90));
}

#[test]
fn last_renewal_equals_registration_before_any_renew() {
    let lease = Lease::new(
        stored(instance("app", "a1")),
        LeaseExpiry::LegacyDoubleDuration,
        1_000,
    );
    let info = lease.lease_info();
    assert_eq!(
        (info.registration_timestamp, info.last_renewal_timestamp),
        (1_000, 1_000)
    );
}

#[test]
fn documented_last_renewal_is_the_renew_time() {
    let lease = renewed_at_30s(LeaseExpiry::Documented);
    assert_eq!(lease.lease_info().last_renewal_timestamp, 30_000);
}

#[test]
fn legacy_last_renewal_is_renew_time_plus_duration() {
    assert_eq!(
        renewed_at_30s(LeaseExpiry::LegacyDoubleDuration)
            .lease_info()
            .last_renewal_timestamp,
        30_000 + DURATION
    );
}

#[test]
fn service_up_keeps_the_first_time() {
    let mut lease = lease(LeaseExpiry::Documented);
    lease.service_up(5);
    lease.service_up(9);
    assert_eq!(lease.lease_info().service_up_timestamp, 5);
}

#[test]
fn decorated_instance_overwrites_client_timestamps() {
    let mut holder = instance("app", "a1");
    holder.lease_info = LeaseInfo {
        registration_timestamp: 777,
        last_renewal_timestamp: 777,
        ..LeaseInfo::default()
    };
    let lease = Lease::new(stored(holder), LeaseExpiry::Documented, 1_000);
    let decorated = lease.decorated();
    assert_eq!(decorated.lease_info.registration_timestamp, 1_000);
    assert_eq!(decorated.lease_info.last_renewal_timestamp, 1_000);
}

/// What a renewal reads and writes of a lease comes first, in 18 bytes: the holder, the
/// renewal time and the two flags (`lease_map.rs`, `Slot`).
#[test]
fn a_renewal_reads_the_front_of_its_lease() {
    use std::mem::offset_of;
    assert_eq!(offset_of!(Lease, holder), 0);
    assert_eq!(offset_of!(Lease, last_update_timestamp), 8);
    assert!(offset_of!(Lease, expiry) < 18);
    assert!(offset_of!(Lease, restored_unrenewed) < 18);
}

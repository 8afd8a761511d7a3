//! The registry digest: every lease, plus a tombstone per removal the delta queue remembers.

use crate::instance_digest::InstanceDigest;
use crate::merge::PartStamps;
use crate::model::InstanceStatus::OutOfService;
use crate::origin::Origin;
use crate::registry::Registry;
use crate::test_util::{
    expiring_registry, heartbeat, holding, instance_with_dirty, live_digest, register_all, registry,
};

/// Past the 90 s lease of anything registered at 0 and never renewed.
const EXPIRED: i64 = 90_001;

fn ids(digest: &[InstanceDigest]) -> Vec<(&str, &str, bool)> {
    digest
        .iter()
        .map(|entry| (entry.app.as_str(), entry.id.as_str(), entry.removed))
        .collect()
}

/// The stamps [`Registry::stamped_copy`] holds for an instance of ORDERS.
fn stamps_of(registry: &Registry, id: &str) -> PartStamps {
    registry.stamps_of("ORDERS", id).unwrap()
}

#[test]
fn empty_registry_has_an_empty_digest() {
    assert_eq!(registry().digest(), vec![]);
}

#[test]
fn live_instance_is_listed_with_its_status_and_timestamps() {
    let mut registry = registry();
    registry.register(instance_with_dirty("orders", "o1", 3), Origin::Client, 5);
    heartbeat(&mut registry, "ORDERS", "o1", 40);
    assert_eq!(
        registry.digest(),
        vec![InstanceDigest {
            stamps: Some(stamps_of(&registry, "o1")),
            ..live_digest("ORDERS", "o1", 3, 5, 40)
        }]
    );
}

#[test]
fn digest_is_sorted_by_app_then_id() {
    let registry = holding(
        registry(),
        &[("payments", "p1"), ("orders", "o2"), ("orders", "o1")],
        0,
    );
    assert_eq!(
        ids(&registry.digest()),
        [
            ("ORDERS", "o1", false),
            ("ORDERS", "o2", false),
            ("PAYMENTS", "p1", false)
        ]
    );
}

#[test]
fn status_override_shows_as_status_and_overridden_status() {
    let mut registry = holding(registry(), &[("orders", "o1")], 0);
    registry.set_status_override("orders", "o1", OutOfService, Some(7), Origin::Client, 50);
    let entry = &registry.digest()[0];
    assert_eq!(
        (
            entry.status,
            entry.overridden_status,
            entry.last_dirty_timestamp
        ),
        (OutOfService, OutOfService, 7)
    );
    assert_eq!(entry.last_updated_timestamp, 50);
}

#[test]
fn cancelled_instance_is_a_tombstone_of_its_status_at_the_cancel() {
    let mut registry = registry();
    registry.register(instance_with_dirty("orders", "o1", 3), Origin::Client, 5);
    registry.cancel("orders", "o1", Origin::Client, 60);
    assert_eq!(
        registry.digest(),
        vec![InstanceDigest {
            removed: true,
            stamps: Some(stamps_of(&registry, "o1")),
            // A cancel's tombstone keeps the stamps, not the document (`tombstones.rs`) (dirty
            // timestamp 0), and ends the lease's renewals at the cancel (renewed at 60).
            ..live_digest("ORDERS", "o1", 0, 60, 60)
        }]
    );
}

#[test]
fn evicted_instance_is_a_tombstone() {
    let mut registry = holding(expiring_registry(), &[("orders", "o1")], 0);
    registry.evict(EXPIRED, 0, 1);
    assert_eq!(ids(&registry.digest()), [("ORDERS", "o1", true)]);
}

#[test]
fn expired_lease_not_yet_evicted_is_still_live() {
    let registry = holding(expiring_registry(), &[("orders", "o1")], 0);
    assert!(registry.instance("orders", "o1", EXPIRED).is_none());
    assert_eq!(ids(&registry.digest()), [("ORDERS", "o1", false)]);
}

#[test]
fn instance_registered_again_after_a_cancel_is_live_and_listed_once() {
    let mut registry = holding(registry(), &[("orders", "o1")], 0);
    registry.cancel("orders", "o1", Origin::Client, 10);
    register_all(&mut registry, &[("orders", "o1")], 20);
    assert_eq!(ids(&registry.digest()), [("ORDERS", "o1", false)]);
}

#[test]
fn tombstone_lives_as_long_as_its_retention() {
    let mut registry = holding(registry(), &[("orders", "o1")], 0);
    registry.cancel("orders", "o1", Origin::Client, 10);
    // Default retention is 300 s, measured from the removal.
    registry.purge_recently_changed(300_010);
    assert_eq!(ids(&registry.digest()), [("ORDERS", "o1", true)]);
    registry.purge_recently_changed(300_011);
    assert_eq!(registry.digest(), vec![]);
}

#[test]
fn cancel_of_an_unknown_instance_leaves_no_tombstone() {
    let mut registry = registry();
    registry.cancel("orders", "ghost", Origin::Client, 10);
    assert_eq!(registry.digest(), vec![]);
}

#[test]
fn live_entry_carries_the_stamps_of_its_lease() {
    let mut registry = holding(registry(), &[("orders", "o1")], 0);
    registry.set_status_override("orders", "o1", OutOfService, None, Origin::Client, 50);
    let stamps = registry.digest()[0].stamps.expect("a lease's stamps");
    assert!(!stamps.registration.is_zero());
    assert!(stamps.overridden > stamps.registration);
    assert!(stamps.removed.is_zero());
}

#[test]
fn cancelled_tombstone_carries_the_stamp_of_its_cancel() {
    let mut registry = holding(registry(), &[("orders", "o1")], 0);
    let registered = registry.digest()[0].stamps.unwrap();
    registry.cancel("orders", "o1", Origin::Client, 60);
    let stamps = registry.digest()[0].stamps.expect("the tombstone's stamps");
    assert!(stamps.removed > registered.registration);
    assert_eq!(stamps.registration, registered.registration);
}

#[test]
fn live_and_removed_instances_sort_together() {
    let mut registry = holding(
        registry(),
        &[("orders", "o1"), ("orders", "o2"), ("orders", "o3")],
        0,
    );
    registry.cancel("orders", "o2", Origin::Peer, 10);
    assert_eq!(
        ids(&registry.digest()),
        [
            ("ORDERS", "o1", false),
            ("ORDERS", "o2", true),
            ("ORDERS", "o3", false)
        ]
    );
}

//! Status overrides (§6.7): setting and removing an operator's override.

use crate::model::ActionType;
use crate::model::InstanceStatus::{OutOfService, Unknown, Up};
use crate::origin::Origin;
use crate::test_util::{
    expiring_registry, holding_a1, out_of_service_by_operator, registered_with_dirty, registry,
    status_of,
};

#[test]
fn status_override_sets_status_and_records_override() {
    let mut registry = holding_a1(registry());
    assert!(registry.set_status_override("a", "a1", OutOfService, Some(500), Origin::Client, 10));
    let stored = registry.instance("a", "a1", 10).unwrap();
    assert_eq!(
        (stored.status, stored.overridden_status),
        (OutOfService, OutOfService)
    );
    assert_eq!(
        (stored.last_dirty_timestamp, stored.last_updated_timestamp),
        (500, 10)
    );
    assert_eq!(stored.action_type, Some(ActionType::Modified));
}

#[test]
fn status_override_keeps_a_newer_stored_dirty_timestamp() {
    let mut registry = registered_with_dirty(900);
    registry.set_status_override("a", "a1", OutOfService, Some(500), Origin::Client, 10);
    assert_eq!(
        registry
            .instance("a", "a1", 10)
            .unwrap()
            .last_dirty_timestamp,
        900
    );
}

#[test]
fn status_override_to_the_current_status_records_nothing() {
    let mut registry = holding_a1(registry());
    let before = registry.version();
    assert!(registry.set_status_override("a", "a1", Up, None, Origin::Client, 10));
    assert_eq!(registry.version(), before);
    assert!(registry.status_overrides(10).is_empty());
}

#[test]
fn status_override_of_unknown_instance_is_false() {
    let mut registry = registry();
    assert!(!registry.set_status_override("a", "a1", OutOfService, None, Origin::Client, 0));
}

#[test]
fn status_override_of_expired_lease_is_false_when_expiry_is_enabled() {
    let mut registry = holding_a1(expiring_registry());
    assert!(!registry.set_status_override("a", "a1", OutOfService, None, Origin::Client, 90_001));
}

#[test]
fn status_override_of_expired_lease_works_in_self_preservation() {
    let mut registry = holding_a1(registry());
    assert!(registry.set_status_override("a", "a1", OutOfService, None, Origin::Client, 90_001));
}

#[test]
fn status_override_renews_without_counting_a_renew() {
    let mut registry = holding_a1(expiring_registry());
    registry.set_status_override("a", "a1", OutOfService, None, Origin::Client, 60_000);
    assert!(registry.instance("a", "a1", 150_000).is_some());
    registry.roll_renews_bucket();
    assert_eq!(registry.self_preservation().renews_last_min, 0);
}

#[test]
fn delete_override_with_a_value_sets_that_status() {
    let mut registry = out_of_service_by_operator();
    assert!(registry.delete_status_override("a", "a1", Some(Up), None, Origin::Client, 20));
    let stored = registry.instance("a", "a1", 20).unwrap();
    assert_eq!((stored.status, stored.overridden_status), (Up, Unknown));
    assert!(registry.status_overrides(20).is_empty());
}

#[test]
fn delete_override_without_an_override_changes_nothing() {
    let mut registry = holding_a1(registry());
    let before = registry.version();
    assert!(registry.delete_status_override("a", "a1", None, None, Origin::Client, 10));
    assert_eq!(status_of(&registry, "a", "a1"), Some(Up));
    assert_eq!(registry.version(), before);
}

#[test]
fn delete_override_of_unknown_instance_is_false() {
    let mut registry = registry();
    assert!(!registry.delete_status_override("a", "a1", None, None, Origin::Client, 0));
}

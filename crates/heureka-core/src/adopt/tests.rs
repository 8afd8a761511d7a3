//! Adopting a Java peer's copy: its override taken, or ours kept or removed, as a peer's write.

use crate::model::InstanceStatus::{Down, OutOfService, Unknown, Up};
use crate::origin::Origin;
use crate::test_util::{instance, instance_with_dirty, registry};

#[test]
fn adopting_a_peer_copy_replaces_ours_even_with_an_override_of_our_own() {
    let mut registry = registry();
    registry.register(instance("orders", "o1"), Origin::Client, 0);
    registry.set_status_override("orders", "o1", Down, None, Origin::Client, 1);
    let mut theirs = instance_with_dirty("orders", "o1", 10);
    theirs.status = OutOfService;
    theirs.overridden_status = OutOfService;
    registry.adopt_peer_copy(theirs, 2);
    let stored = registry.instance("orders", "o1", 2).unwrap();
    assert_eq!(stored.status, OutOfService);
    assert_eq!(stored.overridden_status, OutOfService);
    assert_eq!(stored.last_dirty_timestamp, 10);
}

#[test]
fn adopting_a_peer_copy_is_a_peer_write() {
    let mut registry = registry();
    registry.adopt_peer_copy(instance("orders", "o1"), 0);
    let changes = registry.take_changes();
    assert_eq!(changes[0].origin, Origin::Peer);
}

#[test]
fn adopting_a_peer_copy_without_an_override_keeps_ours() {
    let mut registry = registry();
    registry.register(instance("orders", "o1"), Origin::Client, 0);
    registry.set_status_override("orders", "o1", OutOfService, None, Origin::Client, 1);
    registry.adopt_peer_copy(instance_with_dirty("orders", "o1", 10), 2);
    let stored = registry.instance("orders", "o1", 2).unwrap();
    assert_eq!(stored.overridden_status, OutOfService);
    assert_eq!(stored.status, OutOfService);
}

#[test]
fn repairing_from_a_peer_copy_without_an_override_removes_ours() {
    let mut registry = registry();
    registry.register(instance("orders", "o1"), Origin::Client, 0);
    registry.set_status_override("orders", "o1", OutOfService, None, Origin::Client, 1);
    registry.repair_from_peer(instance_with_dirty("orders", "o1", 10), 2);
    let stored = registry.instance("orders", "o1", 2).unwrap();
    assert_eq!(stored.overridden_status, Unknown);
    assert_eq!(stored.status, Up);
    assert!(registry.status_overrides(2).is_empty());
}

#[test]
fn repairing_from_a_peer_copy_takes_its_override() {
    let mut registry = registry();
    registry.register(instance("orders", "o1"), Origin::Client, 0);
    let mut theirs = instance_with_dirty("orders", "o1", 10);
    theirs.status = OutOfService;
    theirs.overridden_status = OutOfService;
    registry.repair_from_peer(theirs, 2);
    let stored = registry.instance("orders", "o1", 2).unwrap();
    assert_eq!(stored.overridden_status, OutOfService);
    assert_eq!(stored.status, OutOfService);
}

#[test]
fn repairing_from_a_peer_copy_is_a_peer_write() {
    let mut registry = registry();
    registry.repair_from_peer(instance("orders", "o1"), 0);
    let changes = registry.take_changes();
    assert!(changes.iter().all(|change| change.origin == Origin::Peer));
}

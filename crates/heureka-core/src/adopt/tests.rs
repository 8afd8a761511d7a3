//! Adopting a Java peer's copy: its override taken, or ours kept or removed, as a peer's write.

use crate::model::Instance;
use crate::model::InstanceStatus::{self, Down, OutOfService, Unknown, Up};
use crate::origin::Origin;
use crate::registry::Registry;
use crate::test_util::{instance, instance_with_dirty, registry};

/// A registry holding `orders/o1`, registered at 0, with an operator's override at 1.
fn overridden(status: InstanceStatus) -> Registry {
    let mut registry = registry();
    registry.register(instance("orders", "o1"), Origin::Client, 0);
    registry.set_status_override("orders", "o1", status, None, Origin::Client, 1);
    registry
}

/// A peer's newer copy of `orders/o1`, which it holds OUT_OF_SERVICE by an override.
fn their_out_of_service_copy() -> Instance {
    let mut theirs = instance_with_dirty("orders", "o1", 10);
    theirs.status = OutOfService;
    theirs.overridden_status = OutOfService;
    theirs
}

/// Our copy of `orders/o1` once the peer's was taken, at 2.
fn ours(registry: &Registry) -> Instance {
    registry.instance("orders", "o1", 2).unwrap()
}

/// Our registry, overridden OUT_OF_SERVICE, and our copy once `take` took the peer's newer
/// copy without an override at 2.
fn after_a_copy_without_override<R>(
    take: impl FnOnce(&mut Registry, Instance) -> R,
) -> (Registry, Instance) {
    let mut registry = overridden(OutOfService);
    take(&mut registry, instance_with_dirty("orders", "o1", 10));
    let stored = ours(&registry);
    (registry, stored)
}

#[test]
fn adopting_a_peer_copy_replaces_ours_even_with_an_override_of_our_own() {
    let mut registry = overridden(Down);
    let theirs = their_out_of_service_copy();
    registry.adopt_peer_copy(theirs, 2);
    let stored = ours(&registry);
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
    let (_, stored) = after_a_copy_without_override(|ours, theirs| ours.adopt_peer_copy(theirs, 2));
    assert_eq!(stored.overridden_status, OutOfService);
    assert_eq!(stored.status, OutOfService);
}

#[test]
fn repairing_from_a_peer_copy_without_an_override_removes_ours() {
    let (registry, stored) =
        after_a_copy_without_override(|ours, theirs| ours.repair_from_peer(theirs, 2));
    assert_eq!(stored.overridden_status, Unknown);
    assert_eq!(stored.status, Up);
    assert!(registry.status_overrides(2).is_empty());
}

#[test]
fn repairing_from_a_peer_copy_takes_its_override() {
    let mut registry = registry();
    registry.register(instance("orders", "o1"), Origin::Client, 0);
    let theirs = their_out_of_service_copy();
    registry.repair_from_peer(theirs, 2);
    let stored = ours(&registry);
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

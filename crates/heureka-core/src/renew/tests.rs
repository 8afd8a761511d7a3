//! Renew (§6.4, §3.9): heartbeats, the dirty-timestamp answers, and the status the override rules
//! give.

use crate::model::InstanceStatus::{OutOfService, Unknown, Up};
use crate::model::{ActionType, Millis};
use crate::origin::Origin;
use crate::outcomes::RenewOutcome;
use crate::test_util::{
    expiring_registry, heartbeat, holding_a1, instance_with_dirty, out_of_service_by_operator,
    register_all, registered_with_dirty, registry, status_of,
};

/// A renew of `a/a1`, registered with dirty timestamp 200, that carries dirty timestamp `dirty`.
fn renew_against_dirty_200(dirty: Millis, origin: Origin) -> RenewOutcome {
    let mut registry = registered_with_dirty(200);
    registry.renew("a", "a1", Some(dirty), None, origin, 10)
}

#[test]
fn renew_of_unknown_instance_is_not_found() {
    assert_eq!(
        heartbeat(&mut registry(), "a", "a1", 0),
        RenewOutcome::NotFound
    );
}

#[test]
fn plain_renew_does_not_bump_the_version() {
    let mut registry = holding_a1(registry());
    let before = registry.version();
    heartbeat(&mut registry, "a", "a1", 30_000);
    assert_eq!(registry.version(), before);
}

#[test]
fn renew_extends_the_lease() {
    let mut registry = holding_a1(expiring_registry());
    heartbeat(&mut registry, "a", "a1", 60_000);
    assert!(registry.instance("a", "a1", 120_000).is_some());
    assert!(registry.instance("a", "a1", 150_001).is_none());
}

#[test]
fn renew_with_newer_client_timestamp_asks_for_reregistration() {
    let mut registry = expiring_registry();
    registry.register(instance_with_dirty("a", "a1", 100), Origin::Client, 0);
    let outcome = registry.renew("a", "a1", Some(200), None, Origin::Client, 60_000);
    assert_eq!(outcome, RenewOutcome::ClientNewer);
    assert!(
        registry.instance("a", "a1", 150_000).is_some(),
        "the lease was renewed anyway"
    );
}

#[test]
fn renew_from_peer_with_newer_timestamp_stores_its_override() {
    let mut registry = registered_with_dirty(100);
    let outcome = registry.renew("a", "a1", Some(200), Some(OutOfService), Origin::Peer, 10);
    assert_eq!(outcome, RenewOutcome::ClientNewer);
    assert_eq!(
        registry.status_overrides(10),
        vec![("a1".to_owned(), OutOfService)]
    );
    assert_eq!(
        registry.instance("a", "a1", 10).unwrap().overridden_status,
        OutOfService
    );
}

#[test]
fn renew_from_client_with_newer_timestamp_ignores_override_parameter() {
    let mut registry = registered_with_dirty(100);
    registry.renew("a", "a1", Some(200), Some(OutOfService), Origin::Client, 10);
    assert!(registry.status_overrides(10).is_empty());
}

#[test]
fn renew_from_peer_with_older_timestamp_returns_registry_copy() {
    let RenewOutcome::RegistryNewer(ours) = renew_against_dirty_200(100, Origin::Peer) else {
        panic!("expected RegistryNewer");
    };
    assert_eq!((ours.id(), ours.last_dirty_timestamp), ("a1", 200));
    assert_eq!(
        ours.lease_info.last_renewal_timestamp, 10,
        "decorated after the renew"
    );
}

#[test]
fn renew_from_client_with_older_timestamp_is_renewed() {
    assert_eq!(
        renew_against_dirty_200(100, Origin::Client),
        RenewOutcome::Renewed
    );
}

#[test]
fn renew_with_equal_timestamp_is_renewed() {
    assert_eq!(
        renew_against_dirty_200(200, Origin::Peer),
        RenewOutcome::Renewed
    );
}

#[test]
fn status_flip_on_renew_is_a_modified_change() {
    // A peer's override lands in the map while the instance is still UP; the next heartbeat's
    // rules flip it, which Eureka does silently and we record.
    let mut registry = registered_with_dirty(100);
    registry.renew("a", "a1", Some(200), Some(OutOfService), Origin::Peer, 10);
    assert_eq!(status_of(&registry, "a", "a1"), Some(Up));
    let before = registry.version();
    assert_eq!(
        heartbeat(&mut registry, "a", "a1", 20),
        RenewOutcome::Renewed
    );
    let stored = registry.instance("a", "a1", 20).unwrap();
    assert_eq!(
        (stored.status, stored.action_type),
        (OutOfService, Some(ActionType::Modified))
    );
    assert!(registry.version() > before);
    assert_eq!(
        registry.delta().applications[0].instances[0].status,
        OutOfService
    );
}

#[test]
fn deleted_override_forces_reregistration_via_404() {
    let mut registry = out_of_service_by_operator();
    registry.delete_status_override("a", "a1", None, None, Origin::Client, 20);
    assert_eq!(status_of(&registry, "a", "a1"), Some(Unknown));
    assert_eq!(
        heartbeat(&mut registry, "a", "a1", 30),
        RenewOutcome::NotFound
    );
    register_all(&mut registry, &[("a", "a1")], 40);
    assert_eq!(status_of(&registry, "a", "a1"), Some(Up));
}

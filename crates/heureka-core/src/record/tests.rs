//! Every write yields a change value (what the server fans out to replication and listeners).

use crate::change::{Change, ChangeKind};
use crate::model::InstanceStatus::{OutOfService, Unknown, Up};
use crate::origin::Origin;
use crate::registry::Registry;
use crate::test_util::{expiring_registry, heartbeat, instance, instance_with_dirty, registry};

fn kinds(changes: &[Change]) -> Vec<ChangeKind> {
    changes.iter().map(|change| change.kind).collect()
}

/// `registry` holding `orders/o1`, registered by its client at 0, with the outbox emptied.
fn quiet(mut registry: Registry) -> Registry {
    registry.register(instance("orders", "o1"), Origin::Client, 0);
    registry.take_changes();
    registry
}

#[test]
fn register_yields_registered_with_the_stored_status() {
    let mut registry = registry();
    registry.register(
        instance_with_dirty("orders", "o1", 42),
        Origin::Client,
        1_000,
    );
    let changes = registry.take_changes();
    assert_eq!(
        changes,
        vec![Change {
            kind: ChangeKind::Registered,
            app: "ORDERS".into(),
            id: "o1".into(),
            origin: Origin::Client,
            at: 1_000,
            status: Up,
            overridden_status: Unknown,
            last_dirty_timestamp: 42,
            health: crate::Health::Passing,
            takeover: None,
        }]
    );
}

#[test]
fn take_changes_empties_the_outbox() {
    let mut registry = registry();
    registry.register(instance("orders", "o1"), Origin::Client, 0);
    assert_eq!(registry.take_changes().len(), 1);
    assert!(registry.take_changes().is_empty());
}

#[test]
fn renew_yields_renewed_without_moving_the_version() {
    let mut registry = quiet(registry());
    let version = registry.version();
    heartbeat(&mut registry, "orders", "o1", 1_000);
    assert_eq!(kinds(&registry.take_changes()), vec![ChangeKind::Renewed]);
    assert_eq!(registry.version(), version);
}

#[test]
fn renew_of_an_unknown_instance_yields_nothing() {
    let mut registry = registry();
    heartbeat(&mut registry, "orders", "nobody", 1_000);
    assert!(registry.take_changes().is_empty());
}

#[test]
fn peer_writes_are_marked_as_peer_origin() {
    let mut registry = registry();
    registry.register(instance("orders", "o1"), Origin::Peer, 0);
    registry.renew("orders", "o1", None, None, Origin::Peer, 1);
    registry.cancel("orders", "o1", Origin::Peer, 2);
    let origins: Vec<Origin> = registry.take_changes().iter().map(|c| c.origin).collect();
    assert_eq!(origins, vec![Origin::Peer; 3]);
}

#[test]
fn cancel_yields_cancelled_with_the_status_the_instance_had() {
    let mut registry = quiet(registry());
    assert!(registry.cancel("orders", "o1", Origin::Client, 5));
    let changes = registry.take_changes();
    assert_eq!(kinds(&changes), vec![ChangeKind::Cancelled]);
    assert_eq!(changes[0].status, Up);
}

#[test]
fn cancel_of_an_unknown_instance_yields_nothing() {
    let mut registry = registry();
    assert!(!registry.cancel("orders", "nobody", Origin::Client, 5));
    assert!(registry.take_changes().is_empty());
}

#[test]
fn eviction_yields_evicted_per_lease() {
    let mut registry = quiet(expiring_registry());
    let report = registry.evict(1_000_000, 0, 7);
    assert_eq!(report.evicted.len(), 1);
    assert_eq!(kinds(&registry.take_changes()), vec![ChangeKind::Evicted]);
}

#[test]
fn status_override_yields_overridden_with_the_new_status() {
    let mut registry = quiet(registry());
    registry.set_status_override("orders", "o1", OutOfService, None, Origin::Client, 1);
    let changes = registry.take_changes();
    assert_eq!(kinds(&changes), vec![ChangeKind::StatusOverridden]);
    assert_eq!(changes[0].status, OutOfService);
    assert_eq!(changes[0].overridden_status, OutOfService);
}

#[test]
fn override_removal_yields_override_removed() {
    let mut registry = registry();
    registry.register(instance("orders", "o1"), Origin::Client, 0);
    registry.set_status_override("orders", "o1", OutOfService, None, Origin::Client, 1);
    registry.take_changes();
    registry.delete_status_override("orders", "o1", None, None, Origin::Client, 2);
    let changes = registry.take_changes();
    assert_eq!(kinds(&changes), vec![ChangeKind::StatusOverrideRemoved]);
    assert_eq!(changes[0].overridden_status, Unknown);
}

#[test]
fn status_override_that_changes_nothing_yields_nothing() {
    let mut registry = quiet(registry());
    registry.set_status_override("orders", "o1", Up, None, Origin::Client, 1);
    assert!(registry.take_changes().is_empty());
}

#[test]
fn metadata_update_yields_metadata_updated() {
    let mut registry = quiet(registry());
    registry
        .update_metadata("orders", "o1", vec![("zone".into(), "a".into())], 1)
        .unwrap();
    assert_eq!(
        kinds(&registry.take_changes()),
        vec![ChangeKind::MetadataUpdated]
    );
}

#[test]
fn every_visible_change_moves_the_version_and_renews_do_not() {
    assert!(ChangeKind::Registered.is_visible());
    assert!(ChangeKind::Evicted.is_visible());
    assert!(!ChangeKind::Renewed.is_visible());
}

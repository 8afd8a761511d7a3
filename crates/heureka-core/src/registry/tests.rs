//! The writes of §6.3–6.7 and §3.9–3.13: register, renew, cancel, status overrides, metadata.

use crate::model::ActionType;
use crate::model::InstanceStatus::{Down, OutOfService, Unknown, Up};
use crate::registry::{Origin, RenewOutcome};
use crate::test_util::{
    expiring_registry, heartbeat, instance, instance_with_dirty, instance_with_status,
    register_all, registry, status_of,
};

// === register ===

#[test]
fn registered_instance_is_up_and_added() {
    let mut registry = registry();
    register_all(&mut registry, &[("orders", "o1")], 5);
    let stored = registry.instance("ORDERS", "o1", 5).unwrap();
    assert_eq!(stored.status, Up);
    assert_eq!(stored.action_type, Some(ActionType::Added));
    assert_eq!(stored.last_updated_timestamp, 5);
    assert_eq!(stored.lease_info.service_up_timestamp, 5);
}

#[test]
fn app_names_are_upper_cased_on_every_entry_point() {
    let mut registry = registry();
    let mut lower = instance("x", "o1");
    lower.app = "orders".to_owned();
    registry.register(lower, Origin::Client, 0);
    assert_eq!(registry.application("Orders").unwrap().name, "ORDERS");
    assert_eq!(registry.instance("orders", "o1", 0).unwrap().app, "ORDERS");
    assert_eq!(
        heartbeat(&mut registry, "oRdErS", "o1", 1),
        RenewOutcome::Renewed
    );
    assert!(registry.cancel("orders", "o1", Origin::Client, 2));
}

#[test]
fn title_case_app_names_are_found_under_the_name_they_registered_with() {
    // Issue 7, defect 5: `ǅ` was stored as `Ǆ` but looked up as `ǅ`, so renews got 404.
    let mut registry = registry();
    let mut title_case = instance("x", "o1");
    title_case.app = "ǅ".to_owned();
    registry.register(title_case, Origin::Client, 0);
    assert_eq!(
        heartbeat(&mut registry, "ǅ", "o1", 1),
        RenewOutcome::Renewed
    );
    assert_eq!(registry.instance("ǅ", "o1", 1).unwrap().app, "Ǆ");
    assert!(registry.application("ǅ").is_some());
}

#[test]
fn instance_ids_are_case_sensitive() {
    let mut registry = registry();
    register_all(&mut registry, &[("a", "Node-1")], 0);
    assert!(registry.instance("a", "node-1", 0).is_none());
    assert_eq!(
        heartbeat(&mut registry, "a", "node-1", 1),
        RenewOutcome::NotFound
    );
}

#[test]
fn register_keeps_existing_when_its_dirty_timestamp_is_newer() {
    let mut registry = registry();
    registry.register(instance_with_dirty("a", "a1", 200), Origin::Client, 0);
    let mut older = instance_with_dirty("a", "a1", 100);
    older.ip_addr = "10.9.9.9".to_owned();
    registry.register(older, Origin::Client, 10);
    let stored = registry.instance("a", "a1", 10).unwrap();
    assert_eq!(
        (stored.ip_addr.as_str(), stored.last_dirty_timestamp),
        ("10.0.0.1", 200)
    );
    assert_eq!(
        stored.lease_info.registration_timestamp, 10,
        "a new lease is created anyway"
    );
}

#[test]
fn register_with_equal_dirty_timestamp_replaces_existing() {
    let mut registry = registry();
    registry.register(instance_with_dirty("a", "a1", 100), Origin::Client, 0);
    let mut same_age = instance_with_dirty("a", "a1", 100);
    same_age.ip_addr = "10.9.9.9".to_owned();
    registry.register(same_age, Origin::Client, 10);
    assert_eq!(
        registry.instance("a", "a1", 10).unwrap().ip_addr,
        "10.9.9.9"
    );
}

#[test]
fn reregistration_resets_registration_but_keeps_service_up_time() {
    let mut registry = registry();
    register_all(&mut registry, &[("a", "a1")], 5);
    register_all(&mut registry, &[("a", "a1")], 50);
    let lease_info = registry.instance("a", "a1", 50).unwrap().lease_info;
    assert_eq!(
        (
            lease_info.registration_timestamp,
            lease_info.service_up_timestamp
        ),
        (50, 5)
    );
}

#[test]
fn instance_registered_down_has_no_service_up_time() {
    let mut registry = registry();
    registry.register(instance_with_status("a", "a1", Down), Origin::Client, 5);
    assert_eq!(
        registry
            .instance("a", "a1", 5)
            .unwrap()
            .lease_info
            .service_up_timestamp,
        0
    );
}

#[test]
fn operator_out_of_service_survives_client_reregistration() {
    let mut registry = registry();
    register_all(&mut registry, &[("a", "a1")], 0);
    registry.set_status_override("a", "a1", OutOfService, None, Origin::Client, 10);
    register_all(&mut registry, &[("a", "a1")], 20);
    let stored = registry.instance("a", "a1", 20).unwrap();
    assert_eq!(
        (stored.status, stored.overridden_status),
        (OutOfService, OutOfService)
    );
}

#[test]
fn operator_out_of_service_survives_heartbeats() {
    let mut registry = registry();
    register_all(&mut registry, &[("a", "a1")], 0);
    registry.set_status_override("a", "a1", OutOfService, None, Origin::Client, 10);
    assert_eq!(
        heartbeat(&mut registry, "a", "a1", 40),
        RenewOutcome::Renewed
    );
    assert_eq!(status_of(&registry, "a", "a1"), Some(OutOfService));
}

#[test]
fn client_reregistering_down_goes_down_despite_override() {
    let mut registry = registry();
    register_all(&mut registry, &[("a", "a1")], 0);
    registry.set_status_override("a", "a1", OutOfService, None, Origin::Client, 10);
    registry.register(instance_with_status("a", "a1", Down), Origin::Client, 20);
    assert_eq!(status_of(&registry, "a", "a1"), Some(Down));
}

/// Eureka's `LeaseExistsRule` would keep OUT_OF_SERVICE here; it depends on the order writes
/// arrive in, so every server could not derive the same status from the same writes
/// (`merge::status_of`, docs/compat.md).
#[test]
fn client_reregistering_up_after_reporting_out_of_service_itself_is_up() {
    let mut registry = registry();
    registry.register(
        instance_with_status("a", "a1", OutOfService),
        Origin::Client,
        0,
    );
    register_all(&mut registry, &[("a", "a1")], 10);
    assert_eq!(status_of(&registry, "a", "a1"), Some(Up));
}

#[test]
fn peer_reregistering_up_replaces_out_of_service_without_override() {
    let mut registry = registry();
    registry.register(
        instance_with_status("a", "a1", OutOfService),
        Origin::Client,
        0,
    );
    registry.register(instance("a", "a1"), Origin::Peer, 10);
    assert_eq!(status_of(&registry, "a", "a1"), Some(Up));
}

#[test]
fn replicated_override_seeds_the_override_map() {
    let mut registry = registry();
    let replicated = crate::Instance {
        overridden_status: OutOfService,
        ..instance("a", "a1")
    };
    registry.register(replicated, Origin::Peer, 0);
    assert_eq!(status_of(&registry, "a", "a1"), Some(OutOfService));
    assert_eq!(
        registry.status_overrides(0),
        vec![("a1".to_owned(), OutOfService)]
    );
}

#[test]
fn register_bumps_the_version() {
    let mut registry = registry();
    let before = registry.version();
    register_all(&mut registry, &[("a", "a1")], 0);
    assert!(registry.version() > before);
}

// === renew ===

#[test]
fn renew_of_unknown_instance_is_not_found() {
    let mut registry = registry();
    assert_eq!(
        heartbeat(&mut registry, "a", "a1", 0),
        RenewOutcome::NotFound
    );
}

#[test]
fn plain_renew_does_not_bump_the_version() {
    let mut registry = registry();
    register_all(&mut registry, &[("a", "a1")], 0);
    let before = registry.version();
    heartbeat(&mut registry, "a", "a1", 30_000);
    assert_eq!(registry.version(), before);
}

#[test]
fn renew_extends_the_lease() {
    let mut registry = expiring_registry();
    register_all(&mut registry, &[("a", "a1")], 0);
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
    let mut registry = registry();
    registry.register(instance_with_dirty("a", "a1", 100), Origin::Client, 0);
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
    let mut registry = registry();
    registry.register(instance_with_dirty("a", "a1", 100), Origin::Client, 0);
    registry.renew("a", "a1", Some(200), Some(OutOfService), Origin::Client, 10);
    assert!(registry.status_overrides(10).is_empty());
}

#[test]
fn renew_from_peer_with_older_timestamp_returns_registry_copy() {
    let mut registry = registry();
    registry.register(instance_with_dirty("a", "a1", 200), Origin::Client, 0);
    let RenewOutcome::RegistryNewer(ours) =
        registry.renew("a", "a1", Some(100), None, Origin::Peer, 10)
    else {
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
    let mut registry = registry();
    registry.register(instance_with_dirty("a", "a1", 200), Origin::Client, 0);
    assert_eq!(
        registry.renew("a", "a1", Some(100), None, Origin::Client, 10),
        RenewOutcome::Renewed
    );
}

#[test]
fn renew_with_equal_timestamp_is_renewed() {
    let mut registry = registry();
    registry.register(instance_with_dirty("a", "a1", 200), Origin::Client, 0);
    assert_eq!(
        registry.renew("a", "a1", Some(200), None, Origin::Peer, 10),
        RenewOutcome::Renewed
    );
}

#[test]
fn status_flip_on_renew_is_a_modified_change() {
    // A peer's override lands in the map while the instance is still UP; the next heartbeat's
    // rules flip it, which Eureka does silently and we record.
    let mut registry = registry();
    registry.register(instance_with_dirty("a", "a1", 100), Origin::Client, 0);
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
    let mut registry = registry();
    register_all(&mut registry, &[("a", "a1")], 0);
    registry.set_status_override("a", "a1", OutOfService, None, Origin::Client, 10);
    registry.delete_status_override("a", "a1", None, None, Origin::Client, 20);
    assert_eq!(status_of(&registry, "a", "a1"), Some(Unknown));
    assert_eq!(
        heartbeat(&mut registry, "a", "a1", 30),
        RenewOutcome::NotFound
    );
    register_all(&mut registry, &[("a", "a1")], 40);
    assert_eq!(status_of(&registry, "a", "a1"), Some(Up));
}

// === cancel ===

#[test]
fn cancel_removes_the_instance() {
    let mut registry = registry();
    register_all(&mut registry, &[("a", "a1")], 0);
    assert!(registry.cancel("a", "a1", Origin::Client, 10));
    assert!(registry.instance("a", "a1", 10).is_none());
}

#[test]
fn cancel_of_unknown_instance_is_false() {
    let mut registry = registry();
    assert!(!registry.cancel("a", "a1", Origin::Peer, 0));
}

#[test]
fn cancel_forgets_the_status_override() {
    let mut registry = registry();
    register_all(&mut registry, &[("a", "a1")], 0);
    registry.set_status_override("a", "a1", OutOfService, None, Origin::Client, 10);
    registry.cancel("a", "a1", Origin::Client, 20);
    register_all(&mut registry, &[("a", "a1")], 30);
    assert_eq!(status_of(&registry, "a", "a1"), Some(Up));
}

// === status overrides ===

#[test]
fn status_override_sets_status_and_records_override() {
    let mut registry = registry();
    register_all(&mut registry, &[("a", "a1")], 0);
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
    let mut registry = registry();
    registry.register(instance_with_dirty("a", "a1", 900), Origin::Client, 0);
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
    let mut registry = registry();
    register_all(&mut registry, &[("a", "a1")], 0);
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
    let mut registry = expiring_registry();
    register_all(&mut registry, &[("a", "a1")], 0);
    assert!(!registry.set_status_override("a", "a1", OutOfService, None, Origin::Client, 90_001));
}

#[test]
fn status_override_of_expired_lease_works_in_self_preservation() {
    let mut registry = registry();
    register_all(&mut registry, &[("a", "a1")], 0);
    assert!(registry.set_status_override("a", "a1", OutOfService, None, Origin::Client, 90_001));
}

#[test]
fn status_override_renews_without_counting_a_renew() {
    let mut registry = expiring_registry();
    register_all(&mut registry, &[("a", "a1")], 0);
    registry.set_status_override("a", "a1", OutOfService, None, Origin::Client, 60_000);
    assert!(registry.instance("a", "a1", 150_000).is_some());
    registry.roll_renews_bucket();
    assert_eq!(registry.self_preservation().renews_last_min, 0);
}

#[test]
fn delete_override_with_a_value_sets_that_status() {
    let mut registry = registry();
    register_all(&mut registry, &[("a", "a1")], 0);
    registry.set_status_override("a", "a1", OutOfService, None, Origin::Client, 10);
    assert!(registry.delete_status_override("a", "a1", Some(Up), None, Origin::Client, 20));
    let stored = registry.instance("a", "a1", 20).unwrap();
    assert_eq!((stored.status, stored.overridden_status), (Up, Unknown));
    assert!(registry.status_overrides(20).is_empty());
}

#[test]
fn delete_override_without_an_override_changes_nothing() {
    let mut registry = registry();
    register_all(&mut registry, &[("a", "a1")], 0);
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

// === metadata ===

#[test]
fn metadata_update_merges_and_reregisters() {
    let mut registry = registry();
    let mut with_metadata = instance("a", "a1");
    with_metadata
        .metadata
        .insert("zone".to_owned(), "z1".to_owned());
    registry.register(with_metadata, Origin::Client, 0);
    let before = registry.version();
    let entries = vec![
        ("team".to_owned(), "core".to_owned()),
        ("team".to_owned(), "ignored".to_owned()),
    ];
    assert_eq!(registry.update_metadata("a", "a1", entries, 50), Ok(true));
    let stored = registry.instance("a", "a1", 50).unwrap();
    assert_eq!(stored.metadata.get("zone").map(String::as_str), Some("z1"));
    assert_eq!(
        stored.metadata.get("team").map(String::as_str),
        Some("core")
    );
    assert_eq!(
        (
            stored.last_dirty_timestamp,
            stored.lease_info.registration_timestamp
        ),
        (0, 50)
    );
    assert!(registry.version() > before);
    assert_eq!(
        registry.self_preservation().expected_clients,
        2,
        "not a new registration"
    );
}

#[test]
fn metadata_update_of_unknown_instance_is_false() {
    let mut registry = registry();
    assert_eq!(
        registry.update_metadata("a", "a1", vec![("k".to_owned(), "v".to_owned())], 0),
        Ok(false)
    );
}

// === scale ===

#[test]
fn hundred_thousand_instances_register_renew_and_evict() {
    let mut registry = expiring_registry();
    for n in 0..100_000 {
        let app = format!("app{}", n % 1_000);
        registry.register(instance(&app, &format!("i{n}")), Origin::Client, 0);
    }
    for n in 0..100_000 {
        let app = format!("APP{}", n % 1_000);
        assert_eq!(
            heartbeat(&mut registry, &app, &format!("i{n}"), 30_000),
            RenewOutcome::Renewed
        );
    }
    assert_eq!(registry.registry_size(), 100_000);
    assert_eq!(registry.evict(200_000, 0, 3).evicted.len(), 15_000);
}

// === adopting a peer's copy ===

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

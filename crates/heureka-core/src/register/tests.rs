//! Register (§6.3): what a registration stores, the override it keeps, and the version it moves.

use crate::model::InstanceStatus::{Down, OutOfService, Up};
use crate::model::{ActionType, Millis};
use crate::origin::Origin;
use crate::outcomes::RenewOutcome;
use crate::registry::Registry;
use crate::test_util::{
    heartbeat, holding, instance, instance_with_dirty, instance_with_status,
    out_of_service_by_operator, register_all, registered_with_dirty, registry, status_of,
};

/// A registry holding instance `o1` registered at time 0 with `app` as its app name, as sent.
fn registered_as_app(app: &str) -> Registry {
    let mut registry = registry();
    let mut instance = instance("x", "o1");
    instance.app = app.to_owned();
    registry.register(instance, Origin::Client, 0);
    registry
}

/// `a/a1`, registered at 0 with dirty timestamp `stored` from 10.0.0.1, registered again at 10
/// from 10.9.9.9 with dirty timestamp `sent`.
fn reregistered_from_another_address(stored: Millis, sent: Millis) -> Registry {
    let mut registry = registered_with_dirty(stored);
    let mut moved = instance_with_dirty("a", "a1", sent);
    moved.ip_addr = "10.9.9.9".to_owned();
    registry.register(moved, Origin::Client, 10);
    registry
}

/// A registry holding `a/a1`, which reported OUT_OF_SERVICE itself at time 0.
fn reported_out_of_service() -> Registry {
    let mut registry = registry();
    registry.register(
        instance_with_status("a", "a1", OutOfService),
        Origin::Client,
        0,
    );
    registry
}

#[test]
fn registered_instance_is_up_and_added() {
    let registry = holding(registry(), &[("orders", "o1")], 5);
    let stored = registry.instance("ORDERS", "o1", 5).unwrap();
    assert_eq!(stored.status, Up);
    assert_eq!(stored.action_type, Some(ActionType::Added));
    assert_eq!(stored.last_updated_timestamp, 5);
    assert_eq!(stored.lease_info.service_up_timestamp, 5);
}

#[test]
fn app_names_are_upper_cased_on_every_entry_point() {
    let mut registry = registered_as_app("orders");
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
    let mut registry = registered_as_app("ǅ");
    assert_eq!(
        heartbeat(&mut registry, "ǅ", "o1", 1),
        RenewOutcome::Renewed
    );
    assert_eq!(registry.instance("ǅ", "o1", 1).unwrap().app, "Ǆ");
    assert!(registry.application("ǅ").is_some());
}

#[test]
fn instance_ids_are_case_sensitive() {
    let mut registry = holding(registry(), &[("a", "Node-1")], 0);
    assert!(registry.instance("a", "node-1", 0).is_none());
    assert_eq!(
        heartbeat(&mut registry, "a", "node-1", 1),
        RenewOutcome::NotFound
    );
}

#[test]
fn register_keeps_existing_when_its_dirty_timestamp_is_newer() {
    let registry = reregistered_from_another_address(200, 100);
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
    let registry = reregistered_from_another_address(100, 100);
    assert_eq!(
        registry.instance("a", "a1", 10).unwrap().ip_addr,
        "10.9.9.9"
    );
}

#[test]
fn reregistration_resets_registration_but_keeps_service_up_time() {
    let mut registry = holding(registry(), &[("a", "a1")], 5);
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
    let mut registry = out_of_service_by_operator();
    register_all(&mut registry, &[("a", "a1")], 20);
    let stored = registry.instance("a", "a1", 20).unwrap();
    assert_eq!(
        (stored.status, stored.overridden_status),
        (OutOfService, OutOfService)
    );
}

#[test]
fn operator_out_of_service_survives_heartbeats() {
    let mut registry = out_of_service_by_operator();
    assert_eq!(
        heartbeat(&mut registry, "a", "a1", 40),
        RenewOutcome::Renewed
    );
    assert_eq!(status_of(&registry, "a", "a1"), Some(OutOfService));
}

#[test]
fn client_reregistering_down_goes_down_despite_override() {
    let mut registry = out_of_service_by_operator();
    registry.register(instance_with_status("a", "a1", Down), Origin::Client, 20);
    assert_eq!(status_of(&registry, "a", "a1"), Some(Down));
}

/// Eureka's `LeaseExistsRule` would keep OUT_OF_SERVICE here; it depends on the order writes
/// arrive in, so every server could not derive the same status from the same writes
/// (`merge::status_of`, docs/compat.md).
#[test]
fn client_reregistering_up_after_reporting_out_of_service_itself_is_up() {
    let mut registry = reported_out_of_service();
    register_all(&mut registry, &[("a", "a1")], 10);
    assert_eq!(status_of(&registry, "a", "a1"), Some(Up));
}

#[test]
fn peer_reregistering_up_replaces_out_of_service_without_override() {
    let mut registry = reported_out_of_service();
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

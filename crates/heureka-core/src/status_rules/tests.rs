//! The override rules of §6.6, in their order, and the override map's idle expiry.

use std::cell::Cell;

use crate::model::InstanceStatus::{self, Down, OutOfService, Starting, Unknown, Up};
use crate::origin::Origin;
use crate::status_rules::{
    effective_status, OverrideMap, StatusInput, StatusRule, OVERRIDE_IDLE_EXPIRY_MS,
};

fn decide(
    own: InstanceStatus,
    overridden: Option<InstanceStatus>,
    existing: Option<InstanceStatus>,
    origin: Origin,
) -> (InstanceStatus, StatusRule) {
    effective_status(
        StatusInput {
            own,
            existing,
            origin,
        },
        || overridden,
    )
}

/// The decision for an instance reporting UP without an override, whose lease holds `existing`.
fn lease_rule(existing: InstanceStatus, origin: Origin) -> (InstanceStatus, StatusRule) {
    decide(Up, None, Some(existing), origin)
}

#[test]
fn client_reporting_down_wins_over_override() {
    let decision = decide(Down, Some(OutOfService), Some(Up), Origin::Client);
    assert_eq!(decision, (Down, StatusRule::DownOrStarting));
}

#[test]
fn starting_and_unknown_are_trusted_as_reported() {
    assert_eq!(decide(Starting, Some(Up), None, Origin::Client).0, Starting);
    assert_eq!(decide(Unknown, Some(Up), None, Origin::Client).0, Unknown);
}

#[test]
fn down_instance_does_not_read_the_override_map() {
    let read = Cell::new(false);
    let input = StatusInput {
        own: Down,
        existing: None,
        origin: Origin::Client,
    };
    effective_status(input, || {
        read.set(true);
        Some(Up)
    });
    assert!(!read.get());
}

#[test]
fn override_wins_over_client_reporting_up() {
    assert_eq!(
        decide(Up, Some(OutOfService), None, Origin::Client),
        (OutOfService, StatusRule::OverrideExists)
    );
}

#[test]
fn override_wins_for_peers_too() {
    assert_eq!(
        decide(Up, Some(OutOfService), None, Origin::Peer).0,
        OutOfService
    );
}

#[test]
fn existing_out_of_service_wins_over_client_up() {
    assert_eq!(
        lease_rule(OutOfService, Origin::Client),
        (OutOfService, StatusRule::LeaseExists)
    );
}

#[test]
fn existing_lease_rule_does_not_apply_to_peers() {
    assert_eq!(
        lease_rule(OutOfService, Origin::Peer),
        (Up, StatusRule::AlwaysMatch)
    );
}

#[test]
fn existing_down_lease_does_not_hold_back_client_up() {
    let decision = lease_rule(Down, Origin::Client);
    assert_eq!(decision, (Up, StatusRule::AlwaysMatch));
}

#[test]
fn override_expires_after_an_hour_without_access() {
    let mut overrides = OverrideMap::default();
    overrides.insert("a1", OutOfService, 0);
    assert_eq!(overrides.get("a1", OVERRIDE_IDLE_EXPIRY_MS + 1), None);
}

#[test]
fn reading_an_override_keeps_it_alive() {
    let mut overrides = OverrideMap::default();
    overrides.insert("a1", OutOfService, 0);
    assert_eq!(
        overrides.get("a1", OVERRIDE_IDLE_EXPIRY_MS),
        Some(OutOfService)
    );
    assert_eq!(
        overrides.get("a1", 2 * OVERRIDE_IDLE_EXPIRY_MS),
        Some(OutOfService)
    );
}

#[test]
fn idle_overrides_are_purged() {
    let mut overrides = OverrideMap::default();
    overrides.insert("old", OutOfService, 0);
    overrides.insert("young", Down, OVERRIDE_IDLE_EXPIRY_MS);
    overrides.purge_idle(OVERRIDE_IDLE_EXPIRY_MS + 1);
    assert_eq!(
        overrides.snapshot(OVERRIDE_IDLE_EXPIRY_MS + 1),
        vec![("young".to_owned(), Down)]
    );
}

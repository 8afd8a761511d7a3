//! The health checks' verdict against the instance's own status and the operator's override.

use super::*;
use crate::change::ChangeKind;
use crate::model::InstanceStatus::{Down, OutOfService, Starting, Up};
use crate::test_util::{expiring_registry, heartbeat, instance, instance_with_status, status_of};

fn registered(status: InstanceStatus) -> Registry {
    let mut registry = expiring_registry();
    registry.register(
        instance_with_status("ORDERS", "o1", status),
        Origin::Client,
        1_000,
    );
    registry
}

fn verdict(registry: &mut Registry, health: Health, now: Millis) -> HealthWrite {
    registry.set_health("ORDERS", "o1", health, Origin::Client, now)
}

fn status(registry: &Registry) -> Option<InstanceStatus> {
    status_of(registry, "ORDERS", "o1")
}

/// An UP instance, registered at 1_000, whose check failed at 2_000.
fn failing() -> Registry {
    let mut registry = registered(Up);
    verdict(&mut registry, Health::Failing, 2_000);
    registry
}

fn set_override(registry: &mut Registry, status: InstanceStatus, now: Millis) {
    registry.set_status_override("ORDERS", "o1", status, None, Origin::Client, now);
}

/// The status of an instance registered `own`, overridden `overridden` at 2_000, whose check
/// failed at 3_000.
fn overridden_then_failing(
    own: InstanceStatus,
    overridden: InstanceStatus,
) -> Option<InstanceStatus> {
    let mut registry = registered(own);
    set_override(&mut registry, overridden, 2_000);
    verdict(&mut registry, Health::Failing, 3_000);
    status(&registry)
}

/// Two servers holding `ORDERS/o1`, registered on `a` at 1_000 and copied to `b`.
fn two_servers() -> (Registry, Registry) {
    let mut a = expiring_registry();
    a.set_node_tag(1);
    let mut b = expiring_registry();
    b.set_node_tag(2);
    a.register(instance("ORDERS", "o1"), Origin::Client, 1_000);
    b.merge_copy(a.stamped_copy("ORDERS", "o1", 1_000).unwrap(), 1_000)
        .unwrap();
    (a, b)
}

#[test]
fn a_failing_check_turns_an_up_instance_down() {
    let mut registry = registered(Up);

    let written = verdict(&mut registry, Health::Failing, 2_000);

    assert_eq!(written, HealthWrite::Written { status: Down });
    assert_eq!(status(&registry), Some(Down));
}

#[test]
fn a_recovered_check_gives_the_instance_back_its_own_status() {
    let mut registry = failing();

    verdict(&mut registry, Health::Passing, 3_000);

    assert_eq!(status(&registry), Some(Up));
}

#[test]
fn an_operators_out_of_service_survives_the_checks_recovery() {
    let mut registry = failing();
    set_override(&mut registry, OutOfService, 3_000);

    verdict(&mut registry, Health::Passing, 4_000);

    assert_eq!(status(&registry), Some(OutOfService));
}

#[test]
fn an_out_of_service_override_beats_a_failing_check() {
    assert_eq!(
        overridden_then_failing(Up, OutOfService),
        Some(OutOfService)
    );
}

#[test]
fn the_instances_own_down_wins_over_a_passing_check() {
    let mut registry = failing();
    registry.register(
        instance_with_status("ORDERS", "o1", Down),
        Origin::Client,
        3_000,
    );

    verdict(&mut registry, Health::Passing, 4_000);

    assert_eq!(status(&registry), Some(Down));
}

#[test]
fn a_starting_instance_stays_starting_whatever_the_check_says() {
    let mut registry = registered(Starting);

    verdict(&mut registry, Health::Failing, 2_000);

    assert_eq!(status(&registry), Some(Starting));
}

#[test]
fn an_up_override_pins_the_instance_up_whatever_the_checks_say() {
    assert_eq!(overridden_then_failing(Down, Up), Some(Up));
}

#[test]
fn heartbeats_do_not_lift_a_failing_verdict() {
    let mut registry = failing();

    heartbeat(&mut registry, "ORDERS", "o1", 3_000);

    assert_eq!(status(&registry), Some(Down));
}

#[test]
fn a_registration_keeps_the_verdict_until_a_check_passes() {
    let mut registry = failing();

    registry.register(instance("ORDERS", "o1"), Origin::Client, 3_000);

    assert_eq!(status(&registry), Some(Down));
    assert_eq!(registry.health_of("ORDERS", "o1"), Some(Health::Failing));
}

#[test]
fn removing_the_override_of_a_failing_instance_leaves_it_down() {
    let mut registry = registered(Up);
    set_override(&mut registry, OutOfService, 2_000);
    verdict(&mut registry, Health::Failing, 3_000);

    registry.delete_status_override("ORDERS", "o1", Some(Up), None, Origin::Client, 4_000);

    assert_eq!(status(&registry), Some(Down));
}

#[test]
fn the_same_verdict_again_writes_nothing() {
    let mut registry = failing();
    registry.take_changes();

    let written = verdict(&mut registry, Health::Failing, 3_000);

    assert_eq!(written, HealthWrite::Unchanged);
    assert!(registry.take_changes().is_empty());
}

#[test]
fn a_passing_verdict_on_a_never_checked_instance_writes_nothing() {
    let mut registry = registered(Up);

    assert_eq!(
        verdict(&mut registry, Health::Passing, 2_000),
        HealthWrite::Unchanged
    );
}

#[test]
fn a_verdict_on_an_unknown_instance_is_not_found() {
    let mut registry = expiring_registry();

    assert_eq!(
        verdict(&mut registry, Health::Failing, 2_000),
        HealthWrite::NotFound
    );
}

#[test]
fn a_verdict_is_a_visible_change_that_replicates() {
    let mut registry = registered(Up);
    registry.take_changes();
    let version = registry.version();

    verdict(&mut registry, Health::Failing, 2_000);

    let changes = registry.take_changes();
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].kind, ChangeKind::HealthChanged);
    assert_eq!(changes[0].origin, Origin::Client);
    assert_eq!(changes[0].health, Health::Failing);
    assert_ne!(registry.version(), version);
}

#[test]
fn a_peer_takes_the_verdict_with_the_copy_and_reads_the_same_status() {
    let (mut a, mut b) = two_servers();

    verdict(&mut a, Health::Failing, 2_000);
    b.take_changes();
    b.merge_copy(a.stamped_copy("ORDERS", "o1", 2_000).unwrap(), 2_000)
        .unwrap();

    assert_eq!(status_of(&b, "ORDERS", "o1"), Some(Down));
    assert_eq!(b.take_changes()[0].kind, ChangeKind::HealthChanged);
}

#[test]
fn a_later_verdict_from_another_checker_wins_over_an_older_one() {
    let (mut a, mut b) = two_servers();
    verdict(&mut a, Health::Failing, 2_000);
    let failing = a.stamped_copy("ORDERS", "o1", 2_000).unwrap();
    b.merge_copy(failing.clone(), 2_000).unwrap();
    // The check moved to b, which found the instance healthy again.
    b.set_health("ORDERS", "o1", Health::Passing, Origin::Client, 3_000);

    b.merge_copy(failing, 4_000).unwrap();

    assert_eq!(status_of(&b, "ORDERS", "o1"), Some(Up));
}

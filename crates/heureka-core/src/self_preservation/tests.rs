//! E, T and the expiry switch of §6.8, including the spec's worked examples.

use crate::origin::Origin;
use crate::policy::RegistryPolicy;
use crate::registry::Registry;
use crate::renewal_counters::{lease_expiration_enabled, renews_threshold};
use crate::test_util::{heartbeat, holding, holding_a1, register_all, registry, registry_with};

/// Registers `n` clients and sends each two heartbeats (30 s interval), then rolls the minute.
fn standalone_server_with_clients(n: usize) -> Registry {
    let mut registry = registry();
    let ids: Vec<String> = (0..n).map(|i| format!("i{i}")).collect();
    for id in &ids {
        register_all(&mut registry, &[("app", id)], 0);
    }
    for now in [30_000, 60_000] {
        for id in &ids {
            heartbeat(&mut registry, "app", id, now);
        }
    }
    registry.roll_renews_bucket();
    registry
}

#[test]
fn threshold_is_e_times_renews_per_minute_times_percentage() {
    assert_eq!(renews_threshold(1, 30, 0.85), 1);
    assert_eq!(renews_threshold(2, 30, 0.85), 3);
    assert_eq!(renews_threshold(7, 30, 0.85), 11);
    assert_eq!(renews_threshold(10, 30, 0.85), 17);
    assert_eq!(renews_threshold(20, 30, 0.85), 34);
    assert_eq!(renews_threshold(10, 60, 0.85), 8);
}

#[test]
fn expiry_needs_renews_strictly_above_threshold() {
    assert!(!lease_expiration_enabled(true, 10, 10));
    assert!(lease_expiration_enabled(true, 10, 11));
}

#[test]
fn zero_threshold_disables_expiry() {
    assert!(!lease_expiration_enabled(true, 0, 1_000));
}

#[test]
fn disabled_self_preservation_always_expires() {
    assert!(lease_expiration_enabled(false, 0, 0));
}

#[test]
fn new_registry_starts_with_configured_expected_clients() {
    let policy = RegistryPolicy {
        expected_number_of_clients_sending_renews: 4,
        ..RegistryPolicy::default()
    };
    let registry = Registry::new(policy, 0);
    let numbers = registry.self_preservation();
    assert_eq!((numbers.expected_clients, numbers.renews_threshold), (4, 6));
}

#[test]
fn open_for_traffic_with_zero_counts_one() {
    let mut registry = Registry::new(RegistryPolicy::default(), 0);
    registry.open_for_traffic(0, 0);
    assert_eq!(registry.self_preservation().expected_clients, 1);
    registry.open_for_traffic(5, 0);
    assert_eq!(registry.self_preservation().expected_clients, 5);
}

#[test]
fn new_registration_increments_expected_clients() {
    let registry = holding_a1(registry());
    let numbers = registry.self_preservation();
    assert_eq!((numbers.expected_clients, numbers.renews_threshold), (2, 3));
}

#[test]
fn reregistration_does_not_increment_expected_clients() {
    let registry = holding(registry(), &[("a", "a1"), ("a", "a1")], 0);
    assert_eq!(registry.self_preservation().expected_clients, 2);
}

#[test]
fn expected_clients_at_zero_stay_zero_on_registration() {
    let policy = RegistryPolicy {
        expected_number_of_clients_sending_renews: 0,
        ..RegistryPolicy::default()
    };
    let mut registry = Registry::new(policy, 0);
    register_all(&mut registry, &[("a", "a1")], 0);
    assert_eq!(registry.self_preservation().expected_clients, 0);
}

#[test]
fn cancel_decrements_expected_clients() {
    let mut registry = holding(registry(), &[("a", "a1"), ("a", "a2")], 0);
    registry.cancel("a", "a1", Origin::Client, 1);
    assert_eq!(registry.self_preservation().expected_clients, 2);
}

#[test]
fn renews_count_only_after_the_bucket_rolls() {
    let mut registry = holding_a1(registry());
    heartbeat(&mut registry, "a", "a1", 1);
    assert_eq!(registry.self_preservation().renews_last_min, 0);
    registry.roll_renews_bucket();
    assert_eq!(registry.self_preservation().renews_last_min, 1);
    registry.roll_renews_bucket();
    assert_eq!(registry.self_preservation().renews_last_min, 0);
}

#[test]
fn failed_renews_are_not_counted() {
    let mut registry = registry();
    heartbeat(&mut registry, "a", "missing", 1);
    registry.roll_renews_bucket();
    assert_eq!(registry.self_preservation().renews_last_min, 0);
}

/// A standalone server with `clients` clients has this renews threshold and renews in the last
/// minute, and leases expire there or not.
fn assert_standalone_server(clients: usize, threshold_and_renews: (u32, u64), expiring: bool) {
    let numbers = standalone_server_with_clients(clients).self_preservation();
    assert_eq!(
        (numbers.renews_threshold, numbers.renews_last_min),
        threshold_and_renews
    );
    assert_eq!(numbers.lease_expiration_enabled, expiring);
}

#[test]
fn one_client_keeps_a_standalone_server_in_self_preservation() {
    let numbers = standalone_server_with_clients(1).self_preservation();
    assert_eq!(
        (
            numbers.expected_clients,
            numbers.renews_threshold,
            numbers.renews_last_min
        ),
        (2, 3, 2)
    );
    assert!(!numbers.lease_expiration_enabled);
}

#[test]
fn five_clients_still_in_self_preservation() {
    assert_standalone_server(5, (10, 10), false);
}

#[test]
fn six_clients_enable_lease_expiry() {
    assert_standalone_server(6, (11, 12), true);
}

#[test]
fn self_preservation_entered_when_renews_drop_below_threshold() {
    // Ten instances, E = 10, T = 17; two crash, so 16 renews arrive in the next minute.
    let mut registry = registry();
    let ids: Vec<String> = (0..10).map(|i| format!("i{i}")).collect();
    for id in &ids {
        register_all(&mut registry, &[("app", id)], 0);
    }
    registry.open_for_traffic(10, 0);
    for id in &ids {
        heartbeat(&mut registry, "app", id, 30_000);
        heartbeat(&mut registry, "app", id, 60_000);
    }
    registry.roll_renews_bucket();
    assert!(registry.self_preservation().lease_expiration_enabled);
    for id in &ids[2..] {
        heartbeat(&mut registry, "app", id, 90_000);
        heartbeat(&mut registry, "app", id, 120_000);
    }
    registry.roll_renews_bucket();
    let numbers = registry.self_preservation();
    assert_eq!(
        (numbers.renews_threshold, numbers.renews_last_min),
        (17, 16)
    );
    assert!(!numbers.lease_expiration_enabled);
}

#[test]
fn self_preservation_exited_when_renews_recover() {
    let mut registry = standalone_server_with_clients(6);
    registry.roll_renews_bucket();
    assert!(!registry.self_preservation().lease_expiration_enabled);
    for id in 0..6 {
        heartbeat(&mut registry, "app", &format!("i{id}"), 120_000);
        heartbeat(&mut registry, "app", &format!("i{id}"), 150_000);
    }
    registry.roll_renews_bucket();
    assert!(registry.self_preservation().lease_expiration_enabled);
}

/// Expected clients once `registry` opened for traffic with 10 and the threshold task then
/// counted `instance_count` instances.
fn expected_after_the_threshold_task(mut registry: Registry, instance_count: usize) -> u32 {
    registry.open_for_traffic(10, 0);
    registry.update_renewal_threshold_from(instance_count);
    registry.self_preservation().expected_clients
}

#[test]
fn threshold_task_adopts_a_count_above_85_percent() {
    assert_eq!(expected_after_the_threshold_task(registry(), 9), 9);
}

#[test]
fn threshold_task_never_drops_expected_clients_by_more_than_15_percent() {
    assert_eq!(expected_after_the_threshold_task(registry(), 8), 10);
}

#[test]
fn threshold_task_follows_the_count_when_self_preservation_is_off() {
    let policy = RegistryPolicy {
        enable_self_preservation: false,
        ..RegistryPolicy::default()
    };
    let expected = expected_after_the_threshold_task(registry_with(policy), 2);
    assert_eq!(expected, 2);
}

#[test]
fn threshold_task_counts_local_leases() {
    let mut registry = holding(registry(), &[("a", "a1"), ("a", "a2"), ("b", "b1")], 0);
    registry.open_for_traffic(1, 0);
    registry.update_renewal_threshold();
    assert_eq!(registry.self_preservation().expected_clients, 3);
}

#[test]
fn below_threshold_banner_waits_for_the_startup_grace() {
    let mut registry = Registry::new(RegistryPolicy::default(), 0);
    registry.open_for_traffic(1, 1_000);
    assert!(!registry.is_below_renew_threshold(301_000, 300_000));
    assert!(registry.is_below_renew_threshold(301_001, 300_000));
}
